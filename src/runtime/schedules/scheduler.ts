import { CodeError } from '../../errors.js';
import type { ScheduleRecord, ScheduleTickState } from '../../protocol/schedules.js';
import type { ScheduleStore } from '../ports/schedule-store.js';
import type { ScheduleClock } from './schedule-clock.js';
import { ScheduleCron, TICK_GRACE_MS } from './schedule-cron.js';
import { scheduleCaller } from './schedule-caller.js';
import {
  LEFT_TO_ANOTHER_NODE,
  runScheduleTick,
  scheduleSessionId,
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

/** What handling a due tick came to: handled (run, skipped, dropped), running now, or to be looked at again. */
type DueOutcome = 'done' | 'running' | 'retry';

/**
 * Fires schedules' ticks on every node: wakes at the next cron time (and every SCHEDULE_RESCAN_MS), takes each due
 * tick's lease (one node runs it), runs it, and records it in the schedule's tick state. A tick found more than
 * TICK_GRACE_MS late was missed while no node ran: `catchUp: "latest"` runs the newest missed one, "none" drops them.
 * A tick runs beside the scans (a slow session creation delays no other schedule's tick).
 */
export class Scheduler {
  private timer: unknown;
  private retryTimer: unknown;
  private scanning: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** The ticks running on this node, by schedule id. */
  private readonly running = new Map<string, Promise<void>>();

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

  /** Stop waking; waits for a scan and the ticks in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    const { clock } = this.deps;
    if (this.timer !== undefined) clock.clearTimer(this.timer);
    if (this.retryTimer !== undefined) clock.clearTimer(this.retryTimer);
    await this.scanning;
    await Promise.all(this.running.values());
  }

  private async scan(): Promise<void> {
    const { clock, store } = this.deps;
    if (this.timer !== undefined) clock.clearTimer(this.timer);
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
    // Its tick in progress pokes a scan when it ends.
    if (this.running.has(schedule.id)) return cron.next(now);
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
    // A node that does not own the session leaves the tick to the one that does (which then takes the lease at once).
    if (!(await this.mayRunHere(schedule))) return 'retry';
    if (!(await store.takeTickLease(schedule.id, due, nodeId, TICK_LEASE_MS))) return 'retry';
    // Another node may have run it between the read above and this lease.
    const fresh = await store.ticks(schedule.id);
    if (fresh && fresh.lastTickAtMs >= due) return 'done';
    const tick = this.runTick(schedule, due).finally(() => {
      this.running.delete(schedule.id);
      this.poke();
    });
    this.running.set(schedule.id, tick);
    return 'running';
  }

  /**
   * False when another live node owns the schedule's session (or this one drains): its tick is that node's. A stored
   * session no node owns is hydrated here; whatever else fails is the tick's to record.
   */
  private async mayRunHere(schedule: ScheduleRecord): Promise<boolean> {
    const who = scheduleCaller(schedule.owner, this.deps.grants);
    if (!('caller' in who)) return true;
    try {
      await this.deps.sessions.ensureLocal(scheduleSessionId(schedule), who.caller, true);
      return true;
    } catch (error) {
      return !(error instanceof CodeError && LEFT_TO_ANOTHER_NODE.has(error.code));
    }
  }

  /** Run a leased tick and record it; one left to another node gives its lease back and is looked at again soon. */
  private async runTick(schedule: ScheduleRecord, due: number): Promise<void> {
    const { store, nodeId, clock } = this.deps;
    let result: TickResult;
    try {
      result = await runScheduleTick(this.deps, schedule, due, false);
    } catch (error) {
      if (error instanceof CodeError && LEFT_TO_ANOTHER_NODE.has(error.code)) {
        // The node that owns the session runs it (or any, while this one drains): it takes this lease once given back.
        await store.releaseTickLease(schedule.id, due, nodeId).catch((e: unknown) => this.deps.onError(e, schedule.id));
        if (!this.stopped && this.retryTimer === undefined)
          this.retryTimer = clock.setTimer(() => {
            this.retryTimer = undefined;
            this.poke();
          }, TICK_RETRY_MS);
      } else this.deps.onError(error, schedule.id);
      return;
    }
    try {
      if (result.pause) await pauseSchedule(store, schedule.id, result.pause, clock.now());
      await store.putTicks({ id: schedule.id, lastTickAtMs: due, lastTick: result.tick });
    } catch (error) {
      this.deps.onError(error, schedule.id);
    }
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
