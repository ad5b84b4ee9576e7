import { SessionBusyError, type Session } from '../../src/client/index.js';
import { startRunWithAttachments } from './attachment-api.js';
import { AttachmentTray } from './attachment-tray.js';
import type { ConsoleContext } from './console-context.js';
import { el } from './el.js';
import { errorText } from './format.js';

/** A fresh request id for a steer (getRandomValues: randomUUID needs a secure context, plain http on a LAN is not). */
export function freshRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `console-${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * The prompt box: Run starts a run (with the pending attachments, uploaded first); while a run is active,
 * Steer queues the text for its next safe point and Interrupt stops it there; Stop cancels it now.
 */
export class Composer {
  readonly element: HTMLFormElement;
  private readonly prompt: HTMLTextAreaElement;
  private readonly status: HTMLElement;
  private readonly tray: AttachmentTray;
  private readonly steerButton: HTMLButtonElement;
  private readonly interruptButton: HTMLButtonElement;
  private activeRun: string | undefined;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly session: Session,
    /** Something changed on the server (a run started, a cancel): refresh info and runs soon. */
    private readonly changed: () => void,
  ) {
    this.prompt = el('textarea', {
      id: 'prompt',
      name: 'prompt',
      rows: 3,
      placeholder: 'Ask the agent… (Enter runs, Shift+Enter for a new line)',
    });
    this.prompt.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.element.requestSubmit();
      }
    });
    this.status = el('p', { class: 'form-status', role: 'status' });
    this.steerButton = el(
      'button',
      { type: 'button', class: 'btn steer-btn', disabled: true, onclick: () => void this.steer() },
      'Steer',
    );
    this.interruptButton = el(
      'button',
      { type: 'button', class: 'btn interrupt-btn', disabled: true, onclick: () => void this.interrupt() },
      'Interrupt',
    );
    this.element = el(
      'form',
      { class: 'prompt-form', 'aria-label': 'Start a run' },
      el('label', { for: 'prompt' }, 'Prompt'),
      this.prompt,
    );
    this.tray = new AttachmentTray(this.element);
    this.element.append(
      this.tray.element,
      el(
        'div',
        { class: 'actions' },
        el('button', { type: 'submit', class: 'btn btn-primary' }, 'Run'),
        this.steerButton,
        this.interruptButton,
        el('button', { type: 'button', class: 'btn btn-danger', onclick: () => void this.cancel() }, 'Stop active run'),
      ),
      this.status,
    );
    this.element.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
  }

  /** Focus the prompt. */
  focus(): void {
    this.prompt.focus();
  }

  /** The session's active run (steer and interrupt go to it), or undefined when idle. */
  setActiveRun(runId: string | undefined): void {
    this.activeRun = runId;
    this.steerButton.disabled = runId === undefined;
    this.interruptButton.disabled = runId === undefined;
    this.steerButton.title = runId !== undefined ? `Add the prompt to run ${runId} at its next safe point` : '';
  }

  private async submit(): Promise<void> {
    const input = this.prompt.value.trim();
    if (input.length === 0) {
      this.status.textContent = 'Type a prompt first.';
      return;
    }
    try {
      let runId: string;
      if (this.tray.size > 0) {
        this.status.textContent = `Uploading ${this.tray.size} attachment(s)…`;
        const attachments = await this.tray.upload(this.ctx.http, this.session.sessionId);
        if (!attachments) {
          this.status.textContent = 'An attachment could not be uploaded (see its chip): remove it or try again.';
          return;
        }
        this.status.textContent = 'Starting…';
        runId = (await startRunWithAttachments(this.ctx.http, this.session.sessionId, input, attachments)).runId;
        this.tray.clear();
      } else {
        this.status.textContent = 'Starting…';
        runId = (await this.session.startRun(input)).runId;
      }
      this.prompt.value = '';
      this.status.textContent = `Run ${runId} started.`;
      this.changed();
    } catch (error) {
      if (this.ctx.unauthorized(error)) return;
      if (error instanceof SessionBusyError) {
        const run = typeof error.details.activeRunId === 'string' ? error.details.activeRunId : 'another run';
        const node = typeof error.details.ownerNodeId === 'string' ? ` on node ${error.details.ownerNodeId}` : '';
        this.status.textContent = `Busy: run ${run}${node} holds this session. Wait for it to end, steer it or stop it.`;
        this.changed();
        return;
      }
      this.status.textContent = errorText(error);
    }
  }

  private async steer(): Promise<void> {
    const input = this.prompt.value.trim();
    const runId = this.activeRun;
    if (runId === undefined) return;
    if (input.length === 0) {
      this.status.textContent = 'Type what the run should take into account, then Steer.';
      return;
    }
    try {
      const receipt = await this.session.steer(input, { requestId: freshRequestId(), runId });
      if (receipt.status === 'rejected') {
        this.status.textContent = `Steer rejected: ${receipt.reason ?? 'no reason given'}`;
        return;
      }
      this.prompt.value = '';
      this.status.textContent =
        receipt.status === 'accepted'
          ? `Steer accepted: it joins run ${runId} at its next safe point.`
          : `Steer ${receipt.status}.`;
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.status.textContent = errorText(error);
    }
  }

  private async interrupt(): Promise<void> {
    const runId = this.activeRun;
    if (runId === undefined) return;
    try {
      const receipt = await this.session.interrupt({ runId, reason: 'interrupted from the console' });
      this.status.textContent =
        receipt.status === 'accepted'
          ? `Interrupt accepted: run ${runId} stops at its next safe point.`
          : `Interrupt ${receipt.status}${receipt.reason ? `: ${receipt.reason}` : ''}.`;
      this.changed();
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.status.textContent = errorText(error);
    }
  }

  private async cancel(): Promise<void> {
    try {
      const cancelled = await this.session.cancel();
      this.status.textContent = cancelled ? 'Cancel requested.' : 'No run is active.';
      this.changed();
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.status.textContent = errorText(error);
    }
  }
}
