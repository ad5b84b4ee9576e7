import { randomUUID } from 'node:crypto';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisClient } from '../../src/stores/redis-client.js';

/** An ioredis client for tests: quiet about connection errors (tests assert on command failures instead). */
export function connectTestRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 3, ...options });
  // Without a listener ioredis prints every reconnect error; the commands themselves still reject.
  redis.on('error', () => undefined);
  return redis;
}

/** A fresh key prefix, so tests sharing the run's Redis never see each other's keys. */
export function randomKeyPrefix(): string {
  return `test:${randomUUID()}:`;
}

/** Every key under `prefix` (SCAN on one Redis, or on every master of a Cluster; never KEYS). */
export async function keysWithPrefix(redis: RedisClient, prefix: string): Promise<string[]> {
  // A Cluster client that has not finished discovering its nodes lists connections it is about to replace
  // (a test that never sent a command): a command first waits until it is ready.
  if (redis instanceof Cluster) await redis.ping();
  const nodes: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  return keys;
}

/** Delete every key under `prefix` (one DEL per key, so keys of different hash slots work on a Cluster too). */
export async function deleteKeysWithPrefix(redis: RedisClient, prefix: string): Promise<void> {
  const keys = await keysWithPrefix(redis, prefix);
  await Promise.all(keys.map((key) => redis.del(key)));
}

/** How many of `keys` exist: one EXISTS per key, so keys of different hash slots work on a Cluster too. */
export async function countExisting(redis: RedisClient, ...keys: string[]): Promise<number> {
  const counts = await Promise.all(keys.map((key) => redis.exists(key)));
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * Cut `client` off for good, as a crashed node's connection: every later command fails. disconnect() on one Redis;
 * quit() on a Cluster, whose client reconnects on its next command after a disconnect().
 */
export function dropConnection(client: RedisClient): void {
  if (client instanceof Cluster) void client.quit().catch(() => undefined);
  else client.disconnect();
}
