import { CodeError } from '../../errors.js';
import type { ExternalTaskOutcome } from '../../protocol/queue.js';
import type { HostEnv } from '../ports/host-env.js';

/** Settled tasks a session remembers, so a late answer gets 409 EXTERNAL_TASK_SETTLED rather than 404 (oldest forgotten first). */
export const MAX_SETTLED_EXTERNAL_TASKS = 1000;

/** One task handed to the host (the seed's ExternalTask; `id` repeats `task_id`). */
export interface ExternalTask {
  readonly task_id: string;
  readonly id: string;
  readonly session_id: string;
  readonly lane: string;
  readonly command_type: string;
  readonly payload: unknown;
  readonly timeout_ms: number;
  readonly created_at_ms: number;
  readonly run_id?: string;
}

/** The host's answer to a task (the seed's completeExternalTask result). */
export interface HostAnswer {
  readonly success: boolean;
  readonly result?: unknown;
  readonly error?: string;
}

/** How a pending task ended. */
export type Settlement = { kind: 'answered'; answer: HostAnswer } | { kind: 'timed_out' } | { kind: 'cancelled' };

/** What is remembered of a settled task (the details of EXTERNAL_TASK_SETTLED). */
export interface SettledTask {
  readonly taskId: string;
  readonly outcome: ExternalTaskOutcome;
  readonly success: boolean;
  readonly settledAtMs: number;
  readonly error?: string;
  /** Why it was settled without the host, when that needs saying (`run_lost`: its run did not survive the node). */
  readonly reason?: string;
}

/** How a session's external tasks carry over a restart or move. */
export interface ExternalTasksRestore {
  /** Tasks unsettled in the snapshot the session was restored from: their run is lost, so each is settled as failed (reason run_lost). */
  readonly lostTasks?: readonly { readonly task_id: string }[];
  /** True while the session is stopping so another process or node takes its runs over (shutdown, move): cancelled tasks are kept for the snapshot. */
  readonly interrupted?: () => boolean;
}

interface PendingEntry {
  readonly task: ExternalTask;
  settle(settlement: Settlement): void;
}

/**
 * A session's external tasks: those awaiting the host (each settles once: answered, timed out or
 * cancelled) and a bounded record of settled ones.
 */
export class ExternalTasks {
  private readonly pending = new Map<string, PendingEntry>();
  private readonly settled = new Map<string, SettledTask>();
  /** Tasks cancelled because the session stopped for a restart or move (see `interrupted`): the snapshot keeps them as lost. */
  private readonly held = new Map<string, ExternalTask>();

  private readonly interrupted: () => boolean;

  constructor(
    private readonly hostEnv: HostEnv,
    restore: ExternalTasksRestore = {},
  ) {
    this.interrupted = restore.interrupted ?? (() => false);
    for (const task of restore.lostTasks ?? []) {
      this.remember({
        taskId: task.task_id,
        outcome: 'failed',
        success: false,
        settledAtMs: hostEnv.now(),
        error: 'run_lost: the run that waited for this task did not survive its node (restart or move)',
        reason: 'run_lost',
      });
    }
  }

  /** What a snapshot keeps: the tasks awaiting the host and those cancelled by a restart or move (a restored session settles them as run_lost). */
  unsettledAtStop(): ExternalTask[] {
    return [...this.list(), ...this.held.values()];
  }

  /** Tasks awaiting the host, oldest first. */
  list(): ExternalTask[] {
    return [...this.pending.values()].map((entry) => entry.task);
  }

  /** How many tasks await the host. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Hand a task out and wait until the host answers, `timeoutMs` passes or `signal` aborts. */
  wait(task: ExternalTask, signal: AbortSignal): Promise<Settlement> {
    if (signal.aborted) {
      this.remember({ taskId: task.task_id, outcome: 'cancelled', success: false, settledAtMs: this.hostEnv.now() });
      return Promise.resolve({ kind: 'cancelled' });
    }
    return new Promise((resolve) => {
      const settle = (settlement: Settlement): void => {
        if (!this.pending.delete(task.task_id)) return;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.remember(recordOf(task.task_id, settlement, this.hostEnv.now()));
        if (settlement.kind === 'cancelled' && this.interrupted()) this.held.set(task.task_id, task);
        resolve(settlement);
      };
      const onAbort = (): void => settle({ kind: 'cancelled' });
      const timer = setTimeout(() => settle({ kind: 'timed_out' }), task.timeout_ms);
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(task.task_id, { task, settle });
    });
  }

  /** Remember a settled task (bounded, oldest forgotten first); a hybrid lane records its tasks here at once, as the host cannot answer them. */
  remember(record: SettledTask): void {
    this.settled.delete(record.taskId);
    this.settled.set(record.taskId, record);
    while (this.settled.size > MAX_SETTLED_EXTERNAL_TASKS) {
      const oldest = this.settled.keys().next().value;
      if (oldest === undefined) break;
      this.settled.delete(oldest);
    }
  }

  /** The host's answer: settles a pending task; 409 EXTERNAL_TASK_SETTLED for a settled one, 404 EXTERNAL_TASK_NOT_FOUND otherwise. */
  complete(taskId: string, answer: HostAnswer): void {
    const entry = this.pending.get(taskId);
    if (entry) {
      entry.settle({ kind: 'answered', answer });
      return;
    }
    const settled = this.settled.get(taskId);
    if (settled) {
      const how =
        settled.outcome === 'internal'
          ? 'runs inside the server (a hybrid lane only notifies the host)'
          : `was already settled (${settled.outcome.replace('_', ' ')}${settled.reason !== undefined ? `: ${settled.reason}` : ''})`;
      throw new CodeError('EXTERNAL_TASK_SETTLED', `external task ${taskId} ${how}; the answer was not used`, {
        taskId,
        outcome: settled.outcome,
        success: settled.success,
        settledAtMs: settled.settledAtMs,
        ...(settled.error !== undefined ? { error: settled.error } : {}),
        ...(settled.reason !== undefined ? { reason: settled.reason } : {}),
      });
    }
    throw new CodeError('EXTERNAL_TASK_NOT_FOUND', `no external task ${taskId} in this session`, { taskId });
  }
}

function recordOf(taskId: string, settlement: Settlement, now: number): SettledTask {
  if (settlement.kind === 'answered') {
    const { success, error } = settlement.answer;
    return {
      taskId,
      outcome: success ? 'completed' : 'failed',
      success,
      settledAtMs: now,
      ...(error !== undefined ? { error } : {}),
    };
  }
  return { taskId, outcome: settlement.kind, success: false, settledAtMs: now };
}
