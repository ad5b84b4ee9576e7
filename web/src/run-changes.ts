import { A3sError } from '../../src/client/index.js';
import type { ChangeSet } from '../../src/protocol/change-set.js';
import type { ConsoleContext } from './console-context.js';
import { diffView } from './diff-view.js';
import { el, replaceChildren } from './el.js';
import { errorText } from './format.js';
import { RevertControls } from './revert-controls.js';
import type { RevertTracker } from './revert-tracker.js';

/** How often and how long a 425 (the run is still capturing) is asked again. */
const RETRY_MS = 500;
const MAX_RETRIES = 40;

/** What 422 NO_CHANGE_SET's `details.reason` means, as a short note. */
const NO_CHANGE_SET: Record<string, string> = {
  no_mutating_call: 'No file changes: the run made no call that could change files.',
  commands_refused: 'No change set: this session’s commands do not run, so nothing was captured.',
  too_many_files: 'No change set: the workspace has too many files to capture.',
  capture_failed: 'No change set: the capture failed.',
  unknown: 'No change set for this run.',
};

/**
 * One run's changes (GET /v1/sessions/:id/runs/:runId/changes): loads the change set, asks again while the run is
 * still capturing (425), and shows the diff, or a short note when the run has none (422 NO_CHANGE_SET).
 */
export class RunChanges {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  /** Where the run's Revert / Unrevert buttons go (RevertControls: POST .../runs/:runId/revert and .../unrevert). */
  readonly actions: HTMLElement;
  private readonly controls: RevertControls | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private loaded = false;
  private loading = false;
  private disposed = false;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly sessionId: string,
    readonly runId: string,
    expected?: { files: number; patchBytes: number },
    /** The session's revert state: with it, the view offers Revert / Unrevert once the change set loaded. */
    reverts?: RevertTracker,
  ) {
    this.actions = el('span', { class: 'actions change-actions' });
    this.body = el(
      'div',
      { class: 'changes-body', role: 'status' },
      el(
        'p',
        { class: 'muted' },
        expected
          ? `${expected.files} file(s) changed; the diff loads when the run ends…`
          : 'Loading the run’s changes…',
      ),
    );
    this.element = el(
      'section',
      { class: 'changes', 'data-run-id': runId, 'aria-label': `Changes of run ${runId}` },
      el('header', { class: 'changes-head' }, el('h3', {}, 'Changes'), this.actions),
    );
    this.controls = reverts ? new RevertControls(ctx, sessionId, runId, reverts, this.element) : undefined;
    if (this.controls) {
      this.actions.appendChild(this.controls.element);
      this.element.appendChild(this.controls.panel);
    }
    this.element.appendChild(this.body);
  }

  /** Load the change set (once; a second call while it loads or after it loaded does nothing). */
  load(): void {
    if (this.loaded || this.loading || this.disposed) return;
    clearTimeout(this.timer);
    void this.fetch(0);
  }

  /** Stop asking. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    this.controls?.dispose();
  }

  private async fetch(attempt: number): Promise<void> {
    this.loading = true;
    try {
      const changes = await this.ctx.http.get<ChangeSet>(
        `/v1/sessions/${encodeURIComponent(this.sessionId)}/runs/${encodeURIComponent(this.runId)}/changes`,
      );
      if (this.disposed) return;
      this.loaded = true;
      replaceChildren(this.body, diffView(changes));
      this.controls?.enable();
    } catch (error) {
      if (this.disposed || this.ctx.unauthorized(error)) return;
      if (error instanceof A3sError && error.code === 'CHANGES_CAPTURING' && attempt < MAX_RETRIES) {
        replaceChildren(
          this.body,
          el('p', { class: 'muted' }, 'The run is still running; its changes follow at its end…'),
        );
        this.timer = setTimeout(() => void this.fetch(attempt + 1), RETRY_MS);
        return;
      }
      if (error instanceof A3sError && error.code === 'NO_CHANGE_SET') {
        this.loaded = true;
        const reason = typeof error.details.reason === 'string' ? error.details.reason : 'unknown';
        // A run that changed no file can still be reverted: its messages are hidden from the model.
        if (reason === 'no_mutating_call') this.controls?.enable();
        replaceChildren(
          this.body,
          el('p', { class: 'muted changes-none' }, NO_CHANGE_SET[reason] ?? NO_CHANGE_SET.unknown),
        );
        return;
      }
      replaceChildren(
        this.body,
        el('p', { class: 'notice notice-error' }, errorText(error)),
        el('button', { type: 'button', class: 'btn btn-small', onclick: () => this.load() }, 'Try again'),
      );
    } finally {
      this.loading = false;
    }
  }
}
