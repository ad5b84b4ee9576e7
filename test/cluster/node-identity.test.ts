import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeRegistry } from '../../src/cluster/node-identity.js';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { deleteKeysWithPrefix, dropConnection, randomKeyPrefix } from '../stores/redis-test-client.js';
import { connectRedisTarget } from '../support/redis-target.js';
import { sleep, waitUntil } from './wait-until.js';

describe('NodeRegistry', () => {
  let redis: RedisClient;
  let keyPrefix: string;
  const extraClients: RedisClient[] = [];
  const registries: NodeRegistry[] = [];

  beforeEach(() => {
    redis = connectRedisTarget();
    keyPrefix = randomKeyPrefix();
  });

  afterEach(async () => {
    await Promise.allSettled(registries.splice(0).map((registry) => registry.stop()));
    await deleteKeysWithPrefix(redis, keyPrefix);
    for (const client of extraClients.splice(0)) client.disconnect();
    await redis.quit();
  });

  function registry(nodeId: string, client: RedisClient = redis, ttlMs = 300): NodeRegistry {
    const created = new NodeRegistry({
      redis: client,
      keyPrefix,
      nodeId,
      advertiseUrl: `http://${nodeId}.test:8080`,
      ttlMs,
      now: () => 1_700_000_000_000,
    });
    registries.push(created);
    return created;
  }

  it('advertises the node as JSON with a TTL, lists it, and removes it on stop', async () => {
    const a = registry('node-a');
    await a.start();
    const raw = await redis.get(`${keyPrefix}node:node-a`);
    expect(JSON.parse(raw ?? 'null')).toEqual({
      nodeId: 'node-a',
      url: 'http://node-a.test:8080',
      startedAtMs: 1_700_000_000_000,
      heartbeatMs: 1_700_000_000_000,
    });
    const ttl = await redis.pttl(`${keyPrefix}node:node-a`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    expect(await a.isAlive('node-a')).toBe(true);
    expect(await a.get('node-a')).toMatchObject({ url: 'http://node-a.test:8080' });
    expect(await a.get('node-z')).toBeUndefined();

    const b = registry('node-b');
    await b.start();
    expect((await a.list()).map((node) => node.nodeId)).toEqual(['node-a', 'node-b']);

    await b.stop();
    expect(await a.isAlive('node-b')).toBe(false);
    expect((await a.list()).map((node) => node.nodeId)).toEqual(['node-a']);
  });

  it('stays alive while heartbeating and expires once the heartbeats stop', async () => {
    // Node A's own connection: dropping it is a crash as far as the cluster can tell.
    const clientA = connectRedisTarget();
    extraClients.push(clientA);
    const errors: unknown[] = [];
    const a = new NodeRegistry({
      redis: clientA,
      keyPrefix,
      nodeId: 'node-a',
      advertiseUrl: 'http://a',
      ttlMs: 300,
      onError: (error) => errors.push(error),
    });
    const observer = registry('observer');

    await a.start();
    // Three TTLs later A is still advertised: the heartbeat renews well inside the TTL.
    await sleep(900);
    expect(await observer.isAlive('node-a')).toBe(true);

    dropConnection(clientA);
    await waitUntil('node-a expired', async () => !(await observer.isAlive('node-a')));
    expect(await observer.get('node-a')).toBeUndefined();
    expect((await observer.list()).map((node) => node.nodeId)).toEqual([]);
    // The set index was pruned of the dead node.
    expect(await redis.smembers(`${keyPrefix}nodes`)).toEqual([]);
    await waitUntil('a failed heartbeat was reported', () => errors.length > 0);
    expect(errors[0]).toMatchObject({ code: 'PERSISTENCE_FAILED' });
    await a.stop().catch(() => undefined);
  });
});
