import path from 'node:path';
import type { CodeConfig } from './config/code-config.js';
import type { WebhookStore } from './runtime/ports/webhook-store.js';
import { FileWebhookStore } from './stores/file-webhook-store.js';
import { MemoryWebhookStore } from './stores/memory-webhook-store.js';
import type { RedisClient } from './stores/redis-client.js';
import { RedisWebhookStore } from './stores/redis-webhook-store.js';

/** The webhook store beside the session store: Redis (under each session's hash tag), memory, or files under <data_dir>/webhooks. */
export function createWebhookStore(config: CodeConfig, redis: RedisClient | undefined): WebhookStore {
  if (redis) return new RedisWebhookStore(redis, config.redisKeyPrefix);
  if (config.storageBackend === 'memory') return new MemoryWebhookStore();
  return new FileWebhookStore(path.join(config.dataDir, 'webhooks'));
}
