import type { RunRecord } from '../../protocol/run-record.js';
import type { RunRequest } from './run-handle.js';

/** One run waiting in a session's run queue for the single flight. */
export interface QueuedRun {
  readonly record: RunRecord;
  readonly request: RunRequest;
  /** Settles when the run has ended: after it started and finished, or when it left the queue unstarted. */
  readonly done: Promise<RunRecord>;
  /** Follow the run's completion once it started (or settle with its record when it never starts). */
  settle(done: Promise<RunRecord> | RunRecord): void;
}

/**
 * A session's run queue (multitaskStrategy enqueue, interrupt, rollback): runs admitted while another was active,
 * in the order they start. Bounded by its caller (limits.maxQueuedRuns); built by the first queued run.
 */
export class RunQueue {
  private readonly entries: QueuedRun[] = [];

  /** Runs waiting. */
  get size(): number {
    return this.entries.length;
  }

  /** The waiting runs' ids, in the order they start. */
  ids(): string[] {
    return this.entries.map((e) => e.record.runId);
  }

  /** A run's place in the queue (1 starts next), undefined when it is not queued. */
  position(runId: string): number | undefined {
    const index = this.entries.findIndex((e) => e.record.runId === runId);
    return index < 0 ? undefined : index + 1;
  }

  /** The completion of a queued run. */
  doneOf(runId: string): Promise<RunRecord> | undefined {
    return this.entries.find((e) => e.record.runId === runId)?.done;
  }

  /** Queue a run, last or (`first`: an interrupt or a rollback) ahead of the others; answers its entry. */
  add(record: RunRecord, request: RunRequest, first: boolean): QueuedRun {
    let settle: (done: Promise<RunRecord> | RunRecord) => void = () => undefined;
    const done = new Promise<RunRecord>((resolve) => (settle = resolve));
    const entry: QueuedRun = { record, request, done, settle };
    if (first) this.entries.unshift(entry);
    else this.entries.push(entry);
    return entry;
  }

  /** Take a run out of the queue (a cancel), undefined when it is not queued. */
  remove(runId: string): QueuedRun | undefined {
    const index = this.entries.findIndex((e) => e.record.runId === runId);
    return index < 0 ? undefined : this.entries.splice(index, 1)[0];
  }

  /** Take the run that starts next. */
  shift(): QueuedRun | undefined {
    return this.entries.shift();
  }

  /** The waiting runs, in order (a copy). */
  waiting(): QueuedRun[] {
    return [...this.entries];
  }

  /** Take every waiting run (the session closed). */
  drain(): QueuedRun[] {
    return this.entries.splice(0);
  }
}
