import type { RunRecord, Session } from '../../src/client/index.js';
import type { ConsoleContext } from './console-context.js';
import { el, replaceChildren } from './el.js';
import { errorText, formatDuration } from './format.js';
import type { RevertTracker } from './revert-tracker.js';
import { RunWebhooks } from './run-webhooks.js';
import { statusChip } from './verification-rows.js';

/** A long id cut for a narrow column (the full id is its title). */
function shortId(id: string): string {
  return id.length > 16 ? `${id.slice(0, 12)}…` : id;
}

const ACTIVE = new Set(['created', 'planning', 'executing', 'verifying']);
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * The session's runs: status, duration, tokens and verification; cancel a running one, resume a failed one from its
 * checkpoint, show an ended one's changes, fork the session from just before a run and open the fork. Reverted runs
 * are marked (the Revert / Unrevert buttons are on each run's changes). Under each run, its webhook deliveries
 * (RunWebhooks: event, status, delivery id, attempts, last error), read again while any is pending.
 */
export class RunsPanel {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly status: HTMLElement;
  private readonly webhooksStatus: HTMLElement;
  private loading: Promise<void> | undefined;
  private again = false;
  private readonly webhooks: RunWebhooks;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly session: Session,
    private readonly showChanges: (runId: string) => void,
    private readonly reverts: RevertTracker,
  ) {
    this.body = el('ol', { class: 'runs-list' });
    this.status = el('p', { class: 'muted', role: 'status' });
    this.webhooksStatus = el('p', { class: 'muted webhooks-status', role: 'status' });
    this.element = el(
      'section',
      { class: 'panel runs', 'aria-labelledby': 'runs-title' },
      el('h2', { id: 'runs-title' }, 'Runs'),
      this.body,
      this.status,
      this.webhooksStatus,
    );
    reverts.subscribe(() => this.markReverted());
    this.webhooks = new RunWebhooks(ctx, session.sessionId, () => this.fillWebhooks());
  }

  /** A run ended or asked a confirmation: read its webhook deliveries again for a few seconds (they follow it). */
  watchWebhooks(): void {
    this.webhooks.settle();
  }

  /** Stop reading the delivery log. */
  dispose(): void {
    this.webhooks.dispose();
  }

  /** Put each run's webhook deliveries in its row (and say so when the log could not be read). */
  private fillWebhooks(): void {
    for (const slot of this.body.querySelectorAll<HTMLElement>('.run-webhooks[data-run-id]'))
      this.webhooks.fill(slot, slot.dataset.runId ?? '');
    this.webhooksStatus.textContent = this.webhooks.failure ?? '';
  }

  /** Mark the rows of the reverted runs (the tracker changed: a revert, an unrevert, the info). */
  private markReverted(): void {
    for (const item of this.body.querySelectorAll<HTMLElement>('li[data-run-id]')) {
      const reverted = this.reverts.isReverted(item.dataset.runId ?? '');
      item.classList.toggle('is-reverted', reverted);
      const chip = item.querySelector('.reverted-chip');
      if (reverted && !chip)
        item
          .querySelector('.run-item-head .actions')
          ?.before(
            el(
              'span',
              { class: 'chip chip-waiting reverted-chip', title: 'Its files and messages were reverted' },
              'reverted',
            ),
          );
      else if (!reverted) chip?.remove();
    }
  }

  /** Reload the list (coalesced: one load at a time, one more if asked meanwhile). */
  refresh(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = this.load().finally(() => {
      this.loading = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    let runs: RunRecord[];
    const webhooks = this.webhooks.refresh();
    try {
      runs = await this.session.runs();
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.status.textContent = errorText(error);
      return;
    }
    replaceChildren(this.body, ...[...runs].reverse().map((run) => this.row(run)));
    this.markReverted();
    this.fillWebhooks();
    await webhooks;
    this.status.textContent = runs.length === 0 ? 'No runs yet.' : '';
  }

  private row(run: RunRecord): HTMLElement {
    const end = run.endedAtMs ?? (ACTIVE.has(run.status) ? Date.now() : undefined);
    const result = run.result;
    const verification = result
      ? el(
          'span',
          {},
          'verification ',
          statusChip(result.verificationStatus),
          result.verificationReportCount > 0
            ? ` ${result.verificationReportCount} report(s), ${result.failedVerificationCount} failed`
            : '',
        )
      : el('span', {}, 'verification —');
    const actions = el('span', { class: 'actions' });
    if (ACTIVE.has(run.status))
      actions.appendChild(
        el(
          'button',
          {
            type: 'button',
            class: 'btn btn-small btn-danger',
            onclick: () => void this.act(() => this.session.cancelRun(run.runId), `Cancel requested for ${run.runId}`),
          },
          'Cancel',
        ),
      );
    if (run.status === 'failed')
      actions.appendChild(
        el(
          'button',
          {
            type: 'button',
            class: 'btn btn-small',
            title: 'Continue from the run’s loop checkpoint (kept for a run lost with its node)',
            onclick: () =>
              void this.act(() => this.session.resumeRun(run.runId), `Resumed ${run.runId} from its checkpoint`),
          },
          'Resume',
        ),
      );
    if (TERMINAL.has(run.status) && run.sideQuestion !== true)
      actions.appendChild(
        el(
          'button',
          {
            type: 'button',
            class: 'btn btn-small changes-btn',
            title: 'The files this run changed, as a diff',
            onclick: () => this.showChanges(run.runId),
          },
          'Changes',
        ),
      );
    if (run.status !== 'queued' && run.sideQuestion !== true)
      actions.appendChild(
        el(
          'button',
          {
            type: 'button',
            class: 'btn btn-small fork-btn',
            title: 'A new session with the transcript as this run found it (POST /v1/sessions/:id/fork {atRunId})',
            onclick: () => void this.fork(run.runId),
          },
          'Fork from here',
        ),
      );
    const title = [run.input.slice(0, 200), run.error ? `${run.error.code}: ${run.error.message}` : '']
      .filter(Boolean)
      .join('\n');
    return el(
      'li',
      { class: 'run-item', 'data-run-id': run.runId, 'data-status': run.status },
      el(
        'div',
        { class: 'run-item-head' },
        el('code', { title: run.runId }, shortId(run.runId)),
        statusChip(run.status),
        run.sideQuestion ? el('span', { class: 'muted' }, 'side question') : null,
        actions,
      ),
      el('p', { class: 'run-item-input', title }, run.input),
      el(
        'p',
        { class: 'run-item-facts muted' },
        `${formatDuration(end !== undefined ? end - run.createdAtMs : undefined)} · ${result ? `${result.totalTokens} tokens · ${result.toolCallsCount} tool call(s)` : '— tokens'} · `,
        verification,
      ),
      run.error ? el('p', { class: 'run-error' }, `${run.error.code}: ${run.error.message}`) : null,
      el('div', { class: 'run-webhooks', 'data-run-id': run.runId, hidden: true }),
    );
  }

  /** Fork the session just before `runId` and open the fork. */
  private async fork(runId: string): Promise<void> {
    try {
      const fork = await this.ctx.client.fork(this.session.sessionId, { atRunId: runId });
      this.ctx.announce(`Forked ${this.session.sessionId} before ${runId} into ${fork.sessionId}`);
      this.ctx.navigate(`#/sessions/${encodeURIComponent(fork.sessionId)}`);
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.ctx.announce(errorText(error), 'error');
    }
  }

  private async act(call: () => Promise<unknown>, done: string): Promise<void> {
    try {
      await call();
      this.ctx.announce(done);
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.ctx.announce(errorText(error), 'error');
    }
    await this.refresh();
  }
}
