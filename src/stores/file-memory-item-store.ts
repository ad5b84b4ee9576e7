import path from 'node:path';
import { MemoryItemSchema, type MemoryItem } from '../protocol/memory.js';
import { JsonFileDirectory } from './json-file-directory.js';
import { KeyedLock } from './keyed-lock.js';
import { oldestFirst, overflowIds, type MemoryItemStore, type MemoryScope } from './memory-item-store.js';
import { CodeError } from '../errors.js';

const ITEM_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/;
const PLAIN_TENANT = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** A tenant id as one directory name: itself when it is a plain name, else `~` and its UTF-8 hex (never a plain name). */
export function tenantDirectoryName(tenantId: string): string {
  return PLAIN_TENANT.test(tenantId) ? tenantId : `~${Buffer.from(tenantId, 'utf8').toString('hex')}`;
}

/**
 * Long-term memory in files: `<dir>/<tenant>/<namespace>/<item id>.json`, each write atomic (temp file,
 * fsync, rename, directory fsync). A scope's items are read once per process and then served from memory
 * (this process owns the data directory, as for the session store).
 */
export class FileMemoryItemStore implements MemoryItemStore {
  readonly kind = 'file';
  private readonly scopes = new Map<string, { files: JsonFileDirectory; items: Promise<Map<string, MemoryItem>> }>();
  private readonly lock = new KeyedLock();

  constructor(private readonly dir: string) {}

  async put(scope: MemoryScope, item: MemoryItem): Promise<void> {
    if (!ITEM_ID.test(item.id))
      throw new CodeError('VALIDATION_ERROR', `memory item id ${JSON.stringify(item.id)} cannot name a file`, {
        field: 'id',
      });
    const open = this.open(scope);
    await this.lock.run(this.key(scope), async () => {
      const items = await open.items;
      await open.files.write(item.id, JSON.stringify(item));
      items.set(item.id, structuredClone(item));
      for (const id of overflowIds(oldestFirst(items.values()))) {
        await open.files.remove(id);
        items.delete(id);
      }
    });
  }

  async list(scope: MemoryScope): Promise<MemoryItem[]> {
    const items = await this.open(scope).items;
    return oldestFirst(items.values()).map((item) => structuredClone(item));
  }

  private key(scope: MemoryScope): string {
    return JSON.stringify([scope.tenantId, scope.namespace]);
  }

  private open(scope: MemoryScope) {
    const key = this.key(scope);
    let open = this.scopes.get(key);
    if (!open) {
      const files = new JsonFileDirectory({
        dir: path.join(this.dir, tenantDirectoryName(scope.tenantId), scope.namespace),
        storeName: 'file memory store',
        record: 'memory item',
        owner: 'memory',
        idKey: 'memoryId',
        idPattern: ITEM_ID,
      });
      const items = load(files);
      open = { files, items };
      this.scopes.set(key, open);
      // A failed load (e.g. EACCES) is retried on the next call.
      items.catch(() => this.scopes.delete(key));
    }
    return open;
  }
}

async function load(files: JsonFileDirectory): Promise<Map<string, MemoryItem>> {
  const items = new Map<string, MemoryItem>();
  for (const id of await files.ids()) {
    const item = await files.read(
      id,
      (raw) => MemoryItemSchema.parse(raw),
      (value) => value.id,
    );
    if (item) items.set(item.id, item);
  }
  return items;
}
