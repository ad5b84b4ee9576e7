import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionLeases } from '../../src/cluster/session-lease.js';
import { isCodeError } from '../../src/errors.js';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { RedisCheckpointStore } from '../../src/stores/redis-checkpoint-store.js';
import { RedisSessionStore } from '../../src/stores/redis-session-store.js';
import { ReplicaAcks } from '../../src/stores/replica-acks.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { makeSnapshot } from '../support/snapshot-fixtures.js';
import { connectRedisTarget, redisTestMode } from '../support/redis-target.js';
import { makeCheckpoint } from './checkpoint-fixtures.js';
import { deleteKeysWithPrefix, randomKeyPrefix } from './redis-test-client.js';

// The run's single redis-server has no replica; the run's cluster has one replica per master.
const REPLICAS = redisTestMode() === 'cluster' ? 1 : 0;

describe('replica acknowledgement of fenced writes (WAIT)', () => {
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

  it(`detects ${REPLICAS} required replica(s) by default, and a configured count wins`, async () => {
    const detected = await new ReplicaAcks({ client: redis, configured: undefined, timeoutMs: 500 }).required();
    expect(detected).toEqual(REPLICAS === 0 ? undefined : { replicas: 1, timeoutMs: 500 });
    expect(await new ReplicaAcks({ client: redis, configured: 0, timeoutMs: 500 }).required()).toBeUndefined();
    expect(await new ReplicaAcks({ client: redis, configured: 2, timeoutMs: 80 }).required()).toEqual({
      replicas: 2,
      timeoutMs: 80,
    });
  });

  it('a save acknowledged by the replicas there are counts; one that needs a replica more fails with reason replica_ack', async () => {
    const acked = new RedisSessionStore({
      redis,
      keyPrefix,
      legacyLayout: false,
      replicaAcks: new ReplicaAcks({ client: redis, configured: undefined, timeoutMs: 1000 }),
    });
    await acked.save(makeSnapshot('s1', 1));
    expect((await acked.load(sessionKey('tenant-a', 's1')))?.generation).toBe(1);

    const started = Date.now();
    const unmet = new RedisSessionStore({
      redis,
      keyPrefix,
      legacyLayout: false,
      replicaAcks: new ReplicaAcks({ client: redis, configured: REPLICAS + 1, timeoutMs: 150 }),
    });
    const error = await unmet.save(makeSnapshot('s1', 2)).catch((thrown: unknown) => thrown);
    expect(isCodeError(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: {
        sessionId: 's1',
        generation: 2,
        reason: 'replica_ack',
        replicasRequired: REPLICAS + 1,
        replicasAcknowledged: REPLICAS,
      },
    });
    expect((error as Error).message).toContain(`not acknowledged by ${REPLICAS + 1} replica`);
    // WAIT waited out its timeout before the save was refused.
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('checkpoints and lease takeovers need the acknowledgement too', async () => {
    const acks = new ReplicaAcks({ client: redis, configured: REPLICAS + 1, timeoutMs: 100 });
    const key = sessionKey('tenant-a', 's1');
    const checkpoints = new RedisCheckpointStore({ redis, keyPrefix, replicaAcks: acks });
    await expect(checkpoints.save(key, makeCheckpoint('run_1', 1))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: { runId: 'run_1', reason: 'replica_ack' },
    });

    const leases = new SessionLeases({ redis, keyPrefix, nodeId: 'node-a', ttlMs: 5000, replicaAcks: acks });
    try {
      await expect(leases.acquire(key)).rejects.toMatchObject({
        code: 'PERSISTENCE_FAILED',
        details: { reason: 'replica_ack' },
      });
      // The same writes with the replicas there are go through.
      const met = new ReplicaAcks({ client: redis, configured: REPLICAS, timeoutMs: 1000 });
      await new RedisCheckpointStore({ redis, keyPrefix, replicaAcks: met }).save(key, makeCheckpoint('run_1', 1));
      const other = new SessionLeases({ redis, keyPrefix, nodeId: 'node-b', ttlMs: 5000, replicaAcks: met });
      await other.acquire(key).then(async (outcome) => {
        // node-a's unacknowledged lease is still in Redis until it expires: node-b sees it taken.
        expect(outcome.ok).toBe(false);
        await other.stop();
      });
    } finally {
      await leases.stop();
    }
  });
});
