import type { AgentEvent, EventStream, Session, SessionInfo } from '../../src/client/index.js';
import { AttachmentThumbs } from './attachment-thumbs.js';
import { ChangesPanel } from './changes-panel.js';
import { Composer } from './composer.js';
import type { ConsoleContext, ConsoleView } from './console-context.js';
import { ConfirmationPanel, type PendingCall } from './confirmation-panel.js';
import { el, replaceChildren } from './el.js';
import { EventLog } from './event-log.js';
import { errorText } from './format.js';
import { QuestionForms } from './question-forms.js';
import { RevertTracker } from './revert-tracker.js';
import { RunsPanel } from './runs-panel.js';
import { SchedulesPanel } from './schedules-panel.js';
import { renderBusy, sessionHead } from './session-head.js';
import { sessionUnavailable } from './session-unavailable.js';
import { transcriptView } from './transcript-view.js';
import { VerificationPanel } from './verification-panel.js';

/** How the live stream reconnects: patient, because a person watches it (the client's backoff, up to 3 s). */
const RECONNECT = { maxAttempts: 40, initialDelayMs: 100, maxDelayMs: 3000 };

/**
 * A session's page: transcript, live activity (the session's events followed from a cursor, reconnecting
 * without loss or repetition), pending confirmations, runs (with their webhook deliveries), the schedules whose
 * runs come here, and the prompt box (single flight shown).
 */
export class SessionView implements ConsoleView {
  readonly element: HTMLElement;
  private session: Session | undefined;
  private stream: EventStream | undefined;
  private disposed = false;
  private readonly log = new EventLog();
  private readonly reverts = new RevertTracker();
  private confirmations: ConfirmationPanel | undefined;
  private runs: RunsPanel | undefined;
  private schedules: SchedulesPanel | undefined;
  private verifications: VerificationPanel | undefined;
  private composer: Composer | undefined;
  private questions: QuestionForms | undefined;
  private thumbs: AttachmentThumbs | undefined;
  private changes: ChangesPanel | undefined;
  private readonly head: HTMLElement;
  private readonly busy: HTMLElement;
  private readonly connection: HTMLElement;
  private readonly transcript: HTMLElement;
  private readonly transcriptTitle: HTMLElement;
  private readonly transcriptPanel: HTMLDetailsElement;
  private readonly side: HTMLElement;
  private readonly confirmSlot: HTMLElement;
  private readonly changesSlot: HTMLElement;
  private readonly composerSlot: HTMLElement;
  private infoTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly sessionId: string,
  ) {
    this.head = el('div', { class: 'session-head' }, el('h1', {}, 'Session ', el('code', {}, sessionId)));
    this.busy = el('p', { class: 'busy', role: 'status' });
    this.connection = el('p', { class: 'connection muted', role: 'status' });
    this.transcript = el('div', { class: 'transcript-body' }, el('p', { class: 'muted' }, 'Loading…'));
    this.transcriptTitle = el('h2', {}, 'Transcript');
    this.transcriptPanel = el(
      'details',
      { class: 'panel transcript' },
      el('summary', {}, this.transcriptTitle),
      this.transcript,
    );
    this.side = el('aside', { class: 'session-side' });
    this.confirmSlot = el('div', {});
    this.changesSlot = el('div', {});
    this.composerSlot = el('section', { class: 'panel' });
    this.element = el(
      'div',
      { class: 'session-view' },
      el('p', { class: 'crumbs' }, el('a', { href: '#/sessions' }, '← Sessions')),
      this.head,
      this.busy,
      el(
        'div',
        { class: 'session-grid' },
        el(
          'div',
          { class: 'session-main' },
          this.confirmSlot,
          this.transcriptPanel,
          el(
            'section',
            { class: 'panel activity', 'aria-labelledby': 'activity-title' },
            el('h2', { id: 'activity-title' }, 'Live activity'),
            this.connection,
            this.log.element,
          ),
          this.changesSlot,
          this.composerSlot,
        ),
        this.side,
      ),
    );
  }

  /** Open the session: info, transcript, runs and pending confirmations, then follow its events. */
  async start(): Promise<void> {
    let session: Session;
    try {
      session = await this.ctx.client.getSession(this.sessionId);
    } catch (error) {
      if (this.ctx.unauthorized(error)) return;
      replaceChildren(this.element, ...sessionUnavailable(this.sessionId, error, () => void this.resume()));
      return;
    }
    this.session = session;
    this.composer = new Composer(this.ctx, session, () => this.soon());
    replaceChildren(this.composerSlot, this.composer.element);
    this.thumbs = new AttachmentThumbs(this.ctx.http, this.sessionId);
    this.questions = new QuestionForms(this.ctx, session, this.log);
    this.renderInfo(session.created);
    this.confirmations = new ConfirmationPanel(this.ctx, session);
    this.changes = new ChangesPanel(this.ctx, this.sessionId, this.log, this.reverts);
    replaceChildren(this.changesSlot, this.changes.element);
    this.runs = new RunsPanel(this.ctx, session, (runId) => this.changes?.show(runId), this.reverts);
    replaceChildren(this.confirmSlot, this.confirmations.element);
    this.verifications = new VerificationPanel(this.ctx, session);
    this.schedules = new SchedulesPanel(this.ctx, this.sessionId);
    replaceChildren(
      this.side,
      el('div', { class: 'side-stack' }, this.schedules.element, this.runs.element, this.verifications.element),
    );
    await Promise.all([
      this.loadTranscript(),
      this.runs.refresh(),
      this.schedules.refresh(),
      this.verifications.refresh(),
      this.confirmations.start().catch((error: unknown) => this.ctx.unauthorized(error)),
      this.questions.load().catch((error: unknown) => this.ctx.unauthorized(error)),
    ]);
    if (this.disposed) return;
    await this.follow(session);
    this.composer.focus();
  }

  /** Resume a closed session and open it again. */
  private async resume(): Promise<void> {
    try {
      await this.ctx.client.resumeSession(this.sessionId);
      this.ctx.navigate(`#/sessions/${encodeURIComponent(this.sessionId)}`);
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.ctx.announce(errorText(error), 'error');
    }
  }

  /** Close the stream and timers. */
  dispose(): void {
    this.disposed = true;
    this.stream?.close();
    this.confirmations?.dispose();
    this.changes?.dispose();
    this.runs?.dispose();
    clearTimeout(this.infoTimer);
  }

  private async loadTranscript(): Promise<void> {
    try {
      const messages = await this.session!.history();
      replaceChildren(
        this.transcript,
        transcriptView(messages, (refs) => this.thumbs!.view(refs)),
      );
      this.transcriptTitle.textContent = `Transcript (${messages.length} message${messages.length === 1 ? '' : 's'})`;
      this.transcriptPanel.open = messages.length > 0;
      this.transcriptPanel.hidden = messages.length === 0;
    } catch (error) {
      if (!this.ctx.unauthorized(error))
        replaceChildren(this.transcript, el('p', { class: 'notice notice-error' }, errorText(error)));
    }
  }

  private renderInfo(info: SessionInfo): void {
    replaceChildren(
      this.head,
      ...sessionHead(info, { refresh: () => void this.refreshInfo(), close: () => void this.closeSession() }),
    );
    renderBusy(this.busy, info);
    this.reverts.fromInfo(info.reverted);
    this.composer?.setActiveRun(info.currentRun?.id);
  }

  private async refreshInfo(): Promise<void> {
    if (!this.session) return;
    try {
      this.renderInfo(await this.session.info());
    } catch (error) {
      this.ctx.unauthorized(error);
    }
  }

  /** Refresh info and runs soon (coalescing bursts of events). */
  private soon(): void {
    clearTimeout(this.infoTimer);
    this.infoTimer = setTimeout(() => {
      void this.refreshInfo();
      void this.runs?.refresh();
      void this.schedules?.refresh();
    }, 150);
  }

  /**
   * The cursor to follow from: the active run's first event (so a run in progress shows whole), else the
   * newest event of the last run, else the start; undefined (the live edge) when retention dropped those.
   */
  private async cursor(session: Session): Promise<number | undefined> {
    const info = await session.info();
    this.renderInfo(info);
    const runs = await session.runs();
    const target = info.currentRun?.id ?? runs.at(-1)?.runId;
    if (target === undefined) return 0;
    if (info.currentRun) {
      const page = await session.runEventPage(target, { after: -1, limit: 1 });
      const first = page.events[0]?.metadata.session_sequence;
      if (first !== undefined) return first - 1;
    }
    const record = runs.find((run) => run.runId === target);
    const last = record ? await session.runEventPage(target, { after: record.eventCount - 2, limit: 1 }) : undefined;
    return last?.events[0]?.metadata.session_sequence;
  }

  private async follow(session: Session): Promise<void> {
    let after: number | undefined;
    try {
      after = await this.cursor(session);
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.connection.textContent = errorText(error);
      return;
    }
    const stream = session.events({
      after,
      reconnect: RECONNECT,
      onReconnect: (info) => {
        this.connection.textContent = `Connection lost (${info.code}); reconnecting after event ${info.after ?? after ?? 'the live edge'} (attempt ${info.attempt})…`;
        this.connection.classList.add('is-lost');
      },
    });
    this.stream = stream;
    this.connection.textContent = 'Live: following the session’s events.';
    void this.pump(stream);
  }

  private async pump(stream: EventStream): Promise<void> {
    try {
      for (let event = await stream.nextEvent(); event !== null; event = await stream.nextEvent()) {
        if (this.connection.classList.contains('is-lost')) {
          this.connection.classList.remove('is-lost');
          this.connection.textContent = 'Live: reconnected, nothing missed.';
        }
        this.onEvent(event);
      }
      if (!this.disposed) this.connection.textContent = 'The session was closed: no more events.';
    } catch (error) {
      if (this.disposed || this.ctx.unauthorized(error)) return;
      this.connection.textContent = '';
      this.connection.append(
        `Not following events: ${errorText(error)} `,
        el('button', { type: 'button', class: 'btn btn-small', onclick: () => void this.restart() }, 'Reconnect'),
      );
    }
  }

  private async restart(): Promise<void> {
    if (!this.session) return;
    this.stream?.close();
    await this.follow(this.session);
  }

  private onEvent(event: AgentEvent): void {
    if (!this.log.add(event)) return;
    this.questions?.onEvent(event);
    this.changes?.onEvent(event);
    this.reverts.onEvent(event);
    switch (event.type) {
      case 'confirmation_required': {
        const p = event.payload;
        const call: PendingCall = {
          toolId: p.tool_id,
          toolName: p.tool_name,
          args: p.args,
          ...(p.args_digest !== undefined ? { argsDigest: p.args_digest } : {}),
          ...(p.rule !== undefined ? { rule: p.rule } : {}),
          runId: event.metadata.run_id ?? null,
          deadlineMs: event.metadata.timestamp_ms + p.timeout_ms,
        };
        this.confirmations?.add(call);
        this.runs?.watchWebhooks();
        break;
      }
      case 'confirmation_received':
      case 'confirmation_timeout':
        this.confirmations?.remove(event.payload.tool_id);
        break;
      case 'verification_completed':
        void this.showReport(event.payload.report_id);
        void this.verifications?.refresh();
        break;
      case 'agent_start':
        if (event.metadata.run_id !== undefined) this.composer?.setActiveRun(event.metadata.run_id);
        this.soon();
        break;
      case 'agent_end':
        this.runs?.watchWebhooks();
        void this.loadTranscript();
        this.soon();
        break;
      case 'session_reverted':
      case 'session_unreverted':
        void this.loadTranscript();
        this.soon();
        break;
      case 'run_status_changed':
      case 'session_closed':
        this.soon();
        break;
      default:
        break;
    }
  }

  private async showReport(reportId: string): Promise<void> {
    try {
      const report = (await this.session!.verificationReports()).find((r) => r.id === reportId);
      if (report) this.log.showReport(report);
    } catch (error) {
      this.ctx.unauthorized(error);
    }
  }

  private async closeSession(): Promise<void> {
    if (!this.session) return;
    try {
      await this.session.close();
      this.ctx.announce(`Closed session ${this.sessionId}`);
      this.ctx.navigate('#/sessions');
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.ctx.announce(errorText(error), 'error');
    }
  }
}
