import { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CodeConfig } from '../config/code-config.js';
import type { RedisClient } from '../stores/redis-client.js';

/** How long one Redis command may take before it fails (PERSISTENCE_FAILED names the operation). */
export const REDIS_COMMAND_TIMEOUT_MS = 10_000;

/**
 * The server's Redis client: a Cluster client for `redis.cluster` (REDIS_CLUSTER_NODES; MOVED and ASK
 * followed by ioredis, reads and writes on masters only), a plain client for `redis_url` (REDIS_URL), none
 * without either. Few retries, so a save fails with a clear error instead of hanging while Redis is down, and
 * a deadline on every command: a Redis that accepts connections and drops them resets ioredis's retry count,
 * so without one a save or a shutdown could wait forever.
 */
export function createRedisClient(config: Pick<CodeConfig, 'redisUrl' | 'redis'>, logger: Logger): RedisClient | undefined {
  const commandOptions = { maxRetriesPerRequest: 2, commandTimeout: REDIS_COMMAND_TIMEOUT_MS };
  let client: RedisClient | undefined;
  const { cluster, username, password, tls } = config.redis;
  if (cluster !== undefined) {
    client = new Cluster(cluster.map(parseNode), {
      // Fenced writes and the reads that check them must see the master's state: no replica reads.
      scaleReads: 'master',
      redisOptions: { ...commandOptions, ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }), ...(tls ? { tls: {} } : {}) },
      // A failover takes the cluster's node timeout: keep retrying the slot map until a replica is promoted.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 100,
      maxRedirections: 16,
      slotsRefreshTimeout: 2000,
      clusterRetryStrategy: (attempt) => Math.min(200 * attempt, 2000),
    });
  } else if (config.redisUrl !== undefined) {
    client = new Redis(config.redisUrl, { ...commandOptions, lazyConnect: false });
  }
  client?.on('error', (error: Error) => logger.warn({ err: error.message }, 'redis connection error'));
  return client;
}

function parseNode(node: string): { host: string; port: number } {
  const colon = node.lastIndexOf(':');
  const host = node.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(node.slice(colon + 1)) };
}
