import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCodeError } from '../../src/errors.js';
import { parseSnapshot } from '../../src/stores/parse-snapshot.js';
import { RedisCheckpointStore } from '../../src/stores/redis-checkpoint-store.js';
import { RedisSessionStore } from '../../src/stores/redis-session-store.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { makeSnapshot } from '../support/snapshot-fixtures.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { makeCheckpoint } from './checkpoint-fixtures.js';
import { connectTestRedis, randomKeyPrefix } from './redis-test-client.js';

// A dedicated redis-server: restarting the run's shared one would disturb every other test file.
describe('Redis stores across a Redis restart', () => {
  let server: RedisServerHandle;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    // Fail fast while Redis is down instead of queueing commands for ever.
    redis = connectTestRedis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  });

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it(
    'fails saves with PERSISTENCE_FAILED naming the session while Redis is down, then saves again',
    { timeout: 60_000 },
    async () => {
      const keyPrefix = randomKeyPrefix();
      const store = new RedisSessionStore({ redis, keyPrefix, pingTimeoutMs: 300 });
      const paddingBytes = 256 * 1024;
      let generation = 0;
      const failures: unknown[] = [];
      let saved = 0;
      let restarting = true;

      const saves = (async () => {
        // Keep saving through the restart and a little beyond it.
        let afterRestart = 0;
        while (restarting || afterRestart < 5) {
          generation += 1;
          try {
            await store.save(makeSnapshot('s1', generation, { paddingBytes }));
            saved += 1;
            if (!restarting) afterRestart += 1;
          } catch (error) {
            failures.push(error);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
      })();

      while (saved < 3) await new Promise((resolve) => setTimeout(resolve, 10));
      const restart = server.restart({ downMs: 700 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await store.ping()).toBe(false);
      await restart;
      restarting = false;
      await saves;

      expect(failures.length).toBeGreaterThan(0);
      for (const failure of failures) {
        expect(isCodeError(failure), `expected a CodeError, got ${String(failure)}`).toBe(true);
        expect(failure).toMatchObject({
          code: 'PERSISTENCE_FAILED',
          message: expect.stringMatching(/^failed to save generation \d+ of session s1 \(redis: [^)]+\)$/),
          details: { sessionId: 's1' },
        });
      }
      expect(await store.ping()).toBe(true);
      // The restarted Redis lost its data (no persistence); what it holds now is complete and the latest.
      const loaded = await store.load(sessionKey('tenant-a', 's1'));
      expect(loaded?.generation).toBe(generation);
      expect(loaded).toEqual(parseSnapshot(makeSnapshot('s1', generation, { paddingBytes }), 'expected'));
      expect(await store.list()).toEqual([sessionKey('tenant-a', 's1')]);
    },
  );

  it(
    'fails checkpoint saves with PERSISTENCE_FAILED naming the run while Redis is down',
    { timeout: 30_000 },
    async () => {
      const store = new RedisCheckpointStore({ redis, keyPrefix: randomKeyPrefix() });
      const session = sessionKey('tenant-a', 's1');
      await store.save(session, makeCheckpoint('run_1', 1));
      const restart = server.restart({ downMs: 700 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await expect(store.save(session, makeCheckpoint('run_1', 2))).rejects.toMatchObject({
        code: 'PERSISTENCE_FAILED',
        message: expect.stringMatching(/^failed to save the checkpoint of run run_1 \(redis: [^)]+\)$/),
        details: { runId: 'run_1', sessionId: 's1' },
      });
      await restart;
      await store.save(session, makeCheckpoint('run_1', 3));
      expect(await store.load(session, 'run_1')).toEqual(makeCheckpoint('run_1', 3));
    },
  );
});

describe('startRedisServer', () => {
  it('explains how to install redis-server when it is missing', async () => {
    await expect(startRedisServer({ binary: 'a3s-no-such-redis-server' })).rejects.toThrow(
      'redis-server is not installed: apt-get install -y redis-server (the tests need a real Redis)',
    );
  });
});
