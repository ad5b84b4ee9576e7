import type { RunRecord } from '../../protocol/run-record.js';
import { linkAbort } from '../signals/link-abort.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { HostEnv } from '../ports/host-env.js';
import type { SessionOwnership } from '../ports/session-ownership.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { RunHandle, RunRequest } from './run-handle.js';
import { produceRun, type RunProducerHost } from './run-producer.js';
import { isTerminal, type SessionRuns } from './session-runs.js';
import type { SingleFlight } from './single-flight.js';

/** What run admission and control need from their session. */
export interface SessionRunControlDeps {
  readonly sessionId: string;
  /** The session's key (tenant and id), which its active-run marker is kept under. */
  readonly sessionKey: SessionKey;
  readonly hostEnv: HostEnv;
  readonly ownership: SessionOwnership;
  readonly runs: SessionRuns;
  readonly flight: SingleFlight;
  /** What each run's producer uses of the session (built per run: an idle session keeps none of it). */
  producer(): RunProducerHost;
  /** Throw SESSION_CLOSED when the session is closed. */
  assertOpen(): void;
  /** The invocation context of a run. */
  context(runId: string, signal: AbortSignal): InvocationContext;
  /** The run of a slash command input (`/name args`), or undefined when the input is no command (it goes to the model). */
  commandRun?(record: RunRecord, input: string, signal: AbortSignal): Promise<RunRecord> | undefined;
  /** Note activity (a run just ended). */
  touch(): void;
  /** True once another node took the session over. */
  abandoned(): boolean;
  /** The tenant's run quota: `admit` throws QUOTA_EXCEEDED (concurrent runs, runs per minute), `release` when the run ends. */
  readonly quota?: { admit(): void; release(): void };
}

/**
 * A session's run admission and control: single-flight admission with idempotency keys, the lease kept
 * until the producer ends, a parent's signal linked to a child's run, cancellation and the current run.
 */
export class SessionRunControl {
  constructor(private readonly deps: SessionRunControlDeps) {}

  /** The run an earlier request started with this Idempotency-Key, if any (still running or ended). */
  forIdempotencyKey(key: string): RunHandle | undefined {
    const { runs, flight } = this.deps;
    const existing = runs.byIdempotencyKey(key);
    if (!existing) return undefined;
    const done = flight.doneOf(existing.runId) ?? Promise.resolve(existing);
    return { record: runs.withCounts(existing), done: done.then((r) => runs.withCounts(r)), existing: true };
  }

  /**
   * Admit a run (single flight): fails at once with SESSION_BUSY while another run is active, before the
   * transcript is read. With a known idempotency key, returns the existing run instead.
   */
  start(request: RunRequest): RunHandle {
    const { sessionId, sessionKey, hostEnv, ownership, runs, flight } = this.deps;
    this.deps.assertOpen();
    const existing = request.idempotencyKey !== undefined ? this.forIdempotencyKey(request.idempotencyKey) : undefined;
    if (existing) return existing;
    flight.assertFree(sessionId);
    this.deps.quota?.admit();
    const runId = hostEnv.newId('run');
    const record = runs.create(runId, request);
    const active = flight.take(runId, record);
    ownership.setActiveRun(sessionKey, runId);
    const { signal } = active.controller;
    // A child's run is cancelled with the call that delegated it.
    const unlink = request.parentSignal ? linkAbort(request.parentSignal, active.controller) : undefined;
    // One startsWith for ordinary runs: only an input starting with "/" can be a slash command (resumes never are).
    const command = request.input.startsWith('/') && !request.resumeFrom ? this.deps.commandRun?.(record, request.input, signal) : undefined;
    const produced = command ?? produceRun(this.deps.producer(), record, request, this.deps.context(runId, signal), signal);
    const done = flight.track(active, produced, () => {
      this.deps.quota?.release();
      unlink?.();
      this.deps.touch();
      if (!this.deps.abandoned()) ownership.setActiveRun(sessionKey, undefined);
    });
    return { record: { ...record }, done: done.then((r) => runs.withCounts(r)), existing: false };
  }

  /** Cancel the active run if it has this id; false when it is not active (RUN_NOT_FOUND when unknown). */
  cancelRun(runId: string): boolean {
    const run = this.deps.runs.require(runId);
    return !isTerminal(run.status) && this.deps.flight.abort(runId, new Error('cancelled'));
  }

  /** Cancel the active run (only when it has `runId`, if given); false when nothing matching runs. Never throws. */
  cancel(runId?: string): boolean {
    const active = this.deps.flight.runId;
    if (active === undefined || (runId !== undefined && runId !== active)) return false;
    return this.cancelRun(active);
  }

  /** The active run's snapshot `{id, status}`, or null when idle. */
  currentRun(): { id: string; status: RunRecord['status'] } | null {
    const active = this.deps.flight.runId;
    const run = active === undefined ? undefined : this.deps.runs.get(active);
    return active === undefined ? null : { id: active, status: run?.status ?? 'created' };
  }
}
