import { CodeError } from '../../errors.js';
import { abortableDelay } from '../signals/abortable-delay.js';
import type { DeadLetter, Lane, LaneHandlerMode, QueueStats } from '../../protocol/queue.js';
import type { QueueMetrics } from '../../protocol/queue-metrics.js';
import type { EventSink } from '../invocation/invocation-context.js';
import type { HostEnv } from '../ports/host-env.js';
import type { ProviderCallLane, ProviderCallRelease } from '../ports/provider-call-lane.js';
import type { ToolResult } from '../tools/define-tool.js';
import { externalTaskResult } from './external-task-result.js';
import { ExternalTasks, type ExternalTask, type ExternalTasksRestore, type HostAnswer } from './external-tasks.js';
import { LANE_PRIORITY, LANES, laneForTool, seedLaneName } from './lane-map.js';
import type { ControlLane, ExecutionBound, LaneCommand } from './lane-command.js';
import { LaneSlots } from './lane-slots.js';
import { QueueAlerts } from './queue-alerts.js';
import { laneOutcome, QueueMetricsRecorder } from './queue-metrics-recorder.js';
import { laneTimeout, retryDelayMs, type LaneSettings, type QueueSettings } from './queue-settings.js';

interface LaneState extends LaneSettings {
  readonly slots: LaneSlots;
}

/**
 * A session's lane queue (SessionOptions.queueConfig): every governed tool call waits for a slot of its
 * lane, then runs here (internal), is handed to the host and awaited (external), or runs here while the
 * host is notified (hybrid). Only sessions with a queueConfig have one.
 */
export class SessionQueue implements ControlLane {
  private readonly lanes: Record<Lane, LaneState>;
  private readonly external: ExternalTasks;
  private readonly dead: DeadLetter[] = [];
  /** enableMetrics: counters and latencies; undefined (nothing recorded) without. */
  private readonly recorder: QueueMetricsRecorder | undefined;
  /** enableAlerts: queue_alert for a deep or slow lane; undefined without. */
  private readonly alerts: QueueAlerts | undefined;
  /** The generate lane as the LLM invoker sees it (made on first use). */
  private providerLane: ProviderCallLane | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly settings: QueueSettings,
    private readonly hostEnv: HostEnv,
    /** The restored session's lost external tasks, and when cancelled tasks are kept for the snapshot (see ExternalTasksRestore). */
    restore: ExternalTasksRestore = {},
  ) {
    this.lanes = Object.fromEntries(
      LANES.map((lane) => [
        lane,
        { ...settings.lanes[lane], slots: new LaneSlots(settings.lanes[lane].maxConcurrency) },
      ]),
    ) as Record<Lane, LaneState>;
    this.external = new ExternalTasks(hostEnv, restore);
    this.recorder = settings.metrics ? new QueueMetricsRecorder() : undefined;
    this.alerts = settings.alerts ? new QueueAlerts() : undefined;
  }

  /** The seed's queueMetrics: `{counters, gauges, histograms}` per lane, or null without enableMetrics. */
  metrics(): QueueMetrics | null {
    if (!this.recorder) return null;
    const external = this.external.list();
    return this.recorder.snapshot((lane) => ({
      pending: this.lanes[lane].slots.pending,
      active: this.lanes[lane].slots.active,
      external_pending: external.filter((task) => task.lane === seedLaneName(lane)).length,
    }));
  }

  /** The counters per lane (for /metrics), or undefined without enableMetrics. */
  counters(): QueueMetrics['counters'] | undefined {
    return this.recorder?.counters();
  }

  /** Submit a call (see `submitCall`), counting it and its outcome with enableMetrics. */
  async submit(command: LaneCommand): Promise<ToolResult> {
    const recorder = this.recorder;
    if (!recorder) return this.submitCall(command);
    const lane = laneForTool(command.commandType);
    recorder.count(lane, 'submitted');
    const result = await this.submitCall(command);
    recorder.count(lane, laneOutcome(result));
    return result;
  }

  /**
   * Wait for the call's lane slot, then run it as the lane's handler mode says; a retryable fault (a lane
   * timeout, a host failure) is tried again per retryPolicy (command_retry, the slot given back while
   * waiting), and one that stays failed is dead-lettered with enableDlq. Never throws for the call's faults.
   */
  private async submitCall(command: LaneCommand): Promise<ToolResult> {
    const lane = laneForTool(command.commandType);
    let admitted = false;
    const once: LaneCommand = {
      ...command,
      admitted: () => {
        if (!admitted) command.admitted();
        admitted = true;
      },
    };
    const { retry } = this.settings;
    for (let attempt = 1; ; attempt += 1) {
      const result = await this.attempt(lane, once);
      if (!retryable(result) || command.signal.aborted) return result;
      if (attempt > retry.maxRetries) {
        this.deadLetter(lane, command, result, attempt);
        return result;
      }
      const delayMs = retryDelayMs(retry, attempt);
      this.recorder?.count(lane, 'retried');
      command.emit('command_retry', {
        command_id: command.id,
        command_type: command.commandType,
        lane,
        attempt: attempt + 1,
        delay_ms: delayMs,
      });
      if (!(await abortableDelay(delayMs, command.signal)))
        return command.stopped(`while waiting to retry (attempt ${attempt + 1})`);
    }
  }

  /**
   * The generate lane for provider requests: each request of the session (and of its task children) waits for
   * one of its `generateConcurrency` slots, first come first served, and holds it until the response ends.
   */
  generateLane(): ProviderCallLane {
    return (this.providerLane ??= { enter: (signal, emit) => this.enterGenerate(signal, emit) });
  }

  private async enterGenerate(signal: AbortSignal, emit: EventSink): Promise<ProviderCallRelease | undefined> {
    const state = this.lanes.generate;
    const queuedAtMs = this.hostEnv.now();
    const slot = state.slots.acquire(signal);
    this.recorder?.count('generate', 'submitted');
    this.alerts?.depth('generate', state.slots.pending, state.maxConcurrency, emit);
    const release = await slot;
    if (!release) {
      this.recorder?.count('generate', 'cancelled');
      return undefined;
    }
    const admittedAtMs = this.hostEnv.now();
    this.recorder?.waited('generate', admittedAtMs - queuedAtMs);
    this.alerts?.waited('generate', admittedAtMs - queuedAtMs, state.timeoutMs, emit);
    return (ok) => {
      this.recorder?.ran('generate', this.hostEnv.now() - admittedAtMs);
      this.recorder?.count('generate', ok ? 'completed' : 'failed');
      release();
    };
  }

  /**
   * A control operation of the session (a cancel, a confirmation answer, an external task's completion, a lane
   * handler change) through the control lane: it holds a control slot while it runs and is counted with
   * enableMetrics. Each completes synchronously, so control operations never wait for one another or for
   * any other lane (control has the highest priority and slots of its own).
   */
  control<T>(operation: () => T): T {
    const release = this.lanes.control.slots.tryAcquire();
    const recorder = this.recorder;
    const startedAtMs = this.hostEnv.now();
    recorder?.count('control', 'submitted');
    let ok = false;
    try {
      const result = operation();
      ok = true;
      return result;
    } finally {
      recorder?.ran('control', this.hostEnv.now() - startedAtMs);
      recorder?.count('control', ok ? 'completed' : 'failed');
      release?.();
    }
  }

  /** Dead letters, oldest first (the seed's deadLetters; empty without enableDlq). */
  deadLetters(): DeadLetter[] {
    return [...this.dead];
  }

  private deadLetter(lane: Lane, command: LaneCommand, result: ToolResult, attempts: number): void {
    const max = this.settings.dlqMaxSize;
    if (max === undefined) return;
    this.dead.push({
      command_id: command.id,
      command_type: command.commandType,
      lane,
      error: result.output,
      attempts,
      payload: command.payload,
      dead_lettered_at_ms: this.hostEnv.now(),
      ...(command.runId !== undefined ? { run_id: command.runId } : {}),
    });
    if (this.dead.length > max) this.dead.splice(0, this.dead.length - max);
    this.recorder?.count(lane, 'dead_lettered');
    command.emit('command_dead_lettered', {
      command_id: command.id,
      command_type: command.commandType,
      lane,
      error: result.output,
      attempts,
    });
  }

  /** One attempt: the lane's slot, then the handler. */
  private async attempt(lane: Lane, command: LaneCommand): Promise<ToolResult> {
    const queuedAtMs = this.hostEnv.now();
    const slot = this.lanes[lane].slots.acquire(command.signal);
    this.alerts?.depth(lane, this.lanes[lane].slots.pending, this.lanes[lane].maxConcurrency, command.emit);
    const release = await slot;
    if (!release) return command.stopped(`while waiting in the ${lane} lane`);
    const admittedAtMs = this.observeAdmission(lane, command, queuedAtMs);
    try {
      // The mode is read when the call gets its slot: a PUT .../queue/lanes/:lane applies to calls still waiting.
      const state = this.lanes[lane];
      command.admitted();
      if (state.mode === 'internal') return await command.internal(this.bound());
      if (state.mode === 'hybrid') return await this.hybrid(lane, state, command);
      return await this.handOut(lane, state, command);
    } finally {
      this.recorder?.ran(lane, this.hostEnv.now() - admittedAtMs);
      release();
    }
  }

  /** A call got its slot: record its wait and check the alerts (a lane recovers here). Returns the time (ms). */
  private observeAdmission(lane: Lane, command: LaneCommand, queuedAtMs: number): number {
    const now = this.hostEnv.now();
    if (!this.recorder && !this.alerts) return now;
    const state = this.lanes[lane];
    this.recorder?.waited(lane, now - queuedAtMs);
    this.alerts?.waited(lane, now - queuedAtMs, state.timeoutMs, command.emit);
    this.alerts?.depth(lane, state.slots.pending, state.maxConcurrency, command.emit);
    return now;
  }

  /** Set a lane's handler mode and timeout (the seed's setLaneHandler); an omitted timeout is the lane default. */
  setLaneHandler(lane: Lane, mode: LaneHandlerMode, timeoutMs: number | undefined): QueueStats['lanes'][number] {
    assertInternalOnly(lane, mode, 'mode');
    return this.control(() => this.applyLaneHandler(lane, mode, timeoutMs));
  }

  private applyLaneHandler(
    lane: Lane,
    mode: LaneHandlerMode,
    timeoutMs: number | undefined,
  ): QueueStats['lanes'][number] {
    const state = this.lanes[lane];
    this.lanes[lane] = {
      ...state,
      mode,
      ...laneTimeout(lane, timeoutMs, this.settings.timeoutMs, `the timeoutMs of PUT .../queue/lanes/${lane}`),
    };
    return this.laneStats(lane);
  }

  /** Tasks awaiting the host (the seed's pendingExternalTasks). */
  pendingExternalTasks(): ExternalTask[] {
    return this.external.list();
  }

  /** External tasks a snapshot keeps: awaiting the host, or cancelled by a restart or move (settled as run_lost when restored). */
  snapshotExternalTasks(): ExternalTask[] {
    return this.external.unsettledAtStop();
  }

  /** The host's answer to an external task (the seed's completeExternalTask); throws 404/409 CodeErrors. */
  completeExternalTask(taskId: string, answer: HostAnswer): void {
    this.control(() => this.external.complete(taskId, answer));
  }

  /** The seed's queueStats, with per-lane figures. */
  stats(): QueueStats {
    const lanes = LANES.map((lane) => this.laneStats(lane));
    return {
      totalPending: lanes.reduce((sum, lane) => sum + lane.pending, 0),
      totalActive: lanes.reduce((sum, lane) => sum + lane.active, 0),
      externalPending: this.external.pendingCount,
      lanes,
    };
  }

  private laneStats(lane: Lane): QueueStats['lanes'][number] {
    const state = this.lanes[lane];
    return {
      lane,
      pending: state.slots.pending,
      active: state.slots.active,
      maxConcurrency: state.maxConcurrency,
      handlerMode: state.mode,
      priority: LANE_PRIORITY[lane],
      timeoutMs: state.timeoutMs,
    };
  }

  private bound(): ExecutionBound | undefined {
    return this.settings.timeoutMs !== undefined
      ? { ms: this.settings.timeoutMs, source: 'queueConfig.timeoutMs' }
      : undefined;
  }

  private task(lane: Lane, state: LaneState, command: LaneCommand): ExternalTask {
    const taskId = this.hostEnv.newId('ext');
    const task: ExternalTask = {
      task_id: taskId,
      id: taskId,
      session_id: this.sessionId,
      lane: seedLaneName(lane),
      command_type: command.commandType,
      payload: command.payload,
      timeout_ms: state.timeoutMs,
      created_at_ms: this.hostEnv.now(),
      ...(command.runId !== undefined ? { run_id: command.runId } : {}),
    };
    command.emit('external_task_pending', {
      task_id: taskId,
      session_id: this.sessionId,
      lane: task.lane,
      command_type: task.command_type,
      payload: task.payload,
      timeout_ms: task.timeout_ms,
    });
    return task;
  }

  /** External: hand the call to the host and wait for its answer, the lane timeout or the run's cancel. */
  private async handOut(lane: Lane, state: LaneState, command: LaneCommand): Promise<ToolResult> {
    const task = this.task(lane, state, command);
    const settlement = await this.external.wait(task, command.signal);
    command.emit('external_task_completed', {
      task_id: task.task_id,
      session_id: this.sessionId,
      success: settlement.kind === 'answered' && settlement.answer.success,
    });
    return externalTaskResult(task, settlement, state, command);
  }

  /** Hybrid: run here and notify the host with external_task_pending / external_task_completed. */
  private async hybrid(lane: Lane, state: LaneState, command: LaneCommand): Promise<ToolResult> {
    const task = this.task(lane, state, command);
    this.external.remember({
      taskId: task.task_id,
      outcome: 'internal',
      success: false,
      settledAtMs: this.hostEnv.now(),
    });
    const result = await command.internal(this.bound());
    const success = result.exitCode === 0;
    this.external.remember({ taskId: task.task_id, outcome: 'internal', success, settledAtMs: this.hostEnv.now() });
    command.emit('external_task_completed', { task_id: task.task_id, session_id: this.sessionId, success });
    return { ...result, metadata: { ...result.metadata, external_task_id: task.task_id, lane_mode: 'hybrid' } };
  }
}

/**
 * The control and generate lanes run here only: a control operation is the server's own, and a provider
 * request is not a task a host could run. Another mode is UNSUPPORTED_OPTION naming `field`.
 */
export function assertInternalOnly(lane: Lane, mode: LaneHandlerMode | undefined, field: string): void {
  if (mode === undefined || mode === 'internal' || (lane !== 'control' && lane !== 'generate')) return;
  throw new CodeError(
    'UNSUPPORTED_OPTION',
    `${field}: the ${lane} lane runs its ${lane === 'generate' ? 'provider requests' : 'control operations'} here ("internal" only); "${mode}" would hand them to the host, which this server does not do`,
    { field, options: [field] },
  );
}

/** A fault the lane may retry: a lane or tool timeout, or a host that reported failure (never a cancel). */
function retryable(result: ToolResult): boolean {
  const meta = result.metadata ?? {};
  if (meta.cancelled === true || meta.limit === 'maxExecutionTimeMs') return false;
  return meta.timed_out === true || meta.external_failed === true;
}
