import type { RedisClient } from './redis-client.js';
import { MemoryItemSchema, type MemoryItem } from '../protocol/memory.js';
import {
  MAX_MEMORY_ITEMS_PER_SCOPE,
  oldestFirst,
  overflowIds,
  type MemoryItemStore,
  type MemoryScope,
} from './memory-item-store.js';
import { redisFailure } from './redis-failure.js';
import { DEFAULT_REDIS_KEY_PREFIX } from './redis-session-store.js';

/**
 * Long-term memory on Redis, shared by every node: one hash `<prefix>memory:<tenant>:<namespace>` per
 * scope (tenant URI-encoded, so no tenant can name another's key), field = item id, value = the item's JSON.
 */
export class RedisMemoryItemStore implements MemoryItemStore {
  readonly kind = 'redis';
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix = DEFAULT_REDIS_KEY_PREFIX,
  ) {
    this.keyPrefix = keyPrefix;
  }

  /** The hash holding a scope's items. */
  scopeKey(scope: MemoryScope): string {
    return `${this.keyPrefix}memory:${encodeURIComponent(scope.tenantId)}:${scope.namespace}`;
  }

  async put(scope: MemoryScope, item: MemoryItem): Promise<void> {
    const key = this.scopeKey(scope);
    try {
      await this.redis.hset(key, item.id, JSON.stringify(item));
      // Evicting the oldest beyond the bound is rare: a count check is the only extra round trip of a common write.
      if ((await this.redis.hlen(key)) > MAX_MEMORY_ITEMS_PER_SCOPE) {
        const evict = overflowIds(await this.list(scope));
        if (evict.length > 0) await this.redis.hdel(key, ...evict);
      }
    } catch (error) {
      throw redisFailure('failed to store a memory item', { memoryId: item.id }, error);
    }
  }

  async list(scope: MemoryScope): Promise<MemoryItem[]> {
    let raw: Record<string, string>;
    try {
      raw = await this.redis.hgetall(this.scopeKey(scope));
    } catch (error) {
      throw redisFailure('failed to read memory items', {}, error);
    }
    const items: MemoryItem[] = [];
    for (const value of Object.values(raw)) {
      const parsed = MemoryItemSchema.safeParse(safeJson(value));
      // A malformed entry is skipped, never fatal to recall.
      if (parsed.success) items.push(parsed.data);
    }
    return oldestFirst(items);
  }
}

function safeJson(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}
