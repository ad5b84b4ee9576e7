import type { AgentEvent } from '../../src/client/index.js';
import type { ConsoleContext } from './console-context.js';
import { el, replaceChildren } from './el.js';
import type { EventLog } from './event-log.js';
import type { RevertTracker } from './revert-tracker.js';
import { RunChanges } from './run-changes.js';

/**
 * The diff views of a session's page: one in the live activity under each run whose `run_changes_captured` event
 * arrives (loaded at the run's `agent_end`, when its change set is readable), and the "Changes" panel that shows any
 * run's changes picked from the runs list.
 */
export class ChangesPanel {
  readonly element: HTMLElement;
  private readonly title: HTMLElement;
  private readonly slot: HTMLElement;
  private readonly inLog = new Map<string, RunChanges>();
  private shown: RunChanges | undefined;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly sessionId: string,
    private readonly log: EventLog,
    private readonly reverts: RevertTracker,
  ) {
    this.title = el('h2', { id: 'changes-title' }, 'Changes');
    this.slot = el('div', {});
    this.element = el(
      'section',
      { class: 'panel changes-panel', 'aria-labelledby': 'changes-title', hidden: true },
      el(
        'div',
        { class: 'panel-head' },
        this.title,
        el('button', { type: 'button', class: 'btn btn-small', onclick: () => this.hide() }, 'Hide'),
      ),
      this.slot,
    );
  }

  /** Follow the events that say a run has a change set and that it ended. */
  onEvent(event: AgentEvent): void {
    const runId = event.metadata.run_id;
    if (runId === undefined) return;
    if (event.type === 'run_changes_captured' && !this.inLog.has(runId)) {
      const view = new RunChanges(
        this.ctx,
        this.sessionId,
        runId,
        { files: event.payload.files, patchBytes: event.payload.patch_bytes },
        this.reverts,
      );
      this.inLog.set(runId, view);
      this.log.place(runId, view.element);
    } else if (event.type === 'agent_end') this.inLog.get(runId)?.load();
  }

  /** Show run `runId`'s changes in the panel. */
  show(runId: string): void {
    this.shown?.dispose();
    this.shown = new RunChanges(this.ctx, this.sessionId, runId, undefined, this.reverts);
    replaceChildren(this.title, 'Changes of run ', el('code', {}, runId));
    replaceChildren(this.slot, this.shown.element);
    this.element.hidden = false;
    this.shown.load();
    this.element.scrollIntoView({ block: 'nearest' });
  }

  private hide(): void {
    this.shown?.dispose();
    this.shown = undefined;
    replaceChildren(this.slot);
    this.element.hidden = true;
  }

  /** Stop every view's retries. */
  dispose(): void {
    this.shown?.dispose();
    for (const view of this.inLog.values()) view.dispose();
  }
}
