import type { AgentEvent } from '../../src/client/index.js';
import type { ExecutionPlan } from '../../src/protocol/planning.js';
import type { VerificationSummary } from '../../src/protocol/verification.js';
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

const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

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
  private tokens = 0;
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
    if (event.type === 'turn_end' && typeof event.totalTokens === 'number') this.tokens += event.totalTokens;
  }

  /** Render one event of this run. */
  add(event: AgentEvent): void {
    const p = event.payload;
    const seq = sequenceOf(event.metadata);
    const at = num((event.metadata as Record<string, unknown>).timestamp_ms);
    switch (event.type) {
      case 'agent_start':
        this.startedMs = at;
        this.block('message message-user', seq, el('span', { class: 'role' }, p.side_question === true ? 'Side question' : 'Prompt'), el('p', { class: 'message-text' }, str(p.prompt)), p.model ? el('span', { class: 'muted' }, str(p.model)) : null);
        return;
      case 'text_delta': {
        if (!this.text) {
          const content = el('p', { class: 'message-text' });
          const element = this.block('message message-assistant', undefined, el('span', { class: 'role' }, 'Assistant'), content);
          this.text = { element, content, value: '' };
        }
        this.text.value += str(p.text);
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
        this.reasoning.value += str(p.text);
        this.reasoning.content.textContent = this.reasoning.value;
        markSeq(this.reasoning.element, seq);
        return;
      }
      case 'tool_start':
        this.tool(str(p.id), str(p.name)).mark(seq);
        return;
      case 'tool_input_delta': {
        const card = this.tool(str(p.id), '');
        card.appendArgs(str(p.delta));
        card.mark(seq);
        return;
      }
      case 'tool_execution_start': {
        const card = this.tool(str(p.id), str(p.name), typeof p.parent_tool_id === 'string' ? p.parent_tool_id : undefined);
        card.setArgs(p.args);
        card.mark(seq);
        return;
      }
      case 'tool_output_delta': {
        const card = this.tool(str(p.id), str(p.name));
        card.appendOutput(str(p.delta));
        card.mark(seq);
        return;
      }
      case 'tool_end': {
        const card = this.tool(str(p.id), str(p.name));
        card.end(p);
        card.mark(seq);
        return;
      }
      case 'confirmation_required':
        this.tools.get(str(p.tool_id))?.awaiting();
        this.notice('warn', seq, `Waiting for approval: ${str(p.tool_name)} ${preview(p.args, 100)}`);
        return;
      case 'confirmation_received':
        this.tools.get(str(p.tool_id))?.setState(p.approved === true ? 'approved' : 'rejected', p.approved === true ? 'chip-running' : 'chip-fail');
        this.notice(p.approved === true ? 'ok' : 'warn', seq, `${p.approved === true ? 'Approved' : 'Rejected'}: ${str(p.tool_name) || str(p.tool_id)}${p.reason ? ` (${str(p.reason)})` : ''}`);
        return;
      case 'confirmation_timeout':
        this.notice('warn', seq, `No answer in time for ${str(p.tool_name) || str(p.tool_id)}: ${str(p.action_taken).replace('_', ' ')}`);
        return;
      case 'permission_denied':
        this.tools.get(str(p.tool_id))?.setState('denied', 'chip-fail');
        this.notice('error', seq, `Denied: ${str(p.tool_name)} — ${str(p.reason)}`, p.args);
        return;
      case 'hook_blocked':
        this.notice('error', seq, `Blocked by hook ${str(p.hook_id) || ''}: ${str(p.tool_name)} — ${str(p.reason)}`);
        return;
      case 'user_question':
        this.notice('warn', seq, `Question: ${str(p.question)}`, p.options);
        return;
      case 'external_task_pending':
        this.notice('info', seq, `External task ${str(p.task_id)} (${str(p.command_type)}) waits for the host`);
        return;
      case 'external_task_completed':
        this.notice(p.success === true ? 'ok' : 'error', seq, `External task ${str(p.task_id)} ${p.success === true ? 'completed' : 'failed'}`);
        return;
      case 'subagent_start': {
        const status = statusChip('running');
        const output = el('pre', { class: 'subagent-output' });
        const element = el('div', { class: 'subagent', 'data-task-id': str(p.task_id) }, el('p', { class: 'subagent-head' }, el('span', { class: 'role' }, `Subagent ${str(p.agent)}`), ' ', str(p.description), ' ', status), output);
        markSeq(element, seq);
        this.delegatingParent().appendChild(element);
        this.subagents.set(str(p.task_id), { element, status, output });
        return;
      }
      case 'subagent_progress': {
        const task = this.subagents.get(str(p.task_id));
        if (task) {
          task.status.textContent = str(p.status);
          markSeq(task.element, seq);
        } else this.technicalEvent(event, seq);
        return;
      }
      case 'subagent_end': {
        const task = this.subagents.get(str(p.task_id));
        if (!task) {
          this.notice(p.success === true ? 'ok' : 'error', seq, `Subagent ${str(p.agent)} ${p.success === true ? 'finished' : 'failed'}`, p.output);
          return;
        }
        task.status.replaceWith(statusChip(p.success === true ? 'completed' : 'failed'));
        task.output.textContent = str(p.output);
        markSeq(task.element, seq);
        return;
      }
      case 'planning_start':
        this.notice('info', seq, 'Planning…');
        return;
      case 'planning_end':
        this.renderPlan(p.plan as ExecutionPlan | undefined, seq);
        return;
      case 'step_start':
      case 'step_end':
        this.step(event.type, p, seq);
        return;
      case 'task_updated': {
        const tasks = Array.isArray(p.tasks) ? (p.tasks as { content?: unknown; status?: unknown }[]) : [];
        this.block('tasks', seq, el('p', { class: 'role' }, 'Tasks'), el('ul', {}, ...tasks.map((task) => el('li', { class: `task task-${str(task.status)}` }, statusChip(str(task.status)), ' ', str(task.content)))));
        return;
      }
      case 'goal_extracted':
        this.notice('info', seq, `Goal: ${str((p.goal as { description?: unknown } | undefined)?.description)}`);
        return;
      case 'goal_progress':
        this.notice('info', seq, `Goal progress ${Math.round((num(p.progress) ?? 0) * 100)}% (${str(p.completed_steps)}/${str(p.total_steps)} steps)`);
        return;
      case 'goal_achieved':
        this.notice('ok', seq, `Goal achieved: ${str(p.goal)} in ${formatDuration(num(p.duration_ms))}`);
        return;
      case 'context_compacted':
        this.notice('info', seq, `Context compacted: ${str(p.before_messages)} → ${str(p.after_messages)} messages (was ${Math.round(num(p.percent_before) ?? 0)}% full)`, p.summary);
        return;
      case 'budget_threshold_hit':
        this.notice('warn', seq, `Budget ${str(p.kind)} threshold: ${str(p.resource)} ${str(p.consumed)} of ${p.limit === null ? '?' : str(p.limit)}${p.message ? ` — ${str(p.message)}` : ''}`);
        return;
      case 'budget_exhausted':
        this.notice('error', seq, `Budget exhausted: ${str(p.resource)} ${str(p.consumed)} of ${p.limit === null ? '?' : str(p.limit)}${p.message ? ` — ${str(p.message)}` : ''}`);
        return;
      case 'run_warning':
        this.notice('warn', seq, `Warning (${str(p.source)}): ${str(p.message)}${p.fallback ? ` — ${str(p.fallback)}` : ''}`);
        return;
      case 'provider_retry':
        this.notice('warn', seq, `Provider retry ${str(p.attempt)}/${str(p.threshold)}: ${str(p.message)}`);
        return;
      case 'continuation_injected':
        this.notice('info', seq, `The model looked unfinished: continuation ${str(p.continuation)} injected`);
        return;
      case 'run_resumed':
        this.notice('info', seq, `Resumed from run ${str(p.from_run_id)} at turn ${str(p.turn)}`);
        return;
      case 'command_dead_lettered':
      case 'queue_alert':
      case 'persistence_failed':
        this.notice('error', seq, `${event.type.replace(/_/g, ' ')}: ${str(p.error ?? p.message)}`, p);
        return;
      case 'verification_started':
        this.notice('info', seq, `Verifying ${str(p.subject)} (${str(p.commands)} command(s))…`);
        return;
      case 'verification_completed':
        this.notice(p.status === 'passed' ? 'ok' : p.status === 'failed' ? 'error' : 'warn', seq, `Verification of ${str(p.subject)}: ${str(p.status)}`).dataset.reportId = str(p.report_id);
        return;
      case 'error':
        this.notice('error', seq, `Error ${str(p.code)}: ${str(p.message)}`);
        return;
      case 'agent_end':
        this.end(event, seq, at);
        return;
      default:
        if (TECHNICAL.has(event.type)) this.technicalEvent(event, seq);
        else this.notice('info', seq, `${event.type}: ${preview(p, 120)}`);
    }
  }

  private renderPlan(plan: ExecutionPlan | undefined, seq: number | undefined): void {
    const steps = new Map<string, HTMLElement>();
    const items = (plan?.steps ?? []).map((step) => {
      const item = el('li', { class: 'step', 'data-step-id': step.id }, statusChip(step.status), ' ', step.content);
      steps.set(step.id, item);
      return item;
    });
    const element = this.block('plan', seq, el('p', { class: 'role' }, 'Plan'), el('p', {}, plan?.goal ?? ''), el('ol', { class: 'steps' }, ...items));
    this.plan = { element, steps };
  }

  private step(type: string, p: Record<string, unknown>, seq: number | undefined): void {
    const item = this.plan?.steps.get(str(p.step_id));
    if (!item || !this.plan) {
      this.notice('info', seq, type === 'step_start' ? `Step ${str(p.step_number)}/${str(p.total_steps)}: ${str(p.description)}` : `Step ${str(p.step_number)}/${str(p.total_steps)} ${str(p.status)}`);
      return;
    }
    const chip = item.querySelector('.chip');
    chip?.replaceWith(statusChip(type === 'step_start' ? 'in progress' : str(p.status)));
    markSeq(item, seq);
  }

  private end(event: AgentEvent, seq: number | undefined, at: number | undefined): void {
    const p = event.payload;
    const status = str(p.status) || 'completed';
    if (!this.sawText && str(p.text)) this.block('message message-assistant', undefined, el('span', { class: 'role' }, 'Assistant'), el('p', { class: 'message-text' }, str(p.text)));
    const usage = p.usage as { total_tokens?: number } | undefined;
    const tokens = usage?.total_tokens ?? this.tokens;
    const duration = at !== undefined && this.startedMs !== undefined ? at - this.startedMs : undefined;
    const error = p.error as { code?: string; message?: string } | undefined;
    const footer = this.block(
      `run-end run-end-${status}`,
      seq,
      el('p', {}, statusChip(status), ` ${formatDuration(duration)} · ${tokens} tokens · ${str(p.tool_calls_count) || '0'} tool call(s)`, error ? ` · ${error.code ?? ''}: ${error.message ?? ''}` : ''),
      verificationSummaryView(p.verification_summary as VerificationSummary | undefined, p.verification_summary_text as string | null | undefined),
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
