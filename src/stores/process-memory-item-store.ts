import type { MemoryItem } from '../protocol/memory.js';
import { oldestFirst, overflowIds, type MemoryItemStore, type MemoryScope } from './memory-item-store.js';

/** `memoryStore: {type: 'memory'}`: items in this process, shared by the sessions of one tenant and namespace. */
export class ProcessMemoryItemStore implements MemoryItemStore {
  readonly kind = 'memory';
  private readonly scopes = new Map<string, Map<string, MemoryItem>>();

  async put(scope: MemoryScope, item: MemoryItem): Promise<void> {
    const key = JSON.stringify([scope.tenantId, scope.namespace]);
    let items = this.scopes.get(key);
    if (!items) {
      items = new Map();
      this.scopes.set(key, items);
    }
    items.set(item.id, structuredClone(item));
    for (const id of overflowIds(oldestFirst(items.values()))) items.delete(id);
  }

  async list(scope: MemoryScope): Promise<MemoryItem[]> {
    const items = this.scopes.get(JSON.stringify([scope.tenantId, scope.namespace]));
    return items ? oldestFirst(items.values()).map((item) => structuredClone(item)) : [];
  }
}
