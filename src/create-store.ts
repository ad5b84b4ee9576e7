import { Cluster as RedisCluster } from 'ioredis';
import type { CodeConfig } from './config/code-config.js';
import type { RuntimeCluster } from './create-runtime-cluster.js';
import { CodeError } from './errors.js';
import type { MemoryStores } from './runtime/memory/memory-stores.js';
import type { AttachmentStore } from './runtime/ports/attachment-store.js';
import type { CheckpointStore } from './stores/checkpoint-store.js';
import { FileAttachmentStore } from './stores/file-attachment-store.js';
import { MemoryAttachmentStore } from './stores/memory-attachment-store.js';
import { FileCheckpointStore } from './stores/file-checkpoint-store.js';
import { FileMemoryItemStore } from './stores/file-memory-item-store.js';
import { FileSessionStore } from './stores/file-session-store.js';
import { MemoryCheckpointStore } from './stores/memory-checkpoint-store.js';
import { MemorySessionStore } from './stores/memory-session-store.js';
import { ProcessMemoryItemStore } from './stores/process-memory-item-store.js';
import type { RedisClient } from './stores/redis-client.js';
import { RedisAttachmentStore } from './stores/redis-attachment-store.js';
import { RedisCheckpointStore } from './stores/redis-checkpoint-store.js';
import { RedisMemoryItemStore } from './stores/redis-memory-item-store.js';
import { RedisSessionStore } from './stores/redis-session-store.js';
import type { SessionStore } from './stores/session-store.js';

/** The session store the config names: Redis (fenced by the cluster's leases), memory, or files under sessionsDir. */
export async function createStore(
  config: CodeConfig,
  redis: RedisClient | undefined,
  cluster: RuntimeCluster | undefined,
): Promise<SessionStore> {
  // Saves are fenced by the owner's lease epoch: a node that lost a session can never overwrite it.
  const retentionDays = config.retention.closedSessionDays;
  if (redis) {
    return new RedisSessionStore({
      redis,
      keyPrefix: config.redisKeyPrefix,
      ...(cluster ? { fence: (key) => cluster.leases.storeFence(key), replicaAcks: cluster.replicaAcks } : {}),
      // The old key layout spans slots and never ran on a cluster: nothing to migrate there.
      legacyLayout: !(redis instanceof RedisCluster),
      ...(retentionDays !== undefined ? { closedTtlMs: Math.round(retentionDays * 24 * 60 * 60 * 1000) } : {}),
    });
  }
  if (config.storageBackend === 'memory') return new MemorySessionStore();
  const store = new FileSessionStore({ dir: config.sessionsDir ?? `${config.dataDir}/sessions` });
  try {
    await store.init();
  } catch (error) {
    throw new CodeError(
      'SESSION_INITIALIZATION_ERROR',
      `file store at ${config.sessionsDir}: ${error instanceof Error ? error.message : String(error)}`,
      { resource: 'sessionsDir' },
    );
  }
  return store;
}

/** The checkpoint store beside the session store: Redis, memory, or files under <data_dir>/checkpoints. */
export async function createCheckpointStore(
  config: CodeConfig,
  redis: RedisClient | undefined,
  cluster: RuntimeCluster | undefined,
): Promise<CheckpointStore> {
  // Fenced like session saves: a node that lost a session cannot overwrite the checkpoint its new owner resumes.
  if (redis) {
    return new RedisCheckpointStore({
      redis,
      keyPrefix: config.redisKeyPrefix,
      ...(cluster ? { fence: (key) => cluster.leases.storeFence(key), replicaAcks: cluster.replicaAcks } : {}),
    });
  }
  if (config.storageBackend === 'memory') return new MemoryCheckpointStore();
  const store = new FileCheckpointStore({ dir: `${config.dataDir}/checkpoints` });
  try {
    await store.init();
  } catch (error) {
    throw new CodeError(
      'SESSION_INITIALIZATION_ERROR',
      `checkpoint store at ${config.dataDir}/checkpoints: ${error instanceof Error ? error.message : String(error)}`,
      { resource: 'dataDir' },
    );
  }
  return store;
}

/** Long-term memory: `file` is Redis (shared by every node) or <data_dir>/memory, like the session store; `memory` is this process. */
export function createMemoryStores(config: CodeConfig, redis: RedisClient | undefined): MemoryStores {
  const processStore = new ProcessMemoryItemStore();
  if (redis) return { durable: new RedisMemoryItemStore(redis, config.redisKeyPrefix), process: processStore };
  if (config.storageBackend === 'memory') return { durable: processStore, process: processStore };
  return { durable: new FileMemoryItemStore(`${config.dataDir}/memory`), process: processStore };
}

/** The attachment store beside the session store: Redis (under each session's hash tag), memory, or files under <data_dir>/attachments. */
export function createAttachmentStore(config: CodeConfig, redis: RedisClient | undefined): AttachmentStore {
  if (redis) return new RedisAttachmentStore(redis, config.redisKeyPrefix);
  if (config.storageBackend === 'memory') return new MemoryAttachmentStore();
  return new FileAttachmentStore(`${config.dataDir}/attachments`);
}
