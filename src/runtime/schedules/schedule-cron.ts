import { Cron } from 'croner';
import { CodeError } from '../../errors.js';

/** Ticks this far behind their cron time still run as on time; older ones were missed and follow `catchUp`. */
export const TICK_GRACE_MS = 30_000;

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

function invalid(path: string, message: string): CodeError {
  return new CodeError('VALIDATION_ERROR', `${path}: ${message}`, {
    field: path.slice(path.lastIndexOf('.') + 1),
    issues: [{ path, message }],
  });
}

/**
 * A schedule's cron, read by croner: five fields (minute hour day month weekday) or a nickname (`@hourly`), in an
 * IANA time zone. Six-field (seconds) expressions are refused: ticks are at least one minute apart. 400 naming the field.
 */
export class ScheduleCron {
  private readonly cron: Cron;

  constructor(
    readonly expression: string,
    readonly timezone: string,
    fields: { cron: string; timezone: string } = { cron: 'body.cron', timezone: 'body.timezone' },
  ) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    } catch {
      throw invalid(fields.timezone, `"${timezone}" is not an IANA time zone (e.g. "UTC", "Europe/Berlin")`);
    }
    const trimmed = expression.trim();
    if (!trimmed.startsWith('@')) {
      const parts = trimmed.split(/\s+/).length;
      if (parts !== 5)
        throw invalid(
          fields.cron,
          parts === 6
            ? 'a six-field cron has seconds: schedules tick at most once a minute, use five fields (minute hour day month weekday)'
            : `must be five fields (minute hour day month weekday) or a nickname such as "@hourly", not ${parts}`,
        );
    }
    try {
      this.cron = new Cron(trimmed, { timezone });
    } catch (error) {
      throw invalid(fields.cron, error instanceof Error ? error.message : 'not a cron expression');
    }
    if (this.cron.nextRun(new Date()) === null) throw invalid(fields.cron, 'names no future time');
  }

  /** The first cron time strictly after `afterMs`, or undefined when there is none. */
  next(afterMs: number): number | undefined {
    return this.cron.nextRun(new Date(afterMs))?.getTime();
  }

  /** The newest cron time after `afterMs` and at most `nowMs` (the tick due now, maybe missed), or undefined. */
  latestDue(afterMs: number, nowMs: number): number | undefined {
    let from = afterMs;
    // After a long outage only the newest missed tick matters: start a week back when one falls in that week.
    if (nowMs - from > WEEK_MS) {
      const recent = this.next(nowMs - WEEK_MS);
      if (recent !== undefined && recent <= nowMs) from = nowMs - WEEK_MS;
    }
    let latest: number | undefined;
    for (let next = this.next(from); next !== undefined && next <= nowMs; next = this.next(next)) latest = next;
    return latest;
  }
}
