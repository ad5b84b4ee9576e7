import { CodeError } from '../../errors.js';
import type { ScheduleRecord, ScheduleTickState } from '../../protocol/schedules.js';
import type { ScheduleStore } from '../ports/schedule-store.js';
import type { ScheduleClock } from './schedule-clock.js';
import { ScheduleCron, TICK_GRACE_MS } from './schedule-cron.js';
import {
  LEFT_TO_ANOTHER_NODE,
  runScheduleTick,
  type ScheduleTickDeps,
  type TickResult,
} from './schedule-tick-runner.js';

/** How long a node holds a tick's lease: a node that dies holding it leaves the tick to another this much later. */
export const TICK_LEASE_MS = 10_000;
/** How often a due tick another node holds (or whose session another node owns) is looked at again. */
export const TICK_RETRY_MS = 1_000;
/** How often every node rescans the store for schedules made or changed elsewhere. */
export const SCHEDULE_RESCAN_MS = 5_000;

/** What the scheduler needs. */
export interface SchedulerDeps extends ScheduleTickDeps {
  readonly store: ScheduleStore;
  readonly clock: ScheduleClock;
}

/** What handling a due tick came to: handled (run, skipped, dropped) or to be looked at again. */
type DueOutcome = 'done' | 'retry';

/**
 * Fires schedules' ticks on every node: wakes at the next cron time (and every SCHEDULE_RESCAN_MS), takes each due
 * tick's lease (one node runs it), runs it, and records it in the schedule's tick state. A tick found more than
 * TICK_GRACE_MS late was missed while no node ran: `catchUp: "latest"` runs the newest missed one, "none" drops them.
 */
export class Scheduler {
  private timer: unknown;
  private scanning: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: SchedulerDeps) {}

  /** Scan now (and after the scan in progress, if one is). */
  poke(): void {
    if (this.stopped) return;
    if (this.scanning) {
      this.again = true;
      return;
    }
    this.scanning = this.scan()
      .catch((error: unknown) => this.deps.onError(error))
      .finally(() => {
        this.scanning = undefined;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  /** Stop waking; waits for a scan in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clock.clearTimer(this.timer);
    await this.scanning;
  }

  private async scan(): Promise<void> {
    const { clock, store } = this.deps;
    if (this.timer !== undefined) this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
    const now = clock.now();
    const wakes = await Promise.all(
      (await store.list()).map((schedule) =>
        this.visit(schedule, now).catch((error: unknown) => {
          this.deps.onError(error, schedule.id);
          return now + TICK_RETRY_MS;
        }),
      ),
    );
    if (this.stopped) return;
    const wake = Math.min(now + SCHEDULE_RESCAN_MS, ...wakes.filter((w): w is number => w !== undefined));
    this.timer = clock.setTimer(() => this.poke(), wake - clock.now());
  }

  /** Handle a schedule's due tick, if any; answers when to look at it again. */
  private async visit(schedule: ScheduleRecord, now: number): Promise<number | undefined> {
    if (schedule.paused) return undefined;
    const cron = new ScheduleCron(schedule.cron, schedule.timezone);
    const state = await this.deps.store.ticks(schedule.id);
    const after = state?.lastTickAtMs ?? schedule.createdAtMs;
    const due = cron.latestDue(after, now);
    if (due !== undefined && (await this.handle(schedule, due, state, now)) === 'retry') return now + TICK_RETRY_MS;
    return cron.next(now);
  }

  private async handle(
    schedule: ScheduleRecord,
    due: number,
    state: ScheduleTickState | undefined,
    now: number,
  ): Promise<DueOutcome> {
    const { store, nodeId } = this.deps;
    if (now - due > TICK_GRACE_MS && schedule.catchUp === 'none') {
      // Missed while no node ran: dropped (the last tick that ran stays the schedule's lastTick).
      await store.putTicks({
        id: schedule.id,
        lastTickAtMs: due,
        ...(state?.lastTick ? { lastTick: state.lastTick } : {}),
      });
      return 'done';
    }
    if (!(await store.takeTickLease(schedule.id, due, nodeId, TICK_LEASE_MS))) return 'retry';
    // Another node may have run it between the read above and this lease.
    const fresh = await store.ticks(schedule.id);
    if (fresh && fresh.lastTickAtMs >= due) return 'done';
    let result: TickResult;
    try {
      result = await runScheduleTick(this.deps, schedule, due, false);
    } catch (error) {
      if (!(error instanceof CodeError) || !LEFT_TO_ANOTHER_NODE.has(error.code)) throw error;
      // The node that owns the session runs it (or any, while this one drains): it takes this lease once given back.
      await store.releaseTickLease(schedule.id, due, nodeId);
      return 'retry';
    }
    if (result.pause) await pauseSchedule(store, schedule.id, result.pause, this.deps.clock.now());
    await store.putTicks({ id: schedule.id, lastTickAtMs: due, lastTick: result.tick });
    return 'done';
  }
}

/** Pause a schedule for a reason of the server's (its owner's tokens no longer let it run). */
export async function pauseSchedule(
  store: ScheduleStore,
  id: string,
  reason: { code: string; message: string },
  atMs: number,
): Promise<void> {
  const fresh = await store.get(id);
  if (!fresh) return;
  await store.update({ ...fresh, paused: true, pausedReason: { ...reason, atMs }, updatedAtMs: atMs });
}
