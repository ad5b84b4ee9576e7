import type { AgentEvent } from '../../src/client/index.js';
import type { KnownEvent } from '../../src/protocol/agent-event-envelope.js';
import type { ExecutionPlan } from '../../src/protocol/planning.js';
import { el, replaceChildren } from './el.js';
import { formatDuration, formatJson, preview } from './format.js';
import { markSeq, sequenceOf } from './seq-marks.js';
import { ToolCard } from './tool-card.js';
import { statusChip, verificationSummaryView } from './verification-rows.js';

/** Event types that are bookkeeping for machines (bindings, checkpoints): listed, folded, under "Technical events". */
const TECHNICAL = new Set([
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

/**
 * One run in the activity log, rendered as a person reads it: the prompt, streamed text accumulated into
 * messages, tool calls folded with their arguments and output, subagent tasks nested under the call that
 * started them, the plan with its steps, notices (confirmations, budgets, compaction, warnings) and the end.
 */
export class RunBlock {
  readonly element: HTMLElement;
  private readonly header: HTMLElement;
  private readonly body: HTMLElement;
  private readonly technical: HTMLElement;
  private readonly technicalSummary: HTMLElement;
  private technicalCount = 0;
  private text: { element: HTMLElement; content: HTMLElement; value: string } | undefined;
  private reasoning: { element: HTMLElement; content: HTMLElement; value: string } | undefined;
  private readonly tools = new Map<string, ToolCard>();
  private readonly subagents = new Map<string, { element: HTMLElement; status: HTMLElement; output: HTMLElement }>();
  private plan: { element: HTMLElement; steps: Map<string, HTMLElement> } | undefined;
  private startedMs: number | undefined;
  private sawText = false;

  /** A run's block, or (without a run id) the block of events outside a run: host-direct calls, REST verifications. */
  constructor(readonly runId: string | undefined) {
    this.header =
      runId !== undefined
        ? el('header', { class: 'run-head' }, el('span', { class: 'run-title' }, 'Run ', el('code', {}, runId)), statusChip('executing'))
        : el('header', { class: 'run-head' }, el('span', { class: 'run-title' }, 'Outside a run (host-direct calls, verifications)'));
    this.body = el('div', { class: 'run-body' });
    this.technicalSummary = el('summary', {}, 'Technical events (0)');
    this.technical = el('ol', { class: 'technical-list' });
    this.element = el('article', { class: runId !== undefined ? 'run' : 'run run-outside', 'data-run-id': runId, 'aria-label': runId !== undefined ? `Run ${runId}` : 'Outside a run' }, this.header, this.body, el('details', { class: 'technical', hidden: true }, this.technicalSummary, this.technical));
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
  private notice(kind: 'info' | 'warn' | 'error' | 'ok', sequence: number | undefined, text: string, detail?: unknown): HTMLElement {
    const node = this.block(`notice notice-${kind}`, sequence, el('span', { class: 'notice-text' }, text));
    if (detail !== undefined) node.appendChild(el('details', {}, el('summary', {}, 'Details'), el('pre', {}, formatJson(detail))));
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

  private technicalEvent(event: AgentEvent, sequence: number | undefined): void {
    this.technicalCount += 1;
    this.technical.parentElement?.removeAttribute('hidden');
    this.technicalSummary.textContent = `Technical events (${this.technicalCount})`;
    const item = el('li', {}, el('code', {}, event.type), ' ', el('span', { class: 'muted' }, preview(event.payload, 100)));
    markSeq(item, sequence);
    this.technical.appendChild(item);
  }

  /** Render one event of this run. */
  add(event: AgentEvent): void {
    const seq = sequenceOf(event.metadata);
    const at = event.metadata.timestamp_ms;
    switch (event.type) {
      case 'agent_start': {
        const p = event.payload;
        this.startedMs = at;
        this.block('message message-user', seq, el('span', { class: 'role' }, p.side_question === true ? 'Side question' : 'Prompt'), el('p', { class: 'message-text' }, p.prompt), p.model ? el('span', { class: 'muted' }, p.model) : null);
        return;
      }
      case 'text_delta': {
        if (!this.text) {
          const content = el('p', { class: 'message-text' });
          const element = this.block('message message-assistant', undefined, el('span', { class: 'role' }, 'Assistant'), content);
          this.text = { element, content, value: '' };
        }
        this.text.value += event.payload.text;
        this.text.content.textContent = this.text.value;
        this.sawText = true;
        markSeq(this.text.element, seq);
        return;
      }
      case 'reasoning_delta': {
        if (!this.reasoning) {
          const content = el('pre', { class: 'reasoning-text' });
          const element = this.block('reasoning', undefined, el('details', {}, el('summary', {}, 'Reasoning'), content));
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
      case 'confirmation_required':
        this.tools.get(event.payload.tool_id)?.awaiting();
        this.notice('warn', seq, `Waiting for approval: ${event.payload.tool_name} ${preview(event.payload.args, 100)}`);
        return;
      case 'confirmation_received': {
        const p = event.payload;
        this.tools.get(p.tool_id)?.setState(p.approved ? 'approved' : 'rejected', p.approved ? 'chip-running' : 'chip-fail');
        this.notice(p.approved ? 'ok' : 'warn', seq, `${p.approved ? 'Approved' : 'Rejected'}: ${p.tool_name || p.tool_id}${p.reason ? ` (${p.reason})` : ''}`);
        return;
      }
      case 'confirmation_timeout':
        this.notice('warn', seq, `No answer in time for ${event.payload.tool_name || event.payload.tool_id}: ${event.payload.action_taken.replace('_', ' ')}`);
        return;
      case 'permission_denied':
        this.tools.get(event.payload.tool_id)?.setState('denied', 'chip-fail');
        this.notice('error', seq, `Denied: ${event.payload.tool_name} — ${event.payload.reason}`, event.payload.args);
        return;
      case 'hook_blocked':
        this.notice('error', seq, `Blocked by hook ${event.payload.hook_id ?? ''}: ${event.payload.tool_name} — ${event.payload.reason}`);
        return;
      case 'user_question':
        this.notice('warn', seq, `Question: ${event.payload.question}`, event.payload.options);
        return;
      case 'external_task_pending':
        this.notice('info', seq, `External task ${event.payload.task_id} (${event.payload.command_type}) waits for the host`);
        return;
      case 'external_task_completed':
        this.notice(event.payload.success ? 'ok' : 'error', seq, `External task ${event.payload.task_id} ${event.payload.success ? 'completed' : 'failed'}`);
        return;
      case 'subagent_start': {
        const p = event.payload;
        const status = statusChip('running');
        const output = el('pre', { class: 'subagent-output' });
        const element = el('div', { class: 'subagent', 'data-task-id': p.task_id }, el('p', { class: 'subagent-head' }, el('span', { class: 'role' }, `Subagent ${p.agent}`), ' ', p.description, ' ', status), output);
        markSeq(element, seq);
        this.delegatingParent().appendChild(element);
        this.subagents.set(p.task_id, { element, status, output });
        return;
      }
      case 'subagent_progress': {
        const task = this.subagents.get(event.payload.task_id);
        if (task) {
          task.status.textContent = event.payload.status;
          markSeq(task.element, seq);
        } else this.technicalEvent(event, seq);
        return;
      }
      case 'subagent_end': {
        const p = event.payload;
        const task = this.subagents.get(p.task_id);
        if (!task) {
          this.notice(p.success ? 'ok' : 'error', seq, `Subagent ${p.agent} ${p.success ? 'finished' : 'failed'}`, p.output);
          return;
        }
        task.status.replaceWith(statusChip(p.success ? 'completed' : 'failed'));
        task.output.textContent = p.output;
        markSeq(task.element, seq);
        return;
      }
      case 'planning_start':
        this.notice('info', seq, 'Planning…');
        return;
      case 'planning_end':
        this.renderPlan(event.payload.plan, seq);
        return;
      case 'step_start':
      case 'step_end':
        this.step(event, seq);
        return;
      case 'task_updated':
        this.block('tasks', seq, el('p', { class: 'role' }, 'Tasks'), el('ul', {}, ...event.payload.tasks.map((task) => el('li', { class: `task task-${task.status}` }, statusChip(task.status), ' ', task.content))));
        return;
      case 'goal_extracted':
        this.notice('info', seq, `Goal: ${event.payload.goal.description}`);
        return;
      case 'goal_progress': {
        const p = event.payload;
        this.notice('info', seq, `Goal progress ${Math.round(p.progress * 100)}% (${p.completed_steps}/${p.total_steps} steps)`);
        return;
      }
      case 'goal_achieved':
        this.notice('ok', seq, `Goal achieved: ${event.payload.goal} in ${formatDuration(event.payload.duration_ms)}`);
        return;
      case 'context_compacted': {
        const p = event.payload;
        this.notice('info', seq, `Context compacted: ${p.before_messages} → ${p.after_messages} messages (was ${Math.round(p.percent_before)}% full)`, p.summary);
        return;
      }
      case 'budget_threshold_hit':
      case 'budget_exhausted': {
        const p = event.payload;
        const what = `${p.resource} ${p.consumed} of ${p.limit === null ? '?' : p.limit}${p.message ? ` — ${p.message}` : ''}`;
        if (event.type === 'budget_exhausted') this.notice('error', seq, `Budget exhausted: ${what}`);
        else this.notice('warn', seq, `Budget ${p.kind} threshold: ${what}`);
        return;
      }
      case 'run_warning':
        this.notice('warn', seq, `Warning (${event.payload.source}): ${event.payload.message}${event.payload.fallback ? ` — ${event.payload.fallback}` : ''}`);
        return;
      case 'provider_retry':
        this.notice('warn', seq, `Provider retry ${event.payload.attempt}/${event.payload.threshold}: ${event.payload.message}`);
        return;
      case 'continuation_injected':
        this.notice('info', seq, `The model looked unfinished: continuation ${event.payload.continuation} injected`);
        return;
      case 'run_resumed':
        this.notice('info', seq, `Resumed from run ${event.payload.from_run_id} at turn ${event.payload.turn}`);
        return;
      case 'command_dead_lettered':
      case 'persistence_failed':
        this.notice('error', seq, `${event.type.replace(/_/g, ' ')}: ${event.payload.error}`, event.payload);
        return;
      case 'queue_alert':
        this.notice('error', seq, `queue alert: ${event.payload.message}`, event.payload);
        return;
      case 'verification_started':
        this.notice('info', seq, `Verifying ${event.payload.subject} (${event.payload.commands} command(s))…`);
        return;
      case 'verification_completed': {
        const p = event.payload;
        this.notice(p.status === 'passed' ? 'ok' : p.status === 'failed' ? 'error' : 'warn', seq, `Verification of ${p.subject}: ${p.status}`).dataset.reportId = p.report_id;
        return;
      }
      case 'error':
        this.notice('error', seq, `Error ${event.payload.code}: ${event.payload.message}`);
        return;
      case 'agent_end':
        this.end(event, seq, at);
        return;
      default:
        if (TECHNICAL.has(event.type)) this.technicalEvent(event, seq);
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
    const element = this.block('plan', seq, el('p', { class: 'role' }, 'Plan'), el('p', {}, plan.goal), el('ol', { class: 'steps' }, ...items));
    this.plan = { element, steps };
  }

  private step(event: KnownEvent<'step_start' | 'step_end'>, seq: number | undefined): void {
    const p = event.payload;
    const item = this.plan?.steps.get(p.step_id);
    if (!item || !this.plan) {
      this.notice('info', seq, event.type === 'step_start' ? `Step ${p.step_number}/${p.total_steps}: ${event.payload.description}` : `Step ${p.step_number}/${p.total_steps} ${event.payload.status}`);
      return;
    }
    const chip = item.querySelector('.chip');
    chip?.replaceWith(statusChip(event.type === 'step_start' ? 'in progress' : event.payload.status));
    markSeq(item, seq);
  }

  private end(event: KnownEvent<'agent_end'>, seq: number | undefined, at: number | undefined): void {
    const p = event.payload;
    const status = p.status;
    if (!this.sawText && p.text) this.block('message message-assistant', undefined, el('span', { class: 'role' }, 'Assistant'), el('p', { class: 'message-text' }, p.text));
    const duration = at !== undefined && this.startedMs !== undefined ? at - this.startedMs : undefined;
    const error = p.error;
    const footer = this.block(
      `run-end run-end-${status}`,
      seq,
      el('p', {}, statusChip(status), ` ${formatDuration(duration)} · ${p.usage.total_tokens} tokens · ${p.tool_calls_count} tool call(s)`, error ? ` · ${error.code}: ${error.message}` : ''),
      verificationSummaryView(p.verification_summary, p.verification_summary_text),
    );
    footer.setAttribute('role', 'status');
    this.setStatus(status);
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
