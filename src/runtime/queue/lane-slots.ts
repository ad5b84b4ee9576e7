/** Gives back a slot taken with `LaneSlots.acquire`. */
export type ReleaseSlot = () => void;

/**
 * The slots of one lane: at most `max` holders at once, waiters served first come first served. A waiter
 * whose signal aborts leaves the line (it never takes a slot).
 */
export class LaneSlots {
  private activeCount = 0;
  private readonly waiters: Array<(release: ReleaseSlot) => void> = [];

  constructor(readonly max: number) {}

  /** Calls holding a slot. */
  get active(): number {
    return this.activeCount;
  }

  /** Calls waiting for a slot. */
  get pending(): number {
    return this.waiters.length;
  }

  /** A slot now if one is free (nobody waits while one is), else undefined. */
  tryAcquire(): ReleaseSlot | undefined {
    if (this.activeCount >= this.max) return undefined;
    this.activeCount += 1;
    return this.releaser();
  }

  /** Wait for a slot; undefined when `signal` aborted first (the waiter is removed from the line). */
  acquire(signal: AbortSignal): Promise<ReleaseSlot | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.activeCount < this.max) {
      this.activeCount += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const waiter = (release: ReleaseSlot): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(release);
      };
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        resolve(undefined);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** A release that works once: the slot passes to the next waiter, or is freed. */
  private releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next(this.releaser());
      else this.activeCount -= 1;
    };
  }
}
