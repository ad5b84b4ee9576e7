/**
 * Per-key promise chain: operations on one key run one after another in call order, operations on
 * different keys run concurrently. A failed operation rejects only its own caller; the chain goes on.
 */
export class KeyedLock {
  // Tail of each key's chain; removed when the last queued operation settles.
  private readonly tails = new Map<string, Promise<void>>();

  /** Run `operation` once every operation queued earlier for `key` has settled; resolves with its result. */
  async run<T>(key: string, operation: () => T | Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(operation);
    // The chain continues past a failed operation; the failure still reaches this caller.
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Settle once every operation queued so far, on every key, has settled. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.tails.values()]);
  }
}
