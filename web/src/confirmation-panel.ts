import { ConfirmationNotFoundError, ConfirmationSettledError, type Session } from '../../src/client/index.js';
import type { PendingConfirmationView } from '../../src/protocol/governance.js';
import type { ConsoleContext } from './console-context.js';
import { el, replaceChildren } from './el.js';
import { errorText, formatDuration, formatJson } from './format.js';

/** A confirmation as the panel shows it (from the pending list or a confirmation_required event). */
export interface PendingCall {
  toolId: string;
  toolName: string;
  args: unknown;
  argsDigest?: string;
  runId: string | null;
  rule?: string;
  /** When it times out (epoch ms), when known. */
  deadlineMs?: number;
  alwaysNeedsHostDirect?: boolean;
}

/** A pending confirmation of the list as a PendingCall. */
export function fromPending(view: PendingConfirmationView): PendingCall {
  return {
    toolId: view.toolId,
    toolName: view.toolName,
    args: view.args,
    argsDigest: view.argsDigest,
    runId: view.runId,
    deadlineMs: Date.now() + view.remainingMs,
    alwaysNeedsHostDirect: view.alwaysNeedsHostDirect,
  };
}

/**
 * Pending confirmations: the exact tool call and arguments with Approve / Reject / Always for this session.
 * An answer names the call's args digest, so only the call shown is approved. A call answered elsewhere
 * (a confirmation_received or confirmation_timeout event, or the pending list no longer naming it) disappears.
 */
export class ConfirmationPanel {
  readonly element: HTMLElement;
  private readonly list: HTMLElement;
  private readonly cards = new Map<string, HTMLElement>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly session: Session,
  ) {
    this.list = el('div', { class: 'confirm-list' });
    this.element = el(
      'section',
      { class: 'confirmations', 'aria-label': 'Pending confirmations', hidden: true },
      el('h2', {}, 'Waiting for your approval'),
      this.list,
    );
  }

  /** Load the pending list (on opening the session) and keep it in step every few seconds while cards show. */
  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => {
      if (this.cards.size > 0) void this.sync().catch(() => undefined);
    }, 3000);
  }

  /** Stop polling. */
  dispose(): void {
    clearInterval(this.timer);
  }

  /** Replace the cards with the server's pending list. */
  async sync(): Promise<void> {
    const pending = await this.session.pendingConfirmations();
    const ids = new Set(pending.map((p) => p.toolId));
    for (const id of [...this.cards.keys()]) if (!ids.has(id)) this.remove(id);
    for (const view of pending) this.add(fromPending(view));
  }

  /** Show a pending call (no-op when shown). */
  add(call: PendingCall): void {
    if (this.cards.has(call.toolId)) return;
    const status = el('p', { class: 'confirm-status', role: 'status' });
    const buttons: HTMLButtonElement[] = [];
    const answer = async (approved: boolean, always = false): Promise<void> => {
      for (const button of buttons) button.disabled = true;
      status.textContent = approved ? 'Approving…' : 'Rejecting…';
      try {
        await this.session.confirmToolUse(call.toolId, approved, undefined, {
          always,
          ...(call.argsDigest ? { argsDigest: call.argsDigest } : {}),
        });
        this.remove(call.toolId);
        this.ctx.announce(`${approved ? 'Approved' : 'Rejected'} ${call.toolName}`);
      } catch (error) {
        if (this.ctx.unauthorized(error)) return;
        // Answered, timed out or cancelled elsewhere: nothing left to answer. A mismatch (the pending call's
        // arguments are not the ones shown) stays, with the server's message.
        if (error instanceof ConfirmationNotFoundError || error instanceof ConfirmationSettledError) {
          this.remove(call.toolId);
          this.ctx.announce(`${call.toolName} was already answered elsewhere`);
          return;
        }
        status.textContent = errorText(error);
        for (const button of buttons) button.disabled = false;
      }
    };
    const approve = el(
      'button',
      { type: 'button', class: 'btn btn-primary', onclick: () => void answer(true) },
      'Approve',
    );
    const reject = el(
      'button',
      { type: 'button', class: 'btn btn-danger', onclick: () => void answer(false) },
      'Reject',
    );
    const always = el(
      'button',
      {
        type: 'button',
        class: 'btn',
        title: call.alwaysNeedsHostDirect
          ? 'The operator asks for host_direct for "always": without it this approves once'
          : 'Approve this call and later calls of the same tool with the same subject in this session',
        onclick: () => void answer(true, true),
      },
      'Always for this session',
    );
    buttons.push(approve, reject, always);
    const remaining = el('span', { class: 'muted confirm-remaining' });
    const card = el(
      'article',
      { class: 'confirm', 'data-tool-id': call.toolId, 'aria-label': `Confirmation for ${call.toolName}` },
      el(
        'header',
        {},
        el('strong', { class: 'confirm-tool' }, call.toolName),
        ' ',
        el('code', { class: 'muted' }, call.toolId),
        call.runId ? el('span', { class: 'muted' }, ` · run ${call.runId}`) : null,
        call.rule ? el('span', { class: 'muted' }, ` · rule ${call.rule}`) : null,
        ' ',
        remaining,
      ),
      el('pre', { class: 'confirm-args', 'aria-label': 'Arguments' }, formatJson(call.args)),
      el('div', { class: 'actions' }, approve, reject, always),
      status,
    );
    this.cards.set(call.toolId, card);
    this.list.appendChild(card);
    this.element.hidden = false;
    if (call.deadlineMs !== undefined) {
      const deadline = call.deadlineMs;
      const tick = (): void => {
        if (!card.isConnected) return;
        replaceChildren(remaining, `· ${formatDuration(Math.max(0, deadline - Date.now()))} left`);
        setTimeout(tick, 1000);
      };
      tick();
    }
  }

  /** Remove a call (answered here or elsewhere, timed out). */
  remove(toolId: string): void {
    this.cards.get(toolId)?.remove();
    this.cards.delete(toolId);
    this.element.hidden = this.cards.size === 0;
  }
}
