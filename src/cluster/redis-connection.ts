import { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CodeConfig } from '../config/code-config.js';
import { CodeError } from '../errors.js';
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
export function createRedisClient(
  config: Pick<CodeConfig, 'redisUrl' | 'redis'>,
  logger: Logger,
): RedisClient | undefined {
  const commandOptions = { maxRetriesPerRequest: 2, commandTimeout: REDIS_COMMAND_TIMEOUT_MS };
  let client: RedisClient | undefined;
  const { cluster, username, password, tls } = config.redis;
  if (cluster !== undefined) {
    client = new Cluster(cluster.map(parseNode), {
      // Fenced writes and the reads that check them must see the master's state: no replica reads.
      scaleReads: 'master',
      // While the cluster is unreachable a command fails at once instead of waiting in a queue without a
      // deadline (the per-command timeout starts only once a command is sent); the server waits for the
      // cluster to be ready at start (waitUntilReady).
      enableOfflineQueue: false,
      redisOptions: {
        ...commandOptions,
        ...(username === undefined ? {} : { username }),
        ...(password === undefined ? {} : { password }),
        ...(tls ? { tls: {} } : {}),
      },
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

/**
 * Resolve once a Cluster client is ready (its slot map loaded), or throw PERSISTENCE_FAILED naming the seeds
 * and the last connection error after `timeoutMs`; a plain Redis client resolves at once (it queues commands
 * and fails them by its retry limit).
 */
export async function waitUntilReady(client: RedisClient, timeoutMs: number, seeds: string): Promise<void> {
  if (!(client instanceof Cluster) || client.status === 'ready') return;
  let lastError = '';
  const onError = (error: Error): void => {
    lastError = describe(error);
  };
  client.on('error', onError);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.off('ready', onReady);
        reject(
          new CodeError(
            'PERSISTENCE_FAILED',
            `the Redis Cluster (seeds ${seeds}) was not ready within ${timeoutMs} ms${lastError === '' ? '' : ` (last error: ${lastError})`}`,
            { seeds, cause: lastError || 'timeout' },
          ),
        );
      }, timeoutMs);
      const onReady = (): void => {
        clearTimeout(timer);
        resolve();
      };
      client.once('ready', onReady);
    });
  } finally {
    client.off('error', onError);
  }
}

// The first word of a node's error (WRONGPASS, NOAUTH, ECONNREFUSED ...): never a server's full text.
function describe(error: Error): string {
  const cause = (error as { lastNodeError?: unknown }).lastNodeError;
  const inner = cause instanceof Error ? cause : error;
  const code = (inner as { code?: unknown }).code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  return /^[A-Z][A-Z_]+\b/.exec(inner.message)?.[0] ?? inner.name;
}

function parseNode(node: string): { host: string; port: number } {
  const colon = node.lastIndexOf(':');
  const host = node.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(node.slice(colon + 1)) };
}
