import type { MemoryItem } from '../protocol/memory.js';

/** Whose memory: always a tenant and a namespace inside it; no scope ever reads another's items. */
export interface MemoryScope {
  readonly tenantId: string;
  readonly namespace: string;
}

/** Most long-term items one scope keeps; the oldest are evicted first. */
export const MAX_MEMORY_ITEMS_PER_SCOPE = 10_000;

/**
 * The long-term tier of AgentMemory: items per tenant and namespace. `put` adds or replaces an item by id;
 * `list` returns a scope's items oldest first (by timestamp, then id).
 */
export interface MemoryItemStore {
  readonly kind: 'memory' | 'file' | 'redis';
  put(scope: MemoryScope, item: MemoryItem): Promise<void>;
  list(scope: MemoryScope): Promise<MemoryItem[]>;
}

/** Items oldest first: by timestamp, then by id (a stable order for equal clocks). */
export function oldestFirst(items: Iterable<MemoryItem>): MemoryItem[] {
  return [...items].sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The ids to evict so that `items` (oldest first) fit MAX_MEMORY_ITEMS_PER_SCOPE. */
export function overflowIds(itemsOldestFirst: readonly MemoryItem[], max = MAX_MEMORY_ITEMS_PER_SCOPE): string[] {
  return itemsOldestFirst.slice(0, Math.max(0, itemsOldestFirst.length - max)).map((item) => item.id);
}
