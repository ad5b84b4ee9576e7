import { CodeError } from '../../errors.js';
import type { RunRecord } from '../../protocol/run-record.js';

/** The run holding a session's single-flight lease. */
export interface ActiveRun {
  readonly runId: string;
  readonly controller: AbortController;
  /** Settles when the run's producer has ended and the lease is released. */
  done: Promise<RunRecord>;
}

/** A session's single-flight lease: at most one active run, with its abort controller and completion. */
export class SingleFlight {
  private active: ActiveRun | undefined;
  /** A session operation that is not a run (a revert) holding the lease: `what` it is, and its end. */
  private held: { readonly what: string; readonly done: Promise<unknown> } | undefined;

  /** The active run's id, if any. */
  get runId(): string | undefined {
    return this.active?.runId;
  }

  /** The completion of `runId` while it is the active run. */
  doneOf(runId: string): Promise<RunRecord> | undefined {
    return this.active?.runId === runId ? this.active.done : undefined;
  }

  /**
   * Hold the lease for `fn`, an operation that is not a run (a revert): SESSION_BUSY while a run (or another such
   * operation) holds it, and every run is refused with SESSION_BUSY until `fn` settles.
   */
  async hold<T>(sessionId: string, what: string, fn: () => Promise<T>): Promise<T> {
    this.assertFree(sessionId);
    const done = fn();
    const held = { what, done: done.catch(() => undefined) };
    this.held = held;
    try {
      return await done;
    } finally {
      if (this.held === held) this.held = undefined;
    }
  }

  /** Throw SESSION_BUSY (naming the active run) while a run holds the lease. */
  assertFree(sessionId: string): void {
    if (this.held)
      throw new CodeError('SESSION_BUSY', `session ${sessionId} is busy with a ${this.held.what}`, {
        operation: this.held.what,
      });
    if (this.active) {
      throw new CodeError('SESSION_BUSY', `session ${sessionId} is busy with run ${this.active.runId}`, {
        activeRunId: this.active.runId,
      });
    }
  }

  /** Give the lease to a newly admitted run; `track` then hands it the run's producer. */
  take(runId: string, record: RunRecord): ActiveRun {
    const active: ActiveRun = { runId, controller: new AbortController(), done: Promise.resolve(record) };
    this.active = active;
    return active;
  }

  /** Follow the run's producer: when it settles the lease is released, then `onEnd` runs. */
  track(active: ActiveRun, producer: Promise<RunRecord>, onEnd: () => void): Promise<RunRecord> {
    active.done = producer.finally(() => {
      if (this.active === active) this.active = undefined;
      onEnd();
    });
    return active.done;
  }

  /** Abort the active run if it is `runId`; false when it is not active. */
  abort(runId: string, reason: Error): boolean {
    if (this.active?.runId !== runId) return false;
    this.active.controller.abort(reason);
    return true;
  }

  /** Abort the active run, if any, and wait for its producer to end. */
  async abortAndWait(reason: Error): Promise<void> {
    await this.held?.done;
    const active = this.active;
    if (!active) return;
    active.controller.abort(reason);
    await active.done.catch(() => undefined);
  }

  /** Wait until no run is active, at most `timeoutMs`. */
  async waitIdle(timeoutMs: number): Promise<void> {
    await this.held?.done;
    const active = this.active;
    if (!active) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      active.done.catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }
}
