import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';

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

/** Delete every key under `prefix` (SCAN, never KEYS). */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
