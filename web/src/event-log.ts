import type { AgentEvent, ReplayGap } from '../../src/client/index.js';
import type { VerificationReport } from '../../src/protocol/verification.js';
import { el } from './el.js';
import { RunBlock } from './run-block.js';
import { sequenceOf } from './seq-marks.js';
import { verificationReportView } from './verification-rows.js';

/**
 * The session's live activity: one RunBlock per run, session-level events (no run id) as notices, in
 * session order. It drops any event whose session_sequence it has already shown (the stream reconnects
 * from its cursor and does this too; the log does it anyway), and shows replay gaps.
 */
export class EventLog {
  readonly element: HTMLElement;
  private readonly runs = new Map<string, RunBlock>();
  private readonly seen = new Set<number>();
  private readonly empty: HTMLElement;
  private outside: RunBlock | undefined;

  constructor() {
    this.empty = el('p', { class: 'muted log-empty' }, 'No activity yet. Runs started here or elsewhere appear live.');
    this.element = el(
      'div',
      { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-label': 'Live events' },
      this.empty,
    );
  }

  /** True once an event with this sequence was shown. */
  has(sequence: number): boolean {
    return this.seen.has(sequence);
  }

  /** Render one event; answers false for a duplicate. */
  add(event: AgentEvent): boolean {
    const seq = sequenceOf(event.metadata);
    if (seq !== undefined) {
      if (this.seen.has(seq)) return false;
      this.seen.add(seq);
    }
    this.empty.remove();
    if (event.type === 'replay_gap') {
      this.gap(event.payload);
      return true;
    }
    const runId = event.metadata.run_id;
    if (runId !== undefined) {
      this.outside = undefined;
      this.run(runId).add(event);
      return true;
    }
    // Events outside a run (host-direct calls, REST verifications, session notices): grouped until the next run event.
    if (!this.outside) {
      this.outside = new RunBlock(undefined);
      this.element.appendChild(this.outside.element);
    }
    this.outside.add(event);
    return true;
  }

  /** The block of a run (created on its first event). */
  run(runId: string): RunBlock {
    let block = this.runs.get(runId);
    if (!block) {
      block = new RunBlock(runId);
      this.runs.set(runId, block);
      this.element.appendChild(block.element);
    }
    return block;
  }

  /** Put a node at the end of a run's block (null: the log itself), e.g. a question pending when the page opened. */
  place(runId: string | null, node: HTMLElement): void {
    this.empty.remove();
    if (runId !== null) this.run(runId).append(node);
    else this.element.appendChild(node);
  }

  /** Put a verification report's pass/fail rows under its verification_completed notice. */
  showReport(report: VerificationReport): void {
    const slot = this.element.querySelector(`.notice[data-report-id="${CSS.escape(report.id)}"]`);
    if (!slot || slot.querySelector('.verification')) return;
    slot.appendChild(verificationReportView(report));
  }

  /** A notice that is not an event (connection state, replay gap). */
  note(kind: 'info' | 'warn' | 'error', text: string): HTMLElement {
    this.empty.remove();
    const node = el('div', { class: `notice notice-${kind} log-note` }, text);
    this.element.appendChild(node);
    return node;
  }

  private gap(payload: ReplayGap): void {
    const after = payload.requested_after;
    const first = payload.first_available;
    const lost = first - after - 1;
    const node = this.note(
      'warn',
      `Replay gap: ${lost > 0 ? lost : 'some'} event(s) (sequence ${after + 1}–${first - 1}) were dropped by the server's retention before this page could read them.`,
    );
    node.classList.add('replay-gap');
  }
}
