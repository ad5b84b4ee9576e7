import { RevertConflictError, type RevertResponse } from '../../src/client/index.js';
import type { ConsoleContext } from './console-context.js';
import { el, replaceChildren } from './el.js';
import { errorText } from './format.js';
import type { RevertTracker } from './revert-tracker.js';

type Action = 'revert' | 'unrevert';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * A run's Revert / Unrevert buttons (in RunChanges.actions) and what they say (`panel`, under the change set's head):
 * Revert asks first, in the page; a 409 REVERT_CONFLICT lists the paths changed since with "Revert anyway" (force);
 * the buttons follow the session's revert state (RevertTracker: SessionInfo.reverted and the session_reverted /
 * session_unreverted events), so a reverted run shows as reverted and Unrevert is offered on the run the last revert
 * was made at, whoever made it.
 */
export class RevertControls {
  readonly element: HTMLElement;
  readonly panel: HTMLElement;
  private enabled = false;
  private busy = false;
  /** What the panel asks for now (a confirmation or a conflict's choice), undefined when it only tells. */
  private asking: Action | undefined;
  private readonly stop: () => void;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly sessionId: string,
    private readonly runId: string,
    private readonly tracker: RevertTracker,
    /** The change set's element: marked `is-reverted` while the run is. */
    private readonly host: HTMLElement,
  ) {
    this.element = el('span', { class: 'revert-controls' });
    this.panel = el('div', { class: 'revert-panel', role: 'status', hidden: true });
    this.stop = tracker.subscribe(() => this.render());
  }

  /** Show the buttons (once the change set loaded: a run still running cannot be reverted). */
  enable(): void {
    this.enabled = true;
    this.render();
  }

  /** Stop following the revert state. */
  dispose(): void {
    this.stop();
  }

  private render(): void {
    const state = this.tracker.state;
    const reverted = this.tracker.isReverted(this.runId);
    this.host.classList.toggle('is-reverted', reverted);
    // A question the state answered meanwhile (reverted or unreverted elsewhere) is no longer asked.
    if (this.asking !== undefined && (this.asking === 'revert') === reverted) this.say('');
    if (!this.enabled) return;
    if (!reverted || !state) {
      replaceChildren(
        this.element,
        this.button('revert-btn', 'Revert', () => this.confirmRevert(), 'row'),
      );
      return;
    }
    const badge = el('span', { class: 'chip chip-waiting revert-badge' }, 'reverted');
    replaceChildren(
      this.element,
      badge,
      state.runId === this.runId
        ? this.button('unrevert-btn', 'Unrevert', () => void this.send('unrevert', false), 'row')
        : el('span', { class: 'muted revert-with' }, ` with run ${state.runId}`),
    );
  }

  /** A button: the row's own (Revert, Unrevert) are disabled while a call is out; the panel's are replaced then. */
  private button(cls: string, label: string, onclick: () => void, kind: 'row' | 'panel' | 'danger'): HTMLButtonElement {
    const extra = kind === 'danger' ? ' btn-danger' : '';
    return el(
      'button',
      { type: 'button', class: `btn btn-small${extra} ${cls}`, disabled: kind === 'row' && this.busy, onclick },
      label,
    );
  }

  /** Put `children` in the panel (hidden when there are none). */
  private say(kind: string, ...children: Array<Node | string>): void {
    this.asking = undefined;
    this.panel.className = `revert-panel${kind ? ` notice notice-${kind}` : ''}`;
    replaceChildren(this.panel, ...children);
    this.panel.hidden = children.length === 0;
  }

  private confirmRevert(): void {
    this.say(
      'warn',
      el(
        'p',
        {},
        `Revert run ${this.runId}? The files it and every later run changed go back to how they were before it, and their messages are hidden from the model. Unrevert undoes it until the next run.`,
      ),
      el(
        'div',
        { class: 'actions' },
        this.button('revert-confirm', 'Revert', () => void this.send('revert', false), 'danger'),
        this.button('revert-cancel', 'Cancel', () => this.say(''), 'panel'),
      ),
    );
    this.asking = 'revert';
  }

  private async send(action: Action, force: boolean): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.render();
    this.say('', el('p', { class: 'muted' }, action === 'revert' ? 'Reverting…' : 'Unreverting…'));
    try {
      const done =
        action === 'revert'
          ? await this.ctx.client.revert(this.sessionId, this.runId, { force })
          : await this.ctx.client.unrevert(this.sessionId, { force });
      this.say('ok', el('p', { class: 'revert-outcome' }, this.outcome(action, done)));
      this.ctx.announce(this.outcome(action, done));
    } catch (error) {
      if (this.ctx.unauthorized(error)) return;
      if (error instanceof RevertConflictError) this.conflict(action, error);
      else this.say('error', el('p', { class: 'revert-error' }, errorText(error)));
    } finally {
      this.busy = false;
      this.render();
    }
  }

  private outcome(action: Action, done: RevertResponse): string {
    const runs = plural(done.reverted_run_ids.length, 'run');
    const files = `${plural(done.files.length, 'file')} written or removed`;
    return action === 'revert'
      ? `Reverted ${runs}: ${files}, ${plural(done.messages, 'message')} hidden from the model.`
      : `Unreverted ${runs}: ${files}, ${plural(done.messages, 'message')} visible to the model again.`;
  }

  /** The paths changed since (text, never markup) and the choice to write them anyway. */
  private conflict(action: Action, error: RevertConflictError): void {
    const paths = Array.isArray(error.details.paths)
      ? error.details.paths.filter((path): path is string => typeof path === 'string')
      : [];
    const count = typeof error.details.count === 'number' ? error.details.count : paths.length;
    const word = action === 'revert' ? 'Revert' : 'Unrevert';
    this.say(
      'error',
      el(
        'p',
        {},
        `${plural(count, 'file')} changed since ${action === 'revert' ? 'the last run' : 'the revert'} (by a person or another session); ${action} would overwrite ${count === 1 ? 'it' : 'them'}:`,
      ),
      el('ul', { class: 'revert-conflicts' }, ...paths.map((path) => el('li', {}, el('code', {}, path)))),
      count > paths.length ? el('p', { class: 'muted' }, `and ${count - paths.length} more`) : '',
      el(
        'div',
        { class: 'actions' },
        this.button('revert-force', `${word} anyway`, () => void this.send(action, true), 'danger'),
        this.button('revert-cancel', 'Cancel', () => this.say(''), 'panel'),
      ),
    );
    this.asking = action;
  }
}
