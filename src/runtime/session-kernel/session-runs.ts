import type { AttachmentRef } from '../../protocol/attachments.js';
import { CodeError } from '../../errors.js';
import type { LoopCheckpoint } from '../../protocol/loop-checkpoint.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import type { HostEnv } from '../ports/host-env.js';
import { RunQueue } from './run-queue.js';
import type { SessionEmit } from './session-emitter.js';

/** True for a status a run never leaves (completed, failed, cancelled). */
export function isTerminal(status: RunRecord['status']): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** What a session's run records need from the session. */
export interface SessionRunsDeps {
  readonly sessionId: string;
  /** Retention: terminal runs beyond this many are dropped, oldest first, with their events. */
  readonly maxRuns: number;
  readonly events: SessionEventLog;
  readonly hostEnv: HostEnv;
  readonly emit: SessionEmit;
}

/** The parts of a run request a new run record is made from. */
export interface RunRecordRequest {
  input: string;
  history?: readonly unknown[];
  idempotencyKey?: string;
  resumeFrom?: Pick<LoopCheckpoint, 'run_id' | 'turn' | 'side_question'>;
}

/** A session's run records: idempotency keys, status transitions (with their events) and retention. */
export class SessionRuns {
  private readonly runs = new Map<string, RunRecord>();
  // Created by the first run with an Idempotency-Key: most sessions never get one.
  private idempotency: Map<string, string> | undefined;
  // Created by the first queued run (multitaskStrategy): most sessions never queue one.
  private waiting: RunQueue | undefined;

  constructor(
    private readonly deps: SessionRunsDeps,
    restored: readonly RunRecord[] = [],
    restoredQueue: readonly string[] = [],
    restoredAttachments: Readonly<Record<string, readonly AttachmentRef[]>> = {},
  ) {
    for (const run of restored) {
      this.runs.set(run.runId, run);
      if (run.idempotencyKey) (this.idempotency ??= new Map()).set(run.idempotencyKey, run.runId);
    }
    // The restored queue: its runs wait again with their inputs, in their order (SessionRunControl.resumeQueue starts them).
    for (const runId of restoredQueue) {
      const run = this.runs.get(runId);
      const attachments = Object.hasOwn(restoredAttachments, runId) ? restoredAttachments[runId] : undefined;
      if (run?.status === 'queued')
        this.queue().add(
          run,
          {
            input: run.input,
            idempotencyKey: run.idempotencyKey,
            multitaskStrategy: 'enqueue',
            ...(attachments && attachments.length > 0 ? { attachments: [...attachments] } : {}),
          },
          false,
        );
    }
    // A queued record its snapshot's queue does not list never starts: it reads as cancelled.
    for (const run of restored)
      if (run.status === 'queued' && this.queue().position(run.runId) === undefined) {
        run.status = 'cancelled';
        run.error = { code: 'CANCELLED', message: 'the queued run was not in the saved run queue' };
      }
  }

  /** The session's run queue (built on first use). */
  queue(): RunQueue {
    this.waiting ??= new RunQueue();
    return this.waiting;
  }

  /** Runs waiting in the run queue. */
  get queuedCount(): number {
    return this.waiting?.size ?? 0;
  }

  /** The ids of the runs waiting in the run queue, in the order they start (what a snapshot keeps). */
  queuedIds(): string[] {
    return this.waiting?.ids() ?? [];
  }

  /** The attachment references of the queued runs that have any, by run id (what a snapshot keeps). */
  queuedAttachments(): Record<string, AttachmentRef[]> {
    const out: Record<string, AttachmentRef[]> = {};
    for (const entry of this.waiting?.waiting() ?? [])
      if (entry.request.attachments && entry.request.attachments.length > 0)
        out[entry.record.runId] = [...entry.request.attachments];
    return out;
  }

  /** The live record of a run, if the session keeps it. */
  get(runId: string): RunRecord | undefined {
    return this.runs.get(runId);
  }

  /** The live record of the run an idempotency key admitted, if the session still keeps it. */
  byIdempotencyKey(key: string): RunRecord | undefined {
    const runId = this.idempotency?.get(key);
    return runId ? this.runs.get(runId) : undefined;
  }

  /** A copy of one run record with its event counts (RUN_NOT_FOUND when unknown). */
  require(runId: string): RunRecord {
    const run = this.runs.get(runId);
    if (!run)
      throw new CodeError('RUN_NOT_FOUND', `run ${runId} not found in session ${this.deps.sessionId}`, { runId });
    return this.withCounts(run);
  }

  /** Copies of every run record with their event counts, oldest first. */
  list(): RunRecord[] {
    return [...this.runs.values()].map((r) => this.withCounts(r));
  }

  /** The newest run's `{id, status}` (the active one while a run is active), null before the first run. */
  last(): { id: string; status: RunRecord['status'] } | null {
    let newest: RunRecord | undefined;
    for (const run of this.runs.values()) newest = run;
    return newest ? { id: newest.runId, status: newest.status } : null;
  }

  /** A copy of a record with its current event counts. */
  withCounts(record: RunRecord): RunRecord {
    const counts = this.deps.events.runCounts(record.runId);
    return {
      ...record,
      eventCount: Math.max(record.eventCount, counts.total),
      firstRetainedSequence: counts.firstRetained,
    };
  }

  /** Record a newly admitted run (status created, or queued); terminal runs beyond retention are dropped. */
  create(runId: string, request: RunRecordRequest, status: 'created' | 'queued' = 'created'): RunRecord {
    const record: RunRecord = {
      runId,
      sessionId: this.deps.sessionId,
      status,
      input: request.input,
      sideQuestion: request.resumeFrom ? request.resumeFrom.side_question : request.history !== undefined,
      createdAtMs: this.deps.hostEnv.now(),
      eventCount: 0,
      firstRetainedSequence: 0,
      ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
      ...(request.resumeFrom
        ? { metadata: { resumed_from_run_id: request.resumeFrom.run_id, resumed_from_turn: request.resumeFrom.turn } }
        : {}),
    };
    this.runs.set(runId, record);
    if (request.idempotencyKey !== undefined) (this.idempotency ??= new Map()).set(request.idempotencyKey, runId);
    this.trim();
    return record;
  }

  /** Move a run to a new status and emit run_status_changed; a terminal run never changes again. */
  setStatus(record: RunRecord, to: RunRecord['status']): void {
    const from = record.status;
    if (from === to || isTerminal(from)) return;
    record.status = to;
    this.deps.emit(record.runId, 'run_status_changed', { from, to });
  }

  /** Record that a run in flight on a node that died is lost (status failed, error NODE_LOST). */
  markLost(runId: string, input: string, createdAtMs?: number): void {
    const { hostEnv, sessionId } = this.deps;
    const existing = this.runs.get(runId);
    if (existing && isTerminal(existing.status)) return;
    const record: RunRecord = existing ?? {
      runId,
      sessionId,
      status: 'executing',
      input,
      sideQuestion: false,
      createdAtMs: createdAtMs ?? hostEnv.now(),
      eventCount: 0,
      firstRetainedSequence: 0,
    };
    this.runs.set(runId, record);
    record.error = { code: 'NODE_LOST', message: 'the node running this run was lost' };
    record.endedAtMs = hostEnv.now();
    this.setStatus(record, 'failed');
    this.deps.emit(runId, 'error', { code: 'NODE_LOST', message: `run ${runId} failed: node_lost` });
  }

  private trim(): void {
    const max = this.deps.maxRuns;
    if (this.runs.size <= max) return;
    for (const [runId, run] of this.runs) {
      if (this.runs.size <= max) break;
      if (isTerminal(run.status)) {
        this.runs.delete(runId);
        if (run.idempotencyKey) this.idempotency?.delete(run.idempotencyKey);
        this.deps.events.dropRun(runId);
      }
    }
  }
}
