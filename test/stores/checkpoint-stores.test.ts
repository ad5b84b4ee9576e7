import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileCheckpointStore } from '../../src/stores/file-checkpoint-store.js';
import { MemoryCheckpointStore } from '../../src/stores/memory-checkpoint-store.js';
import { parseCheckpoint } from '../../src/stores/parse-checkpoint.js';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { DEFAULT_CHECKPOINT_TTL_SECONDS, RedisCheckpointStore } from '../../src/stores/redis-checkpoint-store.js';
import type { SessionFence } from '../../src/stores/redis-session-store.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { makeCheckpoint } from './checkpoint-fixtures.js';
import { runCheckpointStoreContract } from './checkpoint-store-contract.js';
import { connectRedisTarget } from '../support/redis-target.js';
import { deleteKeysWithPrefix, randomKeyPrefix } from './redis-test-client.js';

/** The key of the fixtures' session. */
const S = sessionKey('tenant-a', 's1');

runCheckpointStoreContract('memory', async () => ({ store: new MemoryCheckpointStore() }), {
  kind: 'memory',
  shared: false,
  storesText: false,
});

runCheckpointStoreContract(
  'file',
  async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'a3s-checkpoints-'));
    const dir = path.join(root, 'checkpoints');
    const store = new FileCheckpointStore({ dir });
    await store.init();
    return {
      store,
      writeRaw: async (runId, text) => {
        await mkdir(path.join(dir, 'tenant-a'), { recursive: true });
        await writeFile(path.join(dir, 'tenant-a', `s1~${runId}.json`), text);
      },
      dispose: () => rm(root, { recursive: true, force: true }),
    };
  },
  { kind: 'file', shared: false, storesText: true },
);

runCheckpointStoreContract(
  'redis',
  async () => {
    const redis = connectRedisTarget();
    const keyPrefix = randomKeyPrefix();
    const store = new RedisCheckpointStore({ redis, keyPrefix });
    return {
      store,
      writeRaw: async (runId, text) => {
        await redis.hset(store.checkpointKey(S, runId), 'enc', 'json', 'data', text);
      },
      dispose: async () => {
        await deleteKeysWithPrefix(redis, keyPrefix);
        await redis.quit();
      },
    };
  },
  { kind: 'redis', shared: true, storesText: true },
);

describe('parseCheckpoint', () => {
  it('names the source, the failing paths and the version it reads', () => {
    expect(() => parseCheckpoint({ schema_version: 3 }, 'redis key k')).toThrow(
      'unsupported checkpoint schema_version 3 in redis key k; this server reads version 1',
    );
    expect(() => parseCheckpoint({ schema_version: 1 }, 'test')).toThrow(
      /^invalid checkpoint in test: run_id: .+ \(and \d+ more\)$/,
    );
    expect(() => parseCheckpoint(null, 'test')).toThrow(/\(root\)/);
  });

  it('accepts a valid checkpoint unchanged', () => {
    expect(parseCheckpoint(makeCheckpoint('run_1', 2), 'test')).toEqual(makeCheckpoint('run_1', 2));
  });
});

describe('FileCheckpointStore', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'a3s-checkpoints-'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('removes stale temp files on init and never maps a run id outside its directory', async () => {
    const dir = path.join(root, 'checkpoints');
    const first = new FileCheckpointStore({ dir });
    await first.save(S, makeCheckpoint('run_1', 1));
    await writeFile(path.join(dir, 'tenant-a', '.s1~run_1.0123456789abcdef.tmp'), '{"partial":');
    await first.close();

    const store = new FileCheckpointStore({ dir });
    await store.init();
    expect(await readdir(dir)).toEqual(['tenant-a']);
    expect(await readdir(path.join(dir, 'tenant-a'))).toEqual(['s1~run_1.json']);
    for (const id of ['../escape', '..', '.hidden', 'a/b', '']) {
      expect(await store.load(S, id)).toBeUndefined();
      await store.delete(S, id);
      await expect(store.save(S, makeCheckpoint(id, 1))).rejects.toMatchObject({ code: 'SNAPSHOT_INVALID' });
    }
    expect(await readdir(root)).toEqual(['checkpoints']);
    expect(await readdir(path.join(dir, 'tenant-a'))).toEqual(['s1~run_1.json']);
    await store.close();
  });
});

describe('RedisCheckpointStore', () => {
  let redis: RedisClient;
  let keyPrefix: string;

  beforeEach(() => {
    redis = connectRedisTarget();
    keyPrefix = randomKeyPrefix();
  });

  afterEach(async () => {
    await deleteKeysWithPrefix(redis, keyPrefix);
    await redis.quit();
  });

  it("keys checkpoints by run id under the session's hash tag and expires them after the TTL (7 days by default)", async () => {
    const store = new RedisCheckpointStore({ redis, keyPrefix });
    await store.save(S, makeCheckpoint('run_1', 1));
    expect(store.checkpointKey(S, 'run_1')).toBe(`${keyPrefix}{tenant-a/s1}:checkpoint:run_1`);
    expect(await redis.exists(`${keyPrefix}checkpoint:run_1`)).toBe(0);
    const ttl = await redis.ttl(`${keyPrefix}{tenant-a/s1}:checkpoint:run_1`);
    expect(ttl).toBeGreaterThan(DEFAULT_CHECKPOINT_TTL_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(DEFAULT_CHECKPOINT_TTL_SECONDS);

    const forever = new RedisCheckpointStore({ redis, keyPrefix, ttlSeconds: 0 });
    await forever.save(S, makeCheckpoint('run_2', 1));
    expect(await redis.ttl(`${keyPrefix}{tenant-a/s1}:checkpoint:run_2`)).toBe(-1);
    expect(() => new RedisCheckpointStore({ redis, keyPrefix, ttlSeconds: -1 })).toThrow(/ttlSeconds/);
  });

  it('compresses large checkpoints and reads them back', async () => {
    const store = new RedisCheckpointStore({ redis, keyPrefix });
    const large = makeCheckpoint('run_big', 3, { paddingBytes: 512 * 1024 });
    await store.save(S, large);
    const key = store.checkpointKey(S, 'run_big');
    expect(await redis.hget(key, 'enc')).toBe('gzip');
    expect(await redis.hstrlen(key, 'data')).toBeLessThan(JSON.stringify(large).length / 10);
    expect(await store.load(S, 'run_big')).toEqual(large);
  });

  it('is readable by a store on another client (shared across nodes)', async () => {
    const other = connectRedisTarget();
    try {
      await new RedisCheckpointStore({ redis, keyPrefix }).save(S, makeCheckpoint('run_1', 4));
      expect(await new RedisCheckpointStore({ redis: other, keyPrefix }).load(S, 'run_1')).toEqual(
        makeCheckpoint('run_1', 4),
      );
    } finally {
      await other.quit();
    }
  });

  it("fences saves on the owner lease epoch of the checkpoint's session", async () => {
    const ownerKey = `${keyPrefix}{tenant-a/s1}:epoch`;
    let epoch = 3;
    const fence = (session: string): SessionFence | undefined => (session === S ? { ownerKey, epoch } : undefined);
    const store = new RedisCheckpointStore({ redis, keyPrefix, fence });

    // No lease at all: nobody owns the session, so nobody may checkpoint its runs.
    await expect(store.save(S, makeCheckpoint('run_1', 1))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      message:
        "refused to save the checkpoint of run run_1: this node's ownership epoch 3 of session s1 is no longer current, no lease holds the session (fenced)",
      details: { runId: 'run_1', sessionId: 's1', reason: 'fenced', epoch: 3, currentEpoch: null },
    });
    expect(await store.load(S, 'run_1')).toBeUndefined();
    await redis.set(ownerKey, '3');
    await store.save(S, makeCheckpoint('run_1', 1));

    // Another node took over with epoch 4: this node's later round cannot replace what the new owner resumes from.
    await redis.set(ownerKey, '4');
    await expect(store.save(S, makeCheckpoint('run_1', 2))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      message: expect.stringMatching(/the lease is now at epoch 4 \(fenced\)$/),
      details: { reason: 'fenced', epoch: 3, currentEpoch: '4' },
    });
    expect((await store.load(S, 'run_1'))?.turn).toBe(1);

    // The new owner (epoch 4) saves; a session without a fence is unaffected.
    epoch = 4;
    await store.save(S, makeCheckpoint('run_1', 3));
    const s2 = sessionKey('tenant-a', 's2');
    await store.save(s2, makeCheckpoint('run_2', 1, { sessionId: 's2' }));
    expect((await store.load(S, 'run_1'))?.turn).toBe(3);
    expect((await store.load(s2, 'run_2'))?.turn).toBe(1);
  });

  it('leaves the caller-owned client open on close', async () => {
    const store = new RedisCheckpointStore({ redis, keyPrefix });
    await store.close();
    expect(await redis.ping()).toBe('PONG');
  });
});
