import { CodeError } from '../../errors.js';
import type { MultitaskStrategy } from '../../protocol/multitask-strategy.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { InterruptBody, RunControlReceipt, RunControlSnapshot, SteerBody } from '../../protocol/run-control.js';
import { RunControlRequests } from './run-control-requests.js';
import type { QueuedRun } from './run-queue.js';
import type { SessionSlashCommands } from '../commands/session-slash-commands.js';
import { linkAbort } from '../signals/link-abort.js';
import type { TenantQuotas } from '../quotas/tenant-quotas.js';
import type { RunHandle, RunRequest } from './run-handle.js';
import { produceRun } from './run-producer.js';
import { sessionInvocationContext } from './session-invocation-context.js';
import { SessionRunHost, type SessionRunParts } from './session-run-host.js';
import { isTerminal } from './session-runs.js';
import type { SingleFlight } from './single-flight.js';
import type { ControlLane } from '../queue/lane-command.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import { linkRunWebhook } from './run-webhook-link.js';

/** How the active run is asked to stop other than by its abort signal alone. */
interface RunStops {
  readonly runId: string;
  /** Its steer and interrupt requests, and the safe-point stop multitaskStrategy interrupt sets too. */
  readonly safePoint: RunControlRequests;
  readonly rollback: { byRunId: string | undefined };
}

/** What run admission and control need from their session. */
export interface SessionRunControlDeps extends SessionRunParts {
  readonly flight: SingleFlight;
  /** Told when a run ended: the session notes the activity and re-measures what it holds. */
  readonly activity: { runEnded(): void };
  /** The tenants' run quotas (concurrent runs, runs per minute); absent: none. */
  readonly quotas: TenantQuotas | undefined;
  /** The session's lane queue: a cancel is a control operation (the control lane). */
  readonly queue: ControlLane | undefined;
  /** The session's event log: a run's webhook that wants confirmation_required listens to it. */
  readonly events: SessionEventLog;
}

/**
 * A session's runs: single-flight admission with idempotency keys, the lease kept until the producer ends, a
 * parent's signal linked to a child's run, cancellation, the current run and the records of its runs.
 */
export class SessionRunControl {
  /** Built by the first run (or the first slash-command request): an idle session keeps none of it. */
  private runHost: SessionRunHost | undefined;
  /** The active run's stop requests (a safe-point stop, a rollback). */
  private stops: RunStops | undefined;

  /** The last ended run's requests: its control snapshot stays readable (the session keeps one, not one per run). */
  private lastControlled: RunControlRequests | undefined;

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

  /** Stop the active run, if any, and wait for it to end (closing the session); the queue is settled with it. */
  async abortAndWait(reason: Error): Promise<void> {
    await this.deps.flight.abortAndWait(reason);
    this.startNext();
  }

  /** The session's slash commands (built-ins, config `commands`, POST .../commands). */
  commands(): SessionSlashCommands {
    return this.host.commands();
  }

  /** The run an earlier request started with this Idempotency-Key, if any (still running, queued or ended). */
  forIdempotencyKey(key: string): RunHandle | undefined {
    const { records, flight } = this.deps;
    const existing = records.byIdempotencyKey(key);
    if (!existing) return undefined;
    const runId = existing.runId;
    const waiting = records.queuedCount > 0 ? records.queue().doneOf(runId) : undefined;
    const done = flight.doneOf(runId) ?? waiting ?? Promise.resolve(existing);
    const position = records.queuedCount > 0 ? records.queue().position(runId) : undefined;
    return {
      record: records.withCounts(existing),
      done: done.then((r) => records.withCounts(r)),
      existing: true,
      ...(position !== undefined ? { queuePosition: position } : {}),
    };
  }

  /**
   * Admit a run (single flight): while another run is active (or runs wait in the queue) the request's
   * multitaskStrategy decides: reject (default) fails at once with SESSION_BUSY before the transcript is read;
   * enqueue, interrupt and rollback queue it (docs/runs.md). With a known idempotency key, returns the existing run.
   */
  start(request: RunRequest): RunHandle {
    const { config, records, flight, lifecycle, quotas } = this.deps;
    lifecycle.assertOpen();
    const existing = request.idempotencyKey !== undefined ? this.forIdempotencyKey(request.idempotencyKey) : undefined;
    if (existing) return existing;
    const strategy = request.multitaskStrategy ?? 'reject';
    const queued = records.queuedCount;
    if (strategy !== 'reject' && (flight.runId !== undefined || queued > 0)) return this.enqueue(request, strategy);
    flight.assertFree(config.sessionId);
    if (queued > 0) {
      const next = records.queue().ids()[0]!;
      throw new CodeError('SESSION_BUSY', `session ${config.sessionId} is busy with queued run ${next}`, {
        activeRunId: next,
      });
    }
    quotas?.admitRun(config.ownerTenantId);
    const record = records.create(this.deps.scope.hostEnv.newId('run'), request);
    const done = this.launch(record, request);
    return { record: { ...record }, done: done.then((r) => records.withCounts(r)), existing: false };
  }

  /** Run `fn` (a revert) under the run lease: SESSION_BUSY while a run is active or queued, and for runs meanwhile. */
  exclusive<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const { config, records, flight, lifecycle } = this.deps;
    lifecycle.assertOpen();
    if (records.queuedCount > 0) {
      const next = records.queue().ids()[0]!;
      throw new CodeError('SESSION_BUSY', `session ${config.sessionId} is busy with queued run ${next}`, {
        activeRunId: next,
      });
    }
    return flight.hold(config.sessionId, what, fn);
  }

  /**
   * Queue a run behind the active one (multitaskStrategy): last for enqueue, first for interrupt and rollback,
   * which also stop the active run (at its next safe point, or cancelled and rolled back). RUN_QUEUE_FULL past
   * limits.maxQueuedRuns; it counts toward the tenant's runs per minute now.
   */
  private enqueue(request: RunRequest, strategy: Exclude<MultitaskStrategy, 'reject'>): RunHandle {
    const { config, records, flight, quotas, scope, emit } = this.deps;
    const max = scope.agent.services.config.limits.maxQueuedRuns;
    const queue = records.queue();
    if (queue.size >= max)
      throw new CodeError(
        'RUN_QUEUE_FULL',
        `session ${config.sessionId} already has ${queue.size} queued runs: limits.maxQueuedRuns (${max})`,
        { limit: 'limits.maxQueuedRuns', maxQueuedRuns: max, queued: queue.size },
      );
    quotas?.admitQueuedRun(config.ownerTenantId);
    const runId = scope.hostEnv.newId('run');
    const record = records.create(runId, request, 'queued');
    const entry = queue.add(record, request, strategy !== 'enqueue');
    const position = queue.position(runId) ?? 1;
    emit(runId, 'run_queued', { run_id: runId, queue_position: position, strategy });
    const active = flight.runId;
    if (active !== undefined && strategy === 'interrupt')
      this.stopAtSafePoint(active, `the run was interrupted by run ${runId} (multitaskStrategy interrupt)`);
    if (active !== undefined && strategy === 'rollback') this.rollBack(active, runId);
    // A durable session keeps its queue: saved now, so a restart or a takeover starts it; the 202 waits for it.
    const saved = this.deps.persistence.saveIfAutoSave();
    return {
      record: records.withCounts(record),
      done: entry.done.then((r) => records.withCounts(r)),
      existing: false,
      queuePosition: position,
      saved,
    };
  }

  /**
   * Ask the active run `runId` to stop at its next safe point (before its next provider call: after its tool
   * round), keeping what it did; it ends cancelled with `reason`. False when `runId` is not the active run.
   */
  stopAtSafePoint(runId: string, reason: string): boolean {
    const stops = this.stops;
    if (stops?.runId !== runId || this.deps.flight.runId !== runId) return false;
    stops.safePoint.reason ??= reason;
    return true;
  }

  /**
   * Steer the active run `runId` (the seed's steer): queued for its next safe point, where it is appended as a
   * user message. RUN_NOT_FOUND for an unknown run, RUN_NOT_ACTIVE for one that is not running now.
   */
  steer(runId: string, body: SteerBody): RunControlReceipt {
    return this.controlled(runId).steer(body);
  }

  /** Interrupt the active run `runId`: at its next safe point, or now with `force` (like a cancel). */
  interrupt(runId: string, body: InterruptBody): RunControlReceipt {
    const requests = this.controlled(runId);
    const requestId = body.requestId ?? this.deps.scope.hostEnv.newId('interrupt');
    const reason = body.reason ?? 'the run was interrupted';
    if (body.force !== true) return requests.interrupt(requestId, reason);
    const receipt = requests.forceInterrupt(requestId, reason);
    this.deps.flight.abort(runId, new Error(reason));
    return receipt;
  }

  /** The seed's runControlSnapshot of run `runId` (its next turn id and revision; `active` false once it ended). */
  controlSnapshot(runId: string): RunControlSnapshot {
    const run = this.deps.records.require(runId);
    const stops = this.stops;
    if (stops?.runId === runId) return stops.safePoint.snapshot(true);
    if (this.lastControlled?.runId === runId) return this.lastControlled.snapshot(false);
    throw new CodeError(
      'RUN_NOT_ACTIVE',
      `run ${runId} is ${run.status}; only the active and the last run have a control snapshot`,
      {
        field: 'runId',
        runId,
        status: run.status,
      },
    );
  }

  /** The run control requests of the active run `runId`, or why it cannot be controlled. */
  private controlled(runId: string): RunControlRequests {
    const run = this.deps.records.require(runId);
    const stops = this.stops;
    if (stops?.runId !== runId || this.deps.flight.runId !== runId)
      throw new CodeError('RUN_NOT_ACTIVE', `run ${runId} is ${run.status}, not the session's active run`, {
        field: 'runId',
        runId,
        status: run.status,
      });
    return stops.safePoint;
  }

  /** Cancel the active run `runId` for `byRunId`'s rollback: it leaves the transcript as it found it. */
  private rollBack(runId: string, byRunId: string): void {
    const stops = this.stops;
    if (stops?.runId !== runId) return;
    stops.rollback.byRunId = byRunId;
    const record = this.deps.records.get(runId);
    if (record) record.metadata = { ...record.metadata, rolled_back_by: byRunId };
    this.deps.emit(runId, 'run_rolled_back', { by_run_id: byRunId });
    this.deps.flight.abort(runId, new Error(`rolled back by run ${byRunId}`));
  }

  /** Start the queued runs of a restored session (their queue was in its snapshot), when nothing runs. */
  resumeQueue(): void {
    if (this.deps.flight.runId === undefined) this.startNext();
  }

  /** Start the next queued run once the session is free; a closed session's queue is settled instead. */
  private startNext(): void {
    const { records, lifecycle, quotas, config } = this.deps;
    if (records.queuedCount === 0 || this.deps.flight.runId !== undefined) return;
    const queue = records.queue();
    if (lifecycle.isClosed) {
      // Shut down or passivated: the queue stays in the snapshot and starts where the session is next opened.
      if (lifecycle.keepsCheckpoints()) for (const entry of queue.waiting()) entry.settle(entry.record);
      else for (const entry of queue.drain()) this.cancelQueued(entry, 'the session closed');
      return;
    }
    const next = queue.shift()!;
    quotas?.startQueuedRun(config.ownerTenantId);
    records.setStatus(next.record, 'created');
    try {
      next.settle(this.launch(next.record, next.request));
    } catch (error) {
      // Never thrown into the ending run's completion: the queued run fails instead, and the next one starts.
      next.record.error = { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) };
      next.record.endedAtMs = this.deps.scope.hostEnv.now();
      records.setStatus(next.record, 'failed');
      quotas?.releaseRun(config.ownerTenantId);
      next.settle(next.record);
      this.startNext();
      return;
    }
    void this.deps.persistence.saveIfAutoSave();
  }

  /** A queued run that never starts: status cancelled, its waiters answered. */
  private cancelQueued(entry: QueuedRun, why: string): void {
    const { record } = entry;
    record.error = { code: 'CANCELLED', message: `the queued run was cancelled: ${why}` };
    record.endedAtMs = this.deps.scope.hostEnv.now();
    this.deps.records.setStatus(record, 'cancelled');
    entry.settle(record);
  }

  /** Give the lease to an admitted run and start its producer; answers its completion. */
  private launch(record: RunRecord, request: RunRequest): Promise<RunRecord> {
    const { sessionKey, scope, flight, lifecycle, quotas, transcript, config } = this.deps;
    const { ownership } = scope.agent.services;
    const runId = record.runId;
    const tenantId = config.ownerTenantId;
    const active = flight.take(runId, record);
    ownership.setActiveRun(sessionKey, runId);
    const { signal } = active.controller;
    const stops: RunStops = {
      runId,
      safePoint: new RunControlRequests(runId, () => scope.hostEnv.now(), {
        applied: (payload) => this.deps.emit(runId, 'run_control_applied', payload),
      }),
      rollback: { byRunId: undefined },
    };
    this.stops = stops;
    // A run after a revert drops the reverted messages for good; their runs' starts no longer index the transcript.
    if (!record.sideQuestion && transcript.reverted) {
      for (const dropped of transcript.reverted.runIds) delete this.deps.records.get(dropped)?.transcriptStart;
      transcript.dropReverted();
    }
    const transcriptBefore = transcript.messages;
    // A child's run is cancelled with the call that delegated it.
    const unlink = request.parentSignal ? linkAbort(request.parentSignal, active.controller) : undefined;
    const host = this.host;
    const webhook = linkRunWebhook(
      {
        webhooks: scope.agent.services.webhooks,
        config,
        events: this.deps.events,
        sessionKey,
        tenantId,
        withCounts: (run) => this.deps.records.withCounts(run),
      },
      record,
      { ...request, child: request.parentSignal !== undefined },
    );
    // One startsWith for ordinary runs: only an input starting with "/" can be a slash command (resumes never are).
    const command =
      request.input.startsWith('/') && !request.resumeFrom
        ? host.commands().produce(record, request.input, signal)
        : undefined;
    const produced =
      command ??
      produceRun(
        host,
        record,
        { ...request, safePoint: stops.safePoint, rollback: stops.rollback },
        sessionInvocationContext(host, runId, signal, runId),
        signal,
      );
    return flight.track(active, produced, () => {
      quotas?.releaseRun(tenantId);
      unlink?.();
      stops.safePoint.end();
      this.lastControlled = stops.safePoint;
      if (this.stops === stops) this.stops = undefined;
      // A rolled-back command run (which changes the transcript itself) is put back too.
      if (stops.rollback.byRunId !== undefined) transcript.messages = transcriptBefore;
      this.deps.activity.runEnded();
      webhook?.stop();
      // A session another node took over is that node's to report; a run stopped to be resumed (shutdown,
      // passivation) is its resumption's.
      const resumable = record.status === 'cancelled' && lifecycle.isClosed && lifecycle.keepsCheckpoints();
      if (!lifecycle.abandoned && !resumable) webhook?.ended(record);
      if (!lifecycle.abandoned) ownership.setActiveRun(sessionKey, undefined);
      this.startNext();
    });
  }

  /** Cancel the active run if it has this id; false when it is not active (RUN_NOT_FOUND when unknown). */
  cancelRun(runId: string): boolean {
    const queue = this.deps.queue;
    return queue === undefined ? this.abortRun(runId) : queue.control(() => this.abortRun(runId));
  }

  private abortRun(runId: string): boolean {
    const { records } = this.deps;
    const run = records.require(runId);
    if (run.status === 'queued') {
      const entry = records.queue().remove(runId);
      if (!entry) return false;
      this.cancelQueued(entry, 'cancel request');
      void this.deps.persistence.saveIfAutoSave();
      return true;
    }
    return !isTerminal(run.status) && this.deps.flight.abort(runId, new Error('cancelled'));
  }

  /** Cancel the active run (only when it has `runId`, if given) or the queued run `runId`; false when nothing matching runs or waits. Never throws (seed `cancel()`/`cancelRun()`). */
  cancel(runId?: string): boolean {
    const queue = this.deps.queue;
    return queue === undefined ? this.cancelActive(runId) : queue.control(() => this.cancelActive(runId));
  }

  private cancelActive(runId: string | undefined): boolean {
    // A queued run (multitaskStrategy) is taken out of the queue.
    if (runId !== undefined && this.deps.records.get(runId)?.status === 'queued') return this.abortRun(runId);
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
