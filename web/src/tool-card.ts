import type { KnownEvent } from '../../src/protocol/agent-event-envelope.js';
import { el, replaceChildren } from './el.js';
import { formatDuration, formatJson, preview } from './format.js';
import { markSeq } from './seq-marks.js';

/** One tool call in the activity log: name and argument preview, then arguments and output folded in a <details>. */
export class ToolCard {
  readonly element: HTMLDetailsElement;
  /** Where nested calls (inside batch/program) and subagent tasks of this call go. */
  readonly children: HTMLElement;
  readonly name: string;
  private readonly state: HTMLElement;
  private readonly argsPreview: HTMLElement;
  private readonly args: HTMLElement;
  private readonly output: HTMLElement;
  private readonly meta: HTMLElement;
  private streamedArgs = '';
  private streamedOutput = '';
  private ended = false;

  constructor(id: string, name: string) {
    this.name = name;
    this.state = el('span', { class: 'chip chip-running' }, 'running');
    this.argsPreview = el('span', { class: 'tool-preview' });
    this.args = el('pre', { class: 'tool-args' });
    this.output = el('pre', { class: 'tool-output' }, '');
    this.meta = el('p', { class: 'tool-meta' });
    this.children = el('div', { class: 'tool-children' });
    this.element = el(
      'details',
      { class: 'tool', 'data-tool-id': id, 'data-tool-name': name },
      el(
        'summary',
        {},
        el('span', { class: 'tool-icon', 'aria-hidden': 'true' }, '⚙'),
        el('span', { class: 'tool-name' }, name),
        this.argsPreview,
        this.state,
      ),
      el(
        'div',
        { class: 'tool-body' },
        el('h4', {}, 'Arguments'),
        this.args,
        el('h4', {}, 'Output'),
        this.output,
        this.meta,
      ),
      this.children,
    );
  }

  /** Note an event this card shows. */
  mark(sequence: number | undefined): void {
    markSeq(this.element, sequence);
  }

  /** Arguments streamed by the model (tool_input_delta), shown until the parsed arguments arrive. */
  appendArgs(delta: string): void {
    this.streamedArgs += delta;
    this.args.textContent = this.streamedArgs;
  }

  /** The parsed arguments (tool_execution_start). */
  setArgs(args: unknown): void {
    this.args.textContent = formatJson(args);
    this.argsPreview.textContent = preview(args, 70);
  }

  /** Output streamed while the tool runs (tool_output_delta). */
  appendOutput(delta: string): void {
    if (this.ended) return;
    this.streamedOutput += delta;
    this.output.textContent = this.streamedOutput;
  }

  /** Waiting for a person's answer (confirmation_required). */
  awaiting(): void {
    this.setState('awaiting approval', 'chip-waiting');
  }

  /** A state shown on the chip (approved, denied, ...). */
  setState(text: string, cls: string): void {
    this.state.textContent = text;
    this.state.className = `chip ${cls}`;
  }

  /** The call ended (tool_end): final output, exit code, duration. */
  end(payload: KnownEvent<'tool_end'>['payload']): void {
    this.ended = true;
    const ok = payload.exit_code === 0;
    this.output.textContent = payload.output;
    this.setState(ok ? 'done' : `failed (exit ${payload.exit_code})`, ok ? 'chip-ok' : 'chip-fail');
    this.element.classList.toggle('tool-failed', !ok);
    const parts = [`exit ${payload.exit_code}`, formatDuration(payload.duration_ms)];
    if (payload.truncated) parts.push('output truncated');
    if (payload.artifact_id !== undefined) parts.push(`artifact ${payload.artifact_id}`);
    if (payload.error_kind !== undefined) parts.push(`error: ${preview(payload.error_kind, 120)}`);
    replaceChildren(this.meta, parts.join(' · '));
  }
}
