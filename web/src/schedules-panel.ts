import type { Schedule, ScheduleTick } from '../../src/client/index.js';
import type { ConsoleContext } from './console-context.js';
import { el, replaceChildren } from './el.js';
import { errorText, formatTime } from './format.js';
import { statusChip } from './verification-rows.js';

/** What a tick's outcome reads as in a sentence. */
const OUTCOME: Record<ScheduleTick['outcome'], string> = {
  started: 'started',
  queued: 'queued',
  skipped: 'skipped',
  failed: 'failed',
  paused: 'paused the schedule',
};

/** A tick as one line: when, how it fired, what it did, its run or its error. */
function tickLine(tick: ScheduleTick): HTMLElement {
  return el(
    'p',
    { class: 'schedule-last', 'data-outcome': tick.outcome },
    `Last tick ${formatTime(tick.tickAtMs)}${tick.manual === true ? ' (run now)' : ''}: ${OUTCOME[tick.outcome]}`,
    tick.runId !== undefined ? el('span', {}, ' run ', el('code', { class: 'schedule-run' }, tick.runId)) : null,
    tick.error !== undefined ? ` · ${tick.error.code}: ${tick.error.message}` : '',
  );
}

/**
 * The schedules whose runs go to this session (GET /v1/schedules, those whose `sessionId` is this one): name, cron,
 * time zone, next tick, paused (and why, when the server paused it) and the last tick, with Pause / Resume and
 * "Run now" (POST /v1/schedules/:id/trigger). Hidden while the session has none.
 */
export class SchedulesPanel {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly status: HTMLElement;
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly sessionId: string,
  ) {
    this.body = el('ul', { class: 'schedules-list' });
    this.status = el('p', { class: 'muted schedules-status', role: 'status' });
    this.element = el(
      'section',
      { class: 'panel schedules', 'aria-labelledby': 'schedules-title', hidden: true },
      el('h2', { id: 'schedules-title' }, 'Schedules'),
      this.body,
      this.status,
    );
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
    let schedules: Schedule[];
    try {
      schedules = (await this.ctx.client.schedules.list()).filter((s) => s.sessionId === this.sessionId);
    } catch (error) {
      if (this.ctx.unauthorized(error)) return;
      // Shown only once the panel is: a session without schedules keeps its page as it was.
      this.status.textContent = `Schedules not loaded: ${errorText(error)}`;
      return;
    }
    replaceChildren(this.body, ...schedules.map((schedule) => this.row(schedule)));
    this.status.textContent = '';
    this.element.hidden = schedules.length === 0;
  }

  private row(schedule: Schedule): HTMLElement {
    const reason = schedule.pausedReason;
    const button = (cls: string, label: string, title: string, act: () => Promise<void>): HTMLElement =>
      el('button', { type: 'button', class: `btn btn-small ${cls}`, title, onclick: () => void act() }, label);
    return el(
      'li',
      {
        class: 'schedule-item',
        'data-schedule-id': schedule.id,
        'data-name': schedule.name,
        'data-paused': schedule.paused ? 'true' : 'false',
      },
      el(
        'div',
        { class: 'schedule-head' },
        el('strong', { class: 'schedule-name' }, schedule.name),
        schedule.paused ? statusChip('paused') : statusChip('active'),
        el(
          'span',
          { class: 'actions' },
          schedule.paused
            ? button('resume-btn', 'Resume', 'Tick again from the next cron time', () => this.resume(schedule))
            : button('pause-btn', 'Pause', 'Stop the ticks until resumed', () => this.pause(schedule)),
          button('trigger-btn', 'Run now', 'One tick now (POST /v1/schedules/:id/trigger)', () =>
            this.trigger(schedule),
          ),
        ),
      ),
      el(
        'p',
        { class: 'schedule-facts muted' },
        el('code', { class: 'schedule-cron' }, schedule.cron),
        ` ${schedule.timezone} · `,
        el(
          'span',
          { class: 'schedule-next' },
          schedule.nextRunAtMs !== null
            ? `next ${formatTime(schedule.nextRunAtMs)}`
            : schedule.paused
              ? 'no tick while paused'
              : 'no future tick',
        ),
        ` · overlap ${schedule.overlap}`,
      ),
      reason
        ? el(
            'p',
            { class: 'schedule-reason run-error' },
            `Paused by the server ${formatTime(reason.atMs)}: ${reason.code}: ${reason.message}`,
          )
        : null,
      schedule.lastTick ? tickLine(schedule.lastTick) : el('p', { class: 'schedule-last muted' }, 'No tick yet.'),
    );
  }

  private async pause(schedule: Schedule): Promise<void> {
    await this.act(async () => {
      await this.ctx.client.schedules.pause(schedule.id);
      this.ctx.announce(`Paused schedule ${schedule.name}`);
    });
  }

  private async resume(schedule: Schedule): Promise<void> {
    await this.act(async () => {
      await this.ctx.client.schedules.resume(schedule.id);
      this.ctx.announce(`Resumed schedule ${schedule.name}`);
    });
  }

  /** One tick now: its run shows in the live activity like any run; a skipped or failed tick says why. */
  private async trigger(schedule: Schedule): Promise<void> {
    await this.act(async () => {
      const { tick, run } = await this.ctx.client.schedules.trigger(schedule.id);
      const error = tick.error ? ` (${tick.error.code}: ${tick.error.message})` : '';
      const ok = tick.outcome === 'started' || tick.outcome === 'queued';
      this.ctx.announce(
        `Run now of ${schedule.name}: ${OUTCOME[tick.outcome]}${run ? ` run ${run.runId}` : ''}${error}`,
        ok ? 'info' : 'error',
      );
    });
  }

  private async act(call: () => Promise<void>): Promise<void> {
    try {
      await call();
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.ctx.announce(errorText(error), 'error');
    }
    await this.refresh();
  }
}
