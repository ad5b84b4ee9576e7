import type { Logger } from 'pino';
import { DEFAULT_BLOCK_MS } from './cluster/stream-follower.js';
import { RedisEventStream, streamReaderFor } from './cluster/redis-event-stream.js';
import { REDIS_COMMAND_TIMEOUT_MS } from './cluster/redis-connection.js';
import { RedisOwnership } from './cluster/redis-ownership.js';
import { SessionLeases } from './cluster/session-lease.js';
import type { CodeConfig } from './config/code-config.js';
import type { RedisClient } from './stores/redis-client.js';
import { ReplicaAcks } from './stores/replica-acks.js';

/** The cluster services of a server on Redis: its clients, replica acknowledgement, session leases and ownership. */
export interface RuntimeCluster {
  redis: RedisClient;
  reader: RedisClient;
  replicaAcks: ReplicaAcks;
  leases: SessionLeases;
  ownership: RedisOwnership;
}

/** The cluster services over Redis: session leases (fencing the store), the event stream and ownership. */
export function createRuntimeCluster(
  config: CodeConfig,
  redis: RedisClient,
  nodeId: string,
  logger: Logger,
): RuntimeCluster {
  // XREAD BLOCK holds its connection, so stream followers get their own (on a cluster: sharded subscribers);
  // its deadline allows for the block time, so a flapping Redis cannot hold shutdown either.
  const reader = streamReaderFor(redis, { commandTimeout: REDIS_COMMAND_TIMEOUT_MS + DEFAULT_BLOCK_MS });
  // Fenced writes wait for a replica when there are replicas (config redis.min_replicas_ack).
  const replicaAcks = new ReplicaAcks({
    client: redis,
    configured: config.redis.minReplicasAck,
    timeoutMs: config.redis.replicaAckTimeoutMs,
  });
  reader.on('error', (error: Error) => logger.warn({ err: error.message }, 'redis stream connection error'));
  const onError = (message: string, error: unknown) =>
    logger.warn({ err: error instanceof Error ? error.message : String(error) }, message);
  const holder: { ownership?: RedisOwnership } = {};
  const leases = new SessionLeases({
    redis,
    keyPrefix: config.redisKeyPrefix,
    nodeId,
    ttlMs: config.cluster.leaseTtlMs,
    onLost: (sessionId) => {
      logger.warn({ sessionId }, 'session lease lost to another node; giving the session up');
      holder.ownership?.lost(sessionId);
    },
    onError: (error) => onError('session lease renewal failed', error),
    replicaAcks,
  });
  const events = new RedisEventStream({
    redis: reader,
    writer: redis,
    keyPrefix: config.redisKeyPrefix,
    maxLen: config.limits.maxEventsPerRun,
    onError: (error) => onError('event stream read failed', error),
  });
  const ownership = new RedisOwnership({ redis, keyPrefix: config.redisKeyPrefix, nodeId, leases, events, onError });
  holder.ownership = ownership;
  return { redis, reader, replicaAcks, leases, ownership };
}
