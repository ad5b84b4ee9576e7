import type { RunRecord } from '../../protocol/run-record.js';
import type { SessionSlashCommands } from '../commands/session-slash-commands.js';
import { linkAbort } from '../signals/link-abort.js';
import type { TenantQuotas } from '../quotas/tenant-quotas.js';
import type { RunHandle, RunRequest } from './run-handle.js';
import { produceRun } from './run-producer.js';
import { sessionInvocationContext } from './session-invocation-context.js';
import { SessionRunHost, type SessionRunParts } from './session-run-host.js';
import { isTerminal } from './session-runs.js';
import type { SingleFlight } from './single-flight.js';
import type { ControlLane } from '../queue/session-queue.js';

/** What run admission and control need from their session. */
export interface SessionRunControlDeps extends SessionRunParts {
  readonly flight: SingleFlight;
  /** Told when a run ended: the session notes the activity and re-measures what it holds. */
  readonly activity: { runEnded(): void };
  /** The tenants' run quotas (concurrent runs, runs per minute); absent: none. */
  readonly quotas: TenantQuotas | undefined;
  /** The session's lane queue: a cancel is a control operation (the control lane). */
  readonly queue: ControlLane | undefined;
}

/**
 * A session's runs: single-flight admission with idempotency keys, the lease kept until the producer ends, a
 * parent's signal linked to a child's run, cancellation, the current run and the records of its runs.
 */
export class SessionRunControl {
  /** Built by the first run (or the first slash-command request): an idle session keeps none of it. */
  private runHost: SessionRunHost | undefined;

  constructor(private readonly deps: SessionRunControlDeps) {}

  private get host(): SessionRunHost {
    this.runHost ??= new SessionRunHost(this.deps);
    return this.runHost;
  }

  /** The active run's id, if any. */
  get activeRunId(): string | undefined {
    return this.deps.flight.runId;
  }

  /** Run records, oldest first. */
  list(): RunRecord[] {
    return this.deps.records.list();
  }

  /** One run record (RUN_NOT_FOUND when unknown). */
  get(runId: string): RunRecord {
    return this.deps.records.require(runId);
  }

  /** The newest run's `{id, status}`, null before the first run. */
  last(): { id: string; status: RunRecord['status'] } | null {
    return this.deps.records.last();
  }

  /** Record that a run in flight on a node that died is lost (status failed, error NODE_LOST). */
  markLost(runId: string, input: string, createdAtMs?: number): void {
    this.deps.records.markLost(runId, input, createdAtMs);
  }

  /** Wait until no run is active, at most `timeoutMs` (passivation lets a run finish before its deadline). */
  waitIdle(timeoutMs: number): Promise<void> {
    return this.deps.flight.waitIdle(timeoutMs);
  }

  /** Stop the active run, if any, and wait for it to end (closing the session). */
  abortAndWait(reason: Error): Promise<void> {
    return this.deps.flight.abortAndWait(reason);
  }

  /** The session's slash commands (built-ins, config `commands`, POST .../commands). */
  commands(): SessionSlashCommands {
    return this.host.commands();
  }

  /** The run an earlier request started with this Idempotency-Key, if any (still running or ended). */
  forIdempotencyKey(key: string): RunHandle | undefined {
    const { records, flight } = this.deps;
    const existing = records.byIdempotencyKey(key);
    if (!existing) return undefined;
    const done = flight.doneOf(existing.runId) ?? Promise.resolve(existing);
    return { record: records.withCounts(existing), done: done.then((r) => records.withCounts(r)), existing: true };
  }

  /**
   * Admit a run (single flight): fails at once with SESSION_BUSY while another run is active, before the
   * transcript is read. With a known idempotency key, returns the existing run instead.
   */
  start(request: RunRequest): RunHandle {
    const { config, sessionKey, scope, records, flight, lifecycle, quotas } = this.deps;
    const { ownership } = scope.agent.services;
    lifecycle.assertOpen();
    const existing = request.idempotencyKey !== undefined ? this.forIdempotencyKey(request.idempotencyKey) : undefined;
    if (existing) return existing;
    flight.assertFree(config.sessionId);
    const tenantId = config.ownerTenantId;
    quotas?.admitRun(tenantId);
    const runId = scope.hostEnv.newId('run');
    const record = records.create(runId, request);
    const active = flight.take(runId, record);
    ownership.setActiveRun(sessionKey, runId);
    const { signal } = active.controller;
    // A child's run is cancelled with the call that delegated it.
    const unlink = request.parentSignal ? linkAbort(request.parentSignal, active.controller) : undefined;
    const host = this.host;
    // One startsWith for ordinary runs: only an input starting with "/" can be a slash command (resumes never are).
    const command =
      request.input.startsWith('/') && !request.resumeFrom
        ? host.commands().produce(record, request.input, signal)
        : undefined;
    const produced =
      command ?? produceRun(host, record, request, sessionInvocationContext(host, runId, signal, runId), signal);
    const done = flight.track(active, produced, () => {
      quotas?.releaseRun(tenantId);
      unlink?.();
      this.deps.activity.runEnded();
      if (!lifecycle.abandoned) ownership.setActiveRun(sessionKey, undefined);
    });
    return { record: { ...record }, done: done.then((r) => records.withCounts(r)), existing: false };
  }

  /** Cancel the active run if it has this id; false when it is not active (RUN_NOT_FOUND when unknown). */
  cancelRun(runId: string): boolean {
    const queue = this.deps.queue;
    return queue === undefined ? this.abortRun(runId) : queue.control(() => this.abortRun(runId));
  }

  private abortRun(runId: string): boolean {
    const run = this.deps.records.require(runId);
    return !isTerminal(run.status) && this.deps.flight.abort(runId, new Error('cancelled'));
  }

  /** Cancel the active run (only when it has `runId`, if given); false when nothing matching runs. Never throws (seed `cancel()`/`cancelRun()`). */
  cancel(runId?: string): boolean {
    const queue = this.deps.queue;
    return queue === undefined ? this.cancelActive(runId) : queue.control(() => this.cancelActive(runId));
  }

  private cancelActive(runId: string | undefined): boolean {
    const active = this.deps.flight.runId;
    if (active === undefined || (runId !== undefined && runId !== active)) return false;
    return this.abortRun(active);
  }

  /** The active run's snapshot `{id, status}`, or null when idle (seed `currentRun()`). */
  current(): { id: string; status: RunRecord['status'] } | null {
    const active = this.deps.flight.runId;
    const run = active === undefined ? undefined : this.deps.records.get(active);
    return active === undefined ? null : { id: active, status: run?.status ?? 'created' };
  }
}
