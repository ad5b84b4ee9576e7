/** Bounds of a BoundedTaskQueue. */
export interface BoundedTaskQueueOptions {
  /** Tasks running at once. */
  concurrency: number;
  /** Tasks waiting to start; a push beyond this is refused. */
  maxQueued: number;
}

/** Runs fire-and-forget tasks with bounded concurrency and a bounded backlog; task errors are the task's to handle. */
export class BoundedTaskQueue {
  private readonly queued: Array<() => Promise<void>> = [];
  private running = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly options: BoundedTaskQueueOptions) {}

  /** Start or queue a task; false (task dropped) when the backlog is full. */
  push(task: () => Promise<void>): boolean {
    if (this.running < this.options.concurrency) {
      this.start(task);
      return true;
    }
    if (this.queued.length >= this.options.maxQueued) return false;
    this.queued.push(task);
    return true;
  }

  /** Drop every queued (not yet started) task; returns how many were dropped. */
  clear(): number {
    return this.queued.splice(0).length;
  }

  /** Resolves once no task is running or queued. */
  idle(): Promise<void> {
    if (this.running === 0 && this.queued.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Tasks running now plus tasks queued. */
  get size(): number {
    return this.running + this.queued.length;
  }

  private start(task: () => Promise<void>): void {
    this.running += 1;
    // A task that throws synchronously or rejects must still free its slot.
    void Promise.resolve()
      .then(task)
      .catch(() => undefined)
      .finally(() => {
        this.running -= 1;
        const next = this.queued.shift();
        if (next) this.start(next);
        else if (this.running === 0) {
          const waiters = this.waiters;
          this.waiters = [];
          for (const resolve of waiters) resolve();
        }
      });
  }
}
