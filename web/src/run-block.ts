import type { AgentEvent } from '../../src/client/index.js';
import type { KnownEvent } from '../../src/protocol/agent-event-envelope.js';
import type { ExecutionPlan } from '../../src/protocol/planning.js';
import { el, replaceChildren } from './el.js';
import { formatDuration, formatJson, preview } from './format.js';
import { markdownNodes } from './markdown-view.js';
import { runNotice, type RunNotice } from './run-notice.js';
import { markSeq, sequenceOf } from './seq-marks.js';
import { ToolCard } from './tool-card.js';
import { SubagentRows } from './subagent-rows.js';
import { TECHNICAL_EVENT_TYPES, TechnicalEvents } from './technical-events.js';
import { statusChip, verificationSummaryView } from './verification-rows.js';

/**
 * One run in the activity log, rendered as a person reads it: the prompt, streamed text accumulated into
 * messages, tool calls folded with their arguments and output, subagent tasks nested under the call that
 * started them, the plan with its steps, notices (confirmations, budgets, compaction, warnings) and the end.
 */
export class RunBlock {
  readonly element: HTMLElement;
  private readonly header: HTMLElement;
  private readonly body: HTMLElement;
  private readonly technical = new TechnicalEvents();
  private text: { element: HTMLElement; content: HTMLElement; value: string } | undefined;
  private reasoning: { element: HTMLElement; content: HTMLElement; value: string } | undefined;
  private readonly tools = new Map<string, ToolCard>();
  private readonly subagents = new SubagentRows();
  private plan: { element: HTMLElement; steps: Map<string, HTMLElement> } | undefined;
  private startedMs: number | undefined;
  private sawText = false;

  /** A run's block, or (without a run id) the block of events outside a run: host-direct calls, REST verifications. */
  constructor(readonly runId: string | undefined) {
    this.header =
      runId !== undefined
        ? el(
            'header',
            { class: 'run-head' },
            el('span', { class: 'run-title' }, 'Run ', el('code', {}, runId)),
            statusChip('executing'),
          )
        : el(
            'header',
            { class: 'run-head' },
            el('span', { class: 'run-title' }, 'Outside a run (host-direct calls, verifications)'),
          );
    this.body = el('div', { class: 'run-body' });
    this.element = el(
      'article',
      {
        class: runId !== undefined ? 'run' : 'run run-outside',
        'data-run-id': runId,
        'aria-label': runId !== undefined ? `Run ${runId}` : 'Outside a run',
      },
      this.header,
      this.body,
      this.technical.element,
    );
  }

  private setStatus(status: string): void {
    const chip = this.header.querySelector('.chip');
    if (chip) chip.replaceWith(statusChip(status));
  }

  private block(cls: string, sequence: number | undefined, ...children: (Node | string | null)[]): HTMLElement {
    const node = el('div', { class: cls }, ...children);
    markSeq(node, sequence);
    this.body.appendChild(node);
    this.text = undefined;
    this.reasoning = undefined;
    return node;
  }

  /** A notice line (info, warn, error) for one event. */
  private notice(kind: RunNotice['kind'], sequence: number | undefined, text: string, detail?: unknown): HTMLElement {
    const node = this.block(`notice notice-${kind}`, sequence, el('span', { class: 'notice-text' }, text));
    if (detail !== undefined)
      node.appendChild(el('details', {}, el('summary', {}, 'Details'), el('pre', {}, formatJson(detail))));
    return node;
  }

  /** The tool card of a call id (created on first sight). */
  private tool(id: string, name: string, parentId?: string): ToolCard {
    let card = this.tools.get(id);
    if (!card) {
      card = new ToolCard(id, name || 'tool');
      this.tools.set(id, card);
      const parent = parentId !== undefined ? this.tools.get(parentId) : undefined;
      (parent ? parent.children : this.body).appendChild(card.element);
      if (!parent) {
        this.text = undefined;
        this.reasoning = undefined;
      }
    }
    return card;
  }

  /** Where a subagent task goes: under the newest delegating call (task, parallel_task, Skill) still running, else the run. */
  private delegatingParent(): HTMLElement {
    const cards = [...this.tools.values()].reverse();
    const parent = cards.find((card) => ['task', 'parallel_task', 'skill'].includes(card.name.toLowerCase()));
    return parent ? parent.children : this.body;
  }

  /** Render one event of this run. */
  add(event: AgentEvent): void {
    const seq = sequenceOf(event.metadata);
    const at = event.metadata.timestamp_ms;
    const line = runNotice(event);
    if (line) {
      this.notice(line.kind, seq, line.text, line.detail);
      return;
    }
    switch (event.type) {
      case 'agent_start': {
        const p = event.payload;
        this.startedMs = at;
        this.block(
          'message message-user',
          seq,
          el('span', { class: 'role' }, p.side_question === true ? 'Side question' : 'Prompt'),
          el('p', { class: 'message-text' }, p.prompt),
          p.model ? el('span', { class: 'muted' }, p.model) : null,
        );
        return;
      }
      case 'text_delta': {
        if (!this.text) {
          const content = el('div', { class: 'message-text markdown' });
          const element = this.block(
            'message message-assistant',
            undefined,
            el('span', { class: 'role' }, 'Assistant'),
            content,
          );
          this.text = { element, content, value: '' };
        }
        this.text.value += event.payload.text;
        // Each delta re-parses the whole block's text: Markdown can change meaning as it grows (a fence opening).
        replaceChildren(this.text.content, ...markdownNodes(this.text.value));
        this.sawText = true;
        markSeq(this.text.element, seq);
        return;
      }
      case 'reasoning_delta': {
        if (!this.reasoning) {
          const content = el('pre', { class: 'reasoning-text' });
          const element = this.block(
            'reasoning',
            undefined,
            el('details', {}, el('summary', {}, 'Reasoning'), content),
          );
          this.reasoning = { element, content, value: '' };
        }
        this.reasoning.value += event.payload.text;
        this.reasoning.content.textContent = this.reasoning.value;
        markSeq(this.reasoning.element, seq);
        return;
      }
      case 'tool_start':
        this.tool(event.payload.id, event.payload.name).mark(seq);
        return;
      case 'tool_input_delta': {
        const card = this.tool(event.payload.id, '');
        card.appendArgs(event.payload.delta);
        card.mark(seq);
        return;
      }
      case 'tool_execution_start': {
        const card = this.tool(event.payload.id, event.payload.name, event.payload.parent_tool_id);
        card.setArgs(event.payload.args);
        card.mark(seq);
        return;
      }
      case 'tool_output_delta': {
        const card = this.tool(event.payload.id, event.payload.name);
        card.appendOutput(event.payload.delta);
        card.mark(seq);
        return;
      }
      case 'tool_end': {
        const card = this.tool(event.payload.id, event.payload.name);
        card.end(event.payload);
        card.mark(seq);
        return;
      }
      case 'user_question': {
        // The slot the session's question forms fill (question-forms.ts); the text stays when no form comes.
        const slot = this.block(
          'question-slot',
          seq,
          el('p', { class: 'notice notice-warn' }, `Question: ${event.payload.question}`),
        );
        slot.dataset.questionId = event.payload.question_id;
        return;
      }
      case 'run_control_applied':
        this.control(event, seq);
        return;
      case 'confirmation_required':
        this.tools.get(event.payload.tool_id)?.awaiting();
        this.notice(
          'warn',
          seq,
          `Waiting for approval: ${event.payload.tool_name} ${preview(event.payload.args, 100)}`,
        );
        return;
      case 'confirmation_received': {
        const p = event.payload;
        this.tools
          .get(p.tool_id)
          ?.setState(p.approved ? 'approved' : 'rejected', p.approved ? 'chip-running' : 'chip-fail');
        this.notice(
          p.approved ? 'ok' : 'warn',
          seq,
          `${p.approved ? 'Approved' : 'Rejected'}: ${p.tool_name || p.tool_id}${p.reason ? ` (${p.reason})` : ''}`,
        );
        return;
      }
      case 'permission_denied':
        this.tools.get(event.payload.tool_id)?.setState('denied', 'chip-fail');
        this.notice('error', seq, `Denied: ${event.payload.tool_name} — ${event.payload.reason}`, event.payload.args);
        return;
      case 'subagent_start':
        this.subagents.start(event.payload, seq, this.delegatingParent());
        return;
      case 'subagent_progress':
        if (!this.subagents.progress(event.payload, seq)) this.technical.add(event, seq);
        return;
      case 'subagent_end': {
        const p = event.payload;
        if (!this.subagents.end(p, seq))
          this.notice(
            p.success ? 'ok' : 'error',
            seq,
            `Subagent ${p.agent} ${p.success ? 'finished' : 'failed'}`,
            p.output,
          );
        return;
      }
      case 'planning_end':
        this.renderPlan(event.payload.plan, seq);
        return;
      case 'step_start':
      case 'step_end':
        this.step(event, seq);
        return;
      case 'task_updated':
        this.block(
          'tasks',
          seq,
          el('p', { class: 'role' }, 'Tasks'),
          el(
            'ul',
            {},
            ...event.payload.tasks.map((task) =>
              el('li', { class: `task task-${task.status}` }, statusChip(task.status), ' ', task.content),
            ),
          ),
        );
        return;
      case 'verification_completed': {
        const p = event.payload;
        this.notice(
          p.status === 'passed' ? 'ok' : p.status === 'failed' ? 'error' : 'warn',
          seq,
          `Verification of ${p.subject}: ${p.status}`,
        ).dataset.reportId = p.report_id;
        return;
      }
      case 'agent_end':
        this.end(event, seq, at);
        return;
      default:
        if (TECHNICAL_EVENT_TYPES.has(event.type)) this.technical.add(event, seq);
        else this.notice('info', seq, `${event.type}: ${preview(event.payload, 120)}`);
    }
  }

  private renderPlan(plan: ExecutionPlan, seq: number | undefined): void {
    const steps = new Map<string, HTMLElement>();
    const items = plan.steps.map((step) => {
      const item = el('li', { class: 'step', 'data-step-id': step.id }, statusChip(step.status), ' ', step.content);
      steps.set(step.id, item);
      return item;
    });
    const element = this.block(
      'plan',
      seq,
      el('p', { class: 'role' }, 'Plan'),
      el('p', {}, plan.goal),
      el('ol', { class: 'steps' }, ...items),
    );
    this.plan = { element, steps };
  }

  private step(event: KnownEvent<'step_start' | 'step_end'>, seq: number | undefined): void {
    const p = event.payload;
    const item = this.plan?.steps.get(p.step_id);
    if (!item || !this.plan) {
      this.notice(
        'info',
        seq,
        event.type === 'step_start'
          ? `Step ${p.step_number}/${p.total_steps}: ${event.payload.description}`
          : `Step ${p.step_number}/${p.total_steps} ${event.payload.status}`,
      );
      return;
    }
    const chip = item.querySelector('.chip');
    chip?.replaceWith(statusChip(event.type === 'step_start' ? 'in progress' : event.payload.status));
    markSeq(item, seq);
  }

  private end(event: KnownEvent<'agent_end'>, seq: number | undefined, at: number | undefined): void {
    const p = event.payload;
    const status = p.status;
    if (!this.sawText && p.text)
      this.block(
        'message message-assistant',
        undefined,
        el('span', { class: 'role' }, 'Assistant'),
        el('div', { class: 'message-text markdown' }, ...markdownNodes(p.text)),
      );
    const duration = at !== undefined && this.startedMs !== undefined ? at - this.startedMs : undefined;
    const error = p.error;
    const footer = this.block(
      `run-end run-end-${status}`,
      seq,
      el(
        'p',
        {},
        statusChip(status),
        ` ${formatDuration(duration)} · ${p.usage.total_tokens} tokens · ${p.tool_calls_count} tool call(s)`,
        error ? ` · ${error.code}: ${error.message}` : '',
      ),
      verificationSummaryView(p.verification_summary, p.verification_summary_text),
    );
    footer.setAttribute('role', 'status');
    this.setStatus(status);
  }

  /** A steer applied at a safe point is a user line marked "steered"; an interrupt is a notice. */
  private control(event: KnownEvent<'run_control_applied'>, seq: number | undefined): void {
    const p = event.payload;
    if (p.operation === 'steer') {
      this.block(
        'message message-user message-steered',
        seq,
        el('span', { class: 'role' }, 'Steered ', el('span', { class: 'chip chip-running' }, 'steered')),
        el('p', { class: 'message-text' }, p.input ?? ''),
        el('span', { class: 'muted' }, `before turn ${p.turn_id}`),
      );
      return;
    }
    this.notice(
      'warn',
      seq,
      `Interrupted at turn ${p.turn_id}${p.reason !== undefined ? `: ${p.reason}` : ''}`,
    ).classList.add('run-interrupted');
  }

  /** Put a node at the end of the run's body (a pending question loaded before its event replays). */
  append(node: HTMLElement): void {
    this.body.appendChild(node);
    this.text = undefined;
    this.reasoning = undefined;
  }

  /** Mark the run's status from outside (the runs list knows it ended). */
  markStatus(status: string): void {
    this.setStatus(status);
  }

  /** Replace the header's title (e.g. when the run record is known). */
  setTitle(text: string): void {
    const title = this.header.querySelector('.run-title');
    if (title) replaceChildren(title, text);
  }
}
