import type { KnownEvent } from '../../src/protocol/agent-event-envelope.js';
import { el } from './el.js';
import { markSeq } from './seq-marks.js';
import { statusChip } from './verification-rows.js';

/** The rows of a run block's subagent tasks, by task id: started under their delegating call, updated, ended. */
export class SubagentRows {
  private readonly rows = new Map<string, { element: HTMLElement; status: HTMLElement; output: HTMLElement }>();

  /** Add a task's row (agent, description, status chip, output) under `parent`. */
  start(p: KnownEvent<'subagent_start'>['payload'], seq: number | undefined, parent: HTMLElement): void {
    const status = statusChip('running');
    const output = el('pre', { class: 'subagent-output' });
    const element = el(
      'div',
      { class: 'subagent', 'data-task-id': p.task_id },
      el(
        'p',
        { class: 'subagent-head' },
        el('span', { class: 'role' }, `Subagent ${p.agent}`),
        ' ',
        p.description,
        ' ',
        status,
      ),
      output,
    );
    markSeq(element, seq);
    parent.appendChild(element);
    this.rows.set(p.task_id, { element, status, output });
  }

  /** Show a task's progress status: false when the task has no row. */
  progress(p: KnownEvent<'subagent_progress'>['payload'], seq: number | undefined): boolean {
    const task = this.rows.get(p.task_id);
    if (!task) return false;
    task.status.textContent = p.status;
    markSeq(task.element, seq);
    return true;
  }

  /** Show a task's end (final chip, output): false when the task has no row. */
  end(p: KnownEvent<'subagent_end'>['payload'], seq: number | undefined): boolean {
    const task = this.rows.get(p.task_id);
    if (!task) return false;
    task.status.replaceWith(statusChip(p.success ? 'completed' : 'failed'));
    task.output.textContent = p.output;
    markSeq(task.element, seq);
    return true;
  }
}
