/**
 * A map with a fixed number of entries that drops the least recently used one when full: compiled rule
 * patterns are cached by their text, and a flood of distinct texts (rules are tenant input) must not grow it.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new Error(`BoundedCache needs at least one entry, got ${maxEntries}`);
  }

  /** The cached value (now the most recently used), or undefined. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // A Map iterates in insertion order: re-inserting makes this the newest.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Store a value, dropping the least recently used entry when the cache is full. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  /** The cached value, computed and stored on a miss. */
  getOrCompute(key: K, compute: (key: K) => V): V {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const value = compute(key);
    this.set(key, value);
    return value;
  }

  /** How many entries are cached now (never more than maxEntries). */
  get size(): number {
    return this.entries.size;
  }
}
