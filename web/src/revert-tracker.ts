import type { AgentEvent, RevertedRuns } from '../../src/client/index.js';

/** What a view shows of a session's revert: the reverted runs (the first is the one the revert was asked for). */
export interface RevertedView {
  readonly runId: string;
  readonly runIds: readonly string[];
}

/**
 * The session's reverted runs as the page knows them: from SessionInfo.reverted when the info loads, and from the
 * `session_reverted` / `session_unreverted` events as they come. Every run's Revert / Unrevert buttons and the runs
 * list listen to it.
 */
export class RevertTracker {
  private current: RevertedView | undefined;
  private readonly listeners = new Set<() => void>();

  /** The reverted runs, undefined when nothing is reverted (or a run since dropped them for good). */
  get state(): RevertedView | undefined {
    return this.current;
  }

  /** True when run `runId` is among the reverted runs. */
  isReverted(runId: string): boolean {
    return this.current?.runIds.includes(runId) === true;
  }

  /** The state SessionInfo says (`reverted`, absent when nothing is reverted). */
  fromInfo(reverted: RevertedRuns | undefined): void {
    this.set(reverted ? { runId: reverted.runId, runIds: [...reverted.runIds] } : undefined);
  }

  /** Follow the session's revert events. */
  onEvent(event: AgentEvent): void {
    if (event.type === 'session_reverted')
      this.set({ runId: event.payload.run_id, runIds: [...event.payload.run_ids] });
    else if (event.type === 'session_unreverted') this.set(undefined);
  }

  /** Call `listener` on each change; answers the function that stops it. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(next: RevertedView | undefined): void {
    if (JSON.stringify(next) === JSON.stringify(this.current)) return;
    this.current = next;
    for (const listener of [...this.listeners]) listener();
  }
}
