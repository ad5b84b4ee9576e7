import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCodeError } from '../../src/errors.js';
import { parseSnapshot } from '../../src/stores/parse-snapshot.js';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { redisSessionKey } from '../../src/stores/redis-keys.js';
import { RedisSessionStore, type SessionFence } from '../../src/stores/redis-session-store.js';
import { sessionKey, type SessionKey } from '../../src/stores/session-key.js';
import { makeSnapshot } from '../support/snapshot-fixtures.js';
import { connectRedisTarget } from '../support/redis-target.js';
import { countExisting, deleteKeysWithPrefix, randomKeyPrefix } from './redis-test-client.js';

/** The key of session `id` of the fixtures' tenant. */
const k = (id: string): SessionKey => sessionKey('tenant-a', id);

describe('RedisSessionStore', () => {
  let redis: RedisClient;
  let keyPrefix: string;
  const extraClients: RedisClient[] = [];

  beforeEach(() => {
    redis = connectRedisTarget();
    keyPrefix = randomKeyPrefix();
  });

  afterEach(async () => {
    await deleteKeysWithPrefix(redis, keyPrefix);
    await Promise.all([redis, ...extraClients.splice(0)].map((client) => client.quit()));
  });

  function otherClient(): RedisClient {
    const client = connectRedisTarget();
    extraClients.push(client);
    return client;
  }

  it('keeps one hash per session under its tenant and id as hash tag, and a set of ids per tenant', async () => {
    const store = new RedisSessionStore({ redis, keyPrefix });
    await store.save(makeSnapshot('s1', 3));
    await store.save(makeSnapshot('s1', 1, { tenantId: 'tenant-b' }));
    expect(store.sessionKey(k('s1'))).toBe(`${keyPrefix}{tenant-a/s1}:snapshot`);
    expect(await redis.hgetall(`${keyPrefix}{tenant-a/s1}:snapshot`)).toMatchObject({ gen: '3', enc: 'json' });
    expect(await redis.hgetall(`${keyPrefix}{tenant-b/s1}:snapshot`)).toMatchObject({ gen: '1', enc: 'json' });
    expect(await redis.smembers(`${keyPrefix}tenant:{tenant-a}:sessions`)).toEqual(['s1']);
    expect((await redis.smembers(`${keyPrefix}tenants`)).sort()).toEqual(['tenant-a', 'tenant-b']);
    // No global set and no old-layout key is written.
    expect(await countExisting(redis, `${keyPrefix}sessions`, `${keyPrefix}session:s1`)).toBe(0);
    await store.delete(k('s1'));
    expect(
      await countExisting(redis, `${keyPrefix}{tenant-a/s1}:snapshot`, `${keyPrefix}tenant:{tenant-a}:sessions`),
    ).toBe(0);
    expect(await store.list()).toEqual([sessionKey('tenant-b', 's1')]);
  });

  it('refuses a stale generation from another writer and keeps the newer one readable', async () => {
    const newer = new RedisSessionStore({ redis, keyPrefix });
    const stale = new RedisSessionStore({ redis: otherClient(), keyPrefix });
    await newer.save(makeSnapshot('s1', 5));
    for (const generation of [3, 5]) {
      const error = await stale.save(makeSnapshot('s1', generation)).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({
        code: 'PERSISTENCE_FAILED',
        details: { sessionId: 's1', reason: 'stale_generation', generation, storedGeneration: 5 },
      });
      expect((error as Error).message).toBe(
        `refused to save generation ${generation} of session s1: the store already holds generation 5, written by another writer (stale_generation)`,
      );
    }
    expect(await stale.load(k('s1'))).toEqual(makeSnapshot('s1', 5));
    await stale.save(makeSnapshot('s1', 6));
    expect((await newer.load(k('s1')))?.generation).toBe(6);
  });

  it('fences writes on the owner lease epoch: a mismatch is refused, the matching epoch accepted', async () => {
    // The session's own epoch key: a fenced script touches keys of the session's hash slot only.
    const ownerKey = redisSessionKey(keyPrefix, k('s1'), 'epoch');
    let epoch = 3;
    const fence = (session: SessionKey): SessionFence | undefined =>
      session === k('s1') ? { ownerKey, epoch } : undefined;
    const store = new RedisSessionStore({ redis, keyPrefix, fence });

    // No lease at all: nobody owns the session, so nobody may write it.
    await expect(store.save(makeSnapshot('s1', 1))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      message:
        "refused to save generation 1 of session s1: this node's ownership epoch 3 is no longer current, no lease holds the session (fenced)",
      details: { sessionId: 's1', reason: 'fenced', epoch: 3, currentEpoch: null },
    });
    await redis.set(ownerKey, '3');
    await store.save(makeSnapshot('s1', 1));

    // Another node took over with epoch 4: this node's writes and deletes are refused.
    await redis.set(ownerKey, '4');
    await expect(store.save(makeSnapshot('s1', 2))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      message: expect.stringMatching(
        /^refused to save generation 2 of session s1: .*the lease is now at epoch 4 \(fenced\)$/,
      ),
      details: { sessionId: 's1', reason: 'fenced', epoch: 3, currentEpoch: '4' },
    });
    await expect(store.delete(k('s1'))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: { reason: 'fenced' },
    });
    expect((await store.load(k('s1')))?.generation).toBe(1);

    // The new owner (epoch 4) writes; a session without a fence is unaffected.
    epoch = 4;
    await store.save(makeSnapshot('s1', 2));
    await store.save(makeSnapshot('s2', 1));
    expect((await store.load(k('s1')))?.generation).toBe(2);
    await store.delete(k('s1'));
    expect(await store.list()).toEqual([k('s2')]);
  });

  it('compresses a large snapshot, stores it smaller and reads it back', async () => {
    const store = new RedisSessionStore({ redis, keyPrefix });
    const large = makeSnapshot('big', 1, { paddingBytes: 1024 * 1024 });
    await store.save(large);
    const key = store.sessionKey(k('big'));
    expect(await redis.hget(key, 'enc')).toBe('gzip');
    expect(await redis.hstrlen(key, 'data')).toBeLessThan(JSON.stringify(large).length / 10);
    expect(await store.load(k('big'))).toEqual(large);

    await store.save(makeSnapshot('small', 1));
    expect(await redis.hget(store.sessionKey(k('small')), 'enc')).toBe('json');

    const plain = new RedisSessionStore({ redis, keyPrefix, compressAboveBytes: Number.POSITIVE_INFINITY });
    await plain.save(makeSnapshot('big', 2, { paddingBytes: 1024 * 1024 }));
    expect(await redis.hget(key, 'enc')).toBe('json');
    expect(await store.load(k('big'))).toEqual(makeSnapshot('big', 2, { paddingBytes: 1024 * 1024 }));
  });

  it('ends with the highest generation when two clients save increasing generations concurrently', async () => {
    const stores = [
      new RedisSessionStore({ redis, keyPrefix }),
      new RedisSessionStore({ redis: otherClient(), keyPrefix }),
    ];
    const generations = Array.from({ length: 60 }, (_, index) => index + 1);
    const results = await Promise.allSettled(
      generations.map((generation) =>
        stores[generation % 2]!.save(makeSnapshot('shared', generation, { paddingBytes: 4096 })),
      ),
    );
    expect(results.at(-1)?.status).toBe('fulfilled');
    for (const result of results) {
      if (result.status === 'rejected')
        expect(result.reason).toMatchObject({ code: 'PERSISTENCE_FAILED', details: { reason: 'stale_generation' } });
    }
    expect(await stores[0]!.load(k('shared'))).toEqual(makeSnapshot('shared', 60, { paddingBytes: 4096 }));
  });

  it.each([
    ['compressed', 64 * 1024],
    ['uncompressed', Number.POSITIVE_INFINITY],
  ])(
    'never shows a partial snapshot to a reader while a writer saves large ones (%s)',
    { timeout: 60_000 },
    async (_label, compressAboveBytes) => {
      const paddingBytes = 768 * 1024;
      const writer = new RedisSessionStore({ redis, keyPrefix, compressAboveBytes });
      const reader = new RedisSessionStore({ redis: otherClient(), keyPrefix });
      const expected = new Map<number, unknown>();
      const wantedReads = 40;
      let reads = 0;
      let lastGeneration = 0;
      let writing = true;
      let stop = false;
      // The writer keeps replacing the snapshot until the reader has seen enough of it.
      const writes = (async () => {
        try {
          while (!stop && (reads < wantedReads || lastGeneration < 10)) {
            await writer.save(makeSnapshot('s1', lastGeneration + 1, { paddingBytes }));
            lastGeneration += 1;
          }
        } finally {
          writing = false;
        }
      })();
      let previous = 0;
      try {
        while (writing) {
          const loaded = await reader.load(k('s1'));
          if (loaded === undefined) {
            // Once a generation was visible, the session never disappears in the middle of a replacement.
            expect(previous).toBe(0);
            continue;
          }
          // A complete generation: exactly what the writer saved for it, never older than the last read.
          expect(loaded.generation).toBeGreaterThanOrEqual(previous);
          previous = loaded.generation;
          if (!expected.has(loaded.generation)) {
            expected.set(
              loaded.generation,
              parseSnapshot(makeSnapshot('s1', loaded.generation, { paddingBytes }), 'expected'),
            );
          }
          expect(loaded).toEqual(expected.get(loaded.generation));
          reads += 1;
        }
      } catch (error) {
        // Stop the writer before failing, so its next save does not outlive the test.
        stop = true;
        await writes.catch(() => undefined);
        throw error;
      }
      await writes;
      expect(reads).toBeGreaterThanOrEqual(wantedReads);
      expect(expected.size).toBeGreaterThan(1);
      expect((await reader.load(k('s1')))?.generation).toBe(lastGeneration);
    },
  );

  it('rejects stored data that does not match its key or fields', async () => {
    const store = new RedisSessionStore({ redis, keyPrefix });
    const key = (id: string): string => store.sessionKey(k(id));
    const text = JSON.stringify(makeSnapshot('s1', 2));
    await redis.hset(key('other'), 'gen', '2', 'enc', 'json', 'data', text);
    await expect(store.load(k('other'))).rejects.toMatchObject({
      code: 'SNAPSHOT_INVALID',
      message: /holds session "s1" of tenant "tenant-a", not "other"/,
    });
    await redis.hset(key('s1'), 'gen', '1', 'enc', 'json', 'data', text);
    await expect(store.load(k('s1'))).rejects.toMatchObject({
      code: 'SNAPSHOT_INVALID',
      message: /holds generation 2 but its gen field is "1"/,
    });
    await redis.hset(key('s1'), 'gen', '2', 'enc', 'brotli');
    await expect(store.load(k('s1'))).rejects.toMatchObject({
      code: 'SNAPSHOT_INVALID',
      message: /unknown \("brotli"\) encoding marker/,
    });
    await redis.hset(key('s1'), 'enc', 'gzip');
    await expect(store.load(k('s1'))).rejects.toMatchObject({
      code: 'SNAPSHOT_INVALID',
      message: /is not valid gzip data/,
    });
    await redis.hset(key('s1'), 'data', gzipSync(Buffer.from(text)));
    expect(await store.load(k('s1'))).toEqual(makeSnapshot('s1', 2));
    await redis.hdel(key('s1'), 'data');
    await expect(store.load(k('s1'))).rejects.toMatchObject({ code: 'SNAPSHOT_INVALID', message: /has no data field/ });
  });

  it('leaves the caller-owned client open on close and refuses further use', async () => {
    const store = new RedisSessionStore({ redis, keyPrefix });
    await store.close();
    expect(await redis.ping()).toBe('PONG');
    expect(await store.ping()).toBe(false);
    await expect(store.save(makeSnapshot('s1', 1))).rejects.toMatchObject({ code: 'PERSISTENCE_FAILED' });
  });

  it('maps Redis reply errors to PERSISTENCE_FAILED naming the session', async () => {
    const store = new RedisSessionStore({ redis, keyPrefix });
    // A key of the wrong type makes the script fail inside Redis.
    await redis.set(store.sessionKey(k('s1')), 'not a hash');
    const error = await store.save(makeSnapshot('s1', 1)).catch((thrown: unknown) => thrown);
    expect(isCodeError(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'PERSISTENCE_FAILED',
      message: 'failed to save generation 1 of session s1 (redis: WRONGTYPE)',
      details: { sessionId: 's1', cause: 'WRONGTYPE' },
    });
  });
});
