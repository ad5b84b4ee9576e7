/** Gives back a slot taken with TaskSlots.acquire (calling it twice gives it back once). */
export type ReleaseSlot = () => void;

interface Waiter {
  readonly grant: (release: ReleaseSlot) => void;
}

/**
 * A session's `parallel_task` slots (`maxParallelTasks`): at most `max` children of every parallel_task and
 * host `tasks` request of the session run at once; the others wait their turn in the order they asked, and a
 * waiter whose signal aborts leaves the line at once. Nothing is refused for being beyond the bound.
 */
export class TaskSlots {
  private active = 0;
  /** Created on the first wait: most sessions never queue a task. */
  private line: Waiter[] | undefined;

  constructor(readonly max: number) {}

  /** Whether a slot is free now (acquire would not wait). */
  get free(): boolean {
    return this.active < this.max && !this.line?.length;
  }

  /** Tasks waiting for a slot. */
  get waiting(): number {
    return this.line?.length ?? 0;
  }

  /** Take a slot, waiting in line when none is free; rejects with the signal's reason when it aborts first. */
  acquire(signal: AbortSignal): Promise<ReleaseSlot> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.free) {
      this.active += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const onAbort = (): void => {
        const line = this.line ?? [];
        const at = line.indexOf(waiter);
        if (at >= 0) line.splice(at, 1);
        reject(signal.reason as Error);
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      (this.line ??= []).push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A release for one slot: hands it to the first waiter, or frees it. */
  private releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.line?.shift();
      if (next) next.grant(this.releaser());
      else this.active -= 1;
    };
  }
}
