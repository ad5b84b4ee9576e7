import type { AgentEvent } from '../../src/client/index.js';
import { el } from './el.js';
import { preview } from './format.js';
import { markSeq } from './seq-marks.js';

/** Event types that are bookkeeping for machines (bindings, checkpoints): listed, folded, under "Technical events". */
export const TECHNICAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  'turn_start',
  'turn_end',
  'tool_request_bound',
  'run_capability_bound',
  'model_presentation_bound',
  'model_input_bound',
  'model_usage_bound',
  'cognitive_context_bound',
  'context_resolving',
  'context_resolved',
  'checkpoint_saved',
  'run_status_changed',
  'memory_stored',
  'memory_recalled',
  'memories_searched',
  'memory_cleared',
  'agent_mode_changed',
  'mcp_server_connected',
  'mcp_server_disconnected',
  'mcp_tools_changed',
  'command_retry',
]);

/** The folded "Technical events" list of a run block: hidden until its first event, its count in the summary. */
export class TechnicalEvents {
  /** The `<details>` fold, placed by the run block. */
  readonly element: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly list: HTMLElement;
  private count = 0;

  constructor() {
    this.summary = el('summary', {}, 'Technical events (0)');
    this.list = el('ol', { class: 'technical-list' });
    this.element = el('details', { class: 'technical', hidden: true }, this.summary, this.list);
  }

  /** List one event (code and a preview of its payload), showing the fold. */
  add(event: AgentEvent, sequence: number | undefined): void {
    this.count += 1;
    this.element.removeAttribute('hidden');
    this.summary.textContent = `Technical events (${this.count})`;
    const item = el(
      'li',
      {},
      el('code', {}, event.type),
      ' ',
      el('span', { class: 'muted' }, preview(event.payload, 100)),
    );
    markSeq(item, sequence);
    this.list.appendChild(item);
  }
}
