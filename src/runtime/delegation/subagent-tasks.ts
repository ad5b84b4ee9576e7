import { CodeError } from '../../errors.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { SubagentTaskSnapshot } from '../../protocol/subagent-task.js';
import type { ChildSession } from './child-session.js';

/** A live task: its snapshot, and while it runs, its child and the controller that cancels it. */
interface LiveTask {
  snapshot: SubagentTaskSnapshot;
  child?: ChildSession;
  controller?: AbortController;
}

/**
 * A session's subagent tasks, oldest first: queued and running ones (with their children), terminal ones bounded
 * by `maxTerminal` (the oldest terminal task is dropped first; a queued or running task is never dropped). Only the
 * newest `keepFinishedChildren` finished children stay live sessions. Restored tasks that were queued or running when saved are marked failed: their children did not survive.
 */
export class SubagentTasks {
  /** Created on the first task: most sessions never delegate. */
  private byId: Map<string, LiveTask> | undefined;

  private get tasks(): Map<string, LiveTask> {
    this.byId ??= new Map();
    return this.byId;
  }

  constructor(
    private readonly maxTerminal: number,
    /** Finished children kept live (newest first) so their transcript and events can still be read; older ones are closed. */
    private readonly keepFinishedChildren: number,
    private readonly now: () => number,
    restored: readonly SubagentTaskSnapshot[] = [],
  ) {
    for (const snapshot of restored) {
      const interrupted = !isTerminal(snapshot.status);
      this.tasks.set(snapshot.task_id, {
        snapshot: interrupted
          ? {
              ...snapshot,
              status: 'failed',
              success: false,
              finished_ms: snapshot.finished_ms ?? now(),
              error: {
                code: 'NODE_LOST',
                message: `the task was ${snapshot.status} when its session was saved; its child did not survive the restore`,
              },
            }
          : snapshot,
      });
    }
  }

  /** Record a task that starts now, or (status `queued`) waits for a slot. */
  add(snapshot: SubagentTaskSnapshot, controller: AbortController): void {
    this.tasks.set(snapshot.task_id, { snapshot, controller });
  }

  /** A queued task got its slot: it runs from now. */
  start(taskId: string): void {
    const task = this.tasks.get(taskId);
    if (!task || task.snapshot.status !== 'queued') return;
    task.snapshot = { ...task.snapshot, status: 'running', started_ms: this.now() };
  }

  /** Attach the task's child session once it exists. */
  attach(taskId: string, child: ChildSession, runId: string): void {
    const task = this.tasks.get(taskId);
    if (!task) return;
    task.child = child;
    task.snapshot.session_id = child.id;
    task.snapshot.run_id = runId;
  }

  /** Record how a task ended (from its child's run record, or a failure before it ran) and apply retention. */
  finish(
    taskId: string,
    outcome: {
      status: 'completed' | 'failed' | 'cancelled';
      output: string | null;
      error: SubagentTaskSnapshot['error'];
      structured?: unknown;
      usage?: RunRecord['result'];
    },
  ): SubagentTaskSnapshot | undefined {
    const task = this.tasks.get(taskId);
    if (!task) return undefined;
    const usage = outcome.usage;
    task.snapshot = {
      ...task.snapshot,
      status: outcome.status,
      success: outcome.status === 'completed',
      output: outcome.output,
      error: outcome.error,
      finished_ms: this.now(),
      usage: usage
        ? {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            total_tokens: usage.totalTokens,
          }
        : null,
      ...(outcome.structured !== undefined ? { structured: outcome.structured } : {}),
    };
    delete task.controller;
    this.trim();
    return task.snapshot;
  }

  /** A copy of one task; TASK_NOT_FOUND naming it when the session has none of that id. */
  require(taskId: string): SubagentTaskSnapshot {
    const task = this.tasks.get(taskId);
    if (!task) throw new CodeError('TASK_NOT_FOUND', `no subagent task "${taskId}" in this session`, { taskId });
    return { ...task.snapshot };
  }

  /** Copies of every task, oldest first. */
  list(): SubagentTaskSnapshot[] {
    return this.byId ? [...this.byId.values()].map((task) => ({ ...task.snapshot })) : [];
  }

  /**
   * Cancel one queued or running task (the seed's cancelSubagentTask): true when it was cancelled, false when it
   * had already finished; TASK_NOT_FOUND for an id the session has none of.
   */
  cancel(taskId: string, reason: Error): boolean {
    const task = this.tasks.get(taskId);
    if (!task) throw new CodeError('TASK_NOT_FOUND', `no subagent task "${taskId}" in this session`, { taskId });
    if (isTerminal(task.snapshot.status) || !task.controller || task.controller.signal.aborted) return false;
    task.controller.abort(reason);
    return true;
  }

  /** Cancel every running or queued task (the parent closes or its run was cancelled). */
  cancelAll(reason: Error): void {
    for (const task of this.byId?.values() ?? []) task.controller?.abort(reason);
  }

  /** Close every child session still held (the parent closes). */
  async closeChildren(): Promise<void> {
    if (!this.byId) return;
    const children = [...this.tasks.values()].flatMap((task) => (task.child ? [task.child] : []));
    for (const task of this.tasks.values()) delete task.child;
    await Promise.all(children.map((child) => child.close().catch(() => undefined)));
  }

  private trim(): void {
    // The newest finished children stay live; the task snapshots of older ones outlive their sessions.
    let kept = 0;
    for (const task of [...this.tasks.values()].reverse()) {
      if (!isTerminal(task.snapshot.status) || !task.child) continue;
      kept += 1;
      if (kept <= this.keepFinishedChildren) continue;
      void task.child.close().catch(() => undefined);
      delete task.child;
    }
    let terminal = [...this.tasks.values()].filter((task) => isTerminal(task.snapshot.status)).length;
    for (const [taskId, task] of this.tasks) {
      if (terminal <= this.maxTerminal) break;
      if (!isTerminal(task.snapshot.status)) continue;
      this.tasks.delete(taskId);
      terminal -= 1;
      void task.child?.close().catch(() => undefined);
    }
  }
}

/** Whether a task has ended (a queued or running one has not). */
function isTerminal(status: SubagentTaskSnapshot['status']): boolean {
  return status !== 'queued' && status !== 'running';
}
