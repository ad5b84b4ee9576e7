import { CodeError } from '../../errors.js';
import type {
  CreateScheduleRequest,
  Schedule,
  ScheduleRecord,
  ScheduleTickState,
  UpdateScheduleRequest,
} from '../../protocol/schedules.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import type { Caller } from '../ports/caller.js';
import { scheduleCaller } from './schedule-caller.js';
import { ScheduleCron, TICK_GRACE_MS } from './schedule-cron.js';
import { pauseSchedule, Scheduler, type SchedulerDeps } from './scheduler.js';
import { runScheduleTick, scheduleSessionId, type TickResult } from './schedule-tick-runner.js';

/** What the schedules need beyond the scheduler's. */
export interface SchedulesDeps extends SchedulerDeps {
  readonly newId: (prefix: string) => string;
  /** limits.maxSchedulesPerTenant. */
  readonly maxPerTenant: number;
}

/** Template options a schedule decides itself: its session is `schedule:<name>`, of its creator's tenant. */
const TEMPLATE_OWN_FIELDS = ['sessionId', 'resume', 'tenantId', 'principal'] as const;

function notFound(id: string): CodeError {
  return new CodeError('SCHEDULE_NOT_FOUND', `schedule ${id} not found`, { scheduleId: id });
}

/**
 * The schedules of every tenant: what the /v1/schedules routes do (create, list, get, edit, delete, trigger) over
 * the schedule store, and the scheduler that fires their ticks on this node.
 */
export class Schedules {
  readonly scheduler: Scheduler;

  constructor(private readonly deps: SchedulesDeps) {
    this.scheduler = new Scheduler(deps);
  }

  /** Start firing ticks. */
  start(): void {
    this.scheduler.poke();
  }

  /** Stop firing ticks (a scan in progress ends first), then close the store. */
  async close(): Promise<void> {
    await this.scheduler.stop();
    await this.deps.store.close();
  }

  /** Check where a schedule's runs go, as at a creation: a template like POST /v1/sessions, a named session exists. */
  private async checkSession(
    session: CreateScheduleRequest['session'],
    name: string,
    caller: Caller,
    field: string,
  ): Promise<void> {
    const { sessions } = this.deps;
    if (session.template) {
      for (const own of TEMPLATE_OWN_FIELDS)
        if (session.template[own] !== undefined)
          throw new CodeError(
            'VALIDATION_ERROR',
            `${field}.template.${own}: a schedule's session is schedule:<name> (or session.id) of its creator's tenant`,
            { field: own, issues: [{ path: `${field}.template.${own}`, message: 'is set by the schedule' }] },
          );
      await sessions.checkSessionOptions(
        { ...session.template, sessionId: scheduleSessionId({ name, session }) },
        caller,
        `${field}.template`,
      );
      return;
    }
    const id = session.id!;
    try {
      await sessions.ensureLocal(id, caller, false);
      sessions.getSession(id, caller);
    } catch (error) {
      // Live on another node: it exists.
      if (error instanceof CodeError && error.code === 'SESSION_OWNED_ELSEWHERE') return;
      throw error;
    }
  }

  /** POST /v1/schedules: a schedule of the caller's tenant, run as the caller (its principal and scopes now). */
  async create(body: CreateScheduleRequest, caller: Caller): Promise<Schedule> {
    const { store, clock } = this.deps;
    const timezone = body.timezone ?? 'UTC';
    new ScheduleCron(body.cron, timezone);
    await this.checkSession(body.session, body.name, caller, 'body.session');
    const now = clock.now();
    const record: ScheduleRecord = {
      id: this.deps.newId('sch'),
      name: body.name,
      cron: body.cron.trim(),
      timezone,
      session: body.session.template ? { template: body.session.template } : { id: body.session.id! },
      input: body.input,
      overlap: body.overlap,
      catchUp: body.catchUp,
      paused: body.paused ?? false,
      owner: { principal: caller.principal, tenantId: caller.tenantId, scopes: [...caller.scopes] },
      createdAtMs: now,
      updatedAtMs: now,
    };
    const outcome = await store.create(record, this.deps.maxPerTenant);
    if (outcome === 'exists')
      throw new CodeError('SCHEDULE_EXISTS', `body.name: tenant "${caller.tenantId}" has a schedule "${body.name}"`, {
        field: 'name',
        name: body.name,
      });
    if (outcome === 'limit')
      throw new CodeError(
        'QUOTA_EXCEEDED',
        `tenant "${caller.tenantId}" has ${this.deps.maxPerTenant} schedules: limits.maxSchedulesPerTenant (${this.deps.maxPerTenant})`,
        { quota: 'limits.maxSchedulesPerTenant', limit: this.deps.maxPerTenant, usage: this.deps.maxPerTenant },
      );
    await store.putTicks({ id: record.id, lastTickAtMs: now });
    this.scheduler.poke();
    return this.view(record, { id: record.id, lastTickAtMs: now });
  }

  /** The caller's tenant's schedule; SCHEDULE_NOT_FOUND for another tenant's, as for none. */
  private async visible(id: string, caller: Caller): Promise<ScheduleRecord> {
    const found = await this.deps.store.get(id);
    if (!found || found.owner.tenantId !== caller.tenantId) throw notFound(id);
    return found;
  }

  /** GET /v1/schedules: the caller's tenant's schedules, oldest first. */
  async list(caller: Caller): Promise<Schedule[]> {
    const { store } = this.deps;
    const schedules = await store.list(caller.tenantId);
    schedules.sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id));
    return Promise.all(schedules.map(async (s) => this.view(s, await store.ticks(s.id))));
  }

  /** GET /v1/schedules/:id. */
  async get(id: string, caller: Caller): Promise<Schedule> {
    const schedule = await this.visible(id, caller);
    return this.view(schedule, await this.deps.store.ticks(id));
  }

  /**
   * PATCH /v1/schedules/:id: pause or resume (ticks that fell while paused are not caught up), and edit. An edit
   * (anything but `paused`) is made as the editor: the schedule runs as the caller who edited it from then on.
   */
  async update(id: string, body: UpdateScheduleRequest, caller: Caller): Promise<Schedule> {
    const { store, clock } = this.deps;
    const current = await this.visible(id, caller);
    const now = clock.now();
    const { paused, ...edits } = body;
    const next: ScheduleRecord = { ...current, updatedAtMs: now };
    if (edits.cron !== undefined) next.cron = edits.cron.trim();
    if (edits.timezone !== undefined) next.timezone = edits.timezone;
    if (edits.input !== undefined) next.input = edits.input;
    if (edits.overlap !== undefined) next.overlap = edits.overlap;
    if (edits.catchUp !== undefined) next.catchUp = edits.catchUp;
    if (edits.cron !== undefined || edits.timezone !== undefined) new ScheduleCron(next.cron, next.timezone);
    if (edits.session !== undefined) {
      await this.checkSession(edits.session, current.name, caller, 'body.session');
      next.session = edits.session.template ? { template: edits.session.template } : { id: edits.session.id! };
    }
    if (Object.values(edits).some((value) => value !== undefined)) {
      // The template kept is checked again as the new owner's.
      if (edits.session === undefined && next.session.template)
        await this.checkSession(
          { template: next.session.template as SessionOptions },
          next.name,
          caller,
          'body.session',
        );
      next.owner = { principal: caller.principal, tenantId: caller.tenantId, scopes: [...caller.scopes] };
    }
    const resumed = paused === false && current.paused;
    if (paused !== undefined) next.paused = paused;
    if (paused !== undefined) delete next.pausedReason;
    if (!(await store.update(next))) throw notFound(id);
    let ticks = await store.ticks(id);
    if (resumed) {
      ticks = { ...(ticks ?? {}), id, lastTickAtMs: now };
      await store.putTicks(ticks);
    }
    this.scheduler.poke();
    return this.view(next, ticks);
  }

  /** DELETE /v1/schedules/:id: no more ticks; runs it started stay. */
  async delete(id: string, caller: Caller): Promise<boolean> {
    await this.visible(id, caller);
    const deleted = await this.deps.store.delete(id);
    if (!deleted) throw notFound(id);
    this.scheduler.poke();
    return true;
  }

  /**
   * Make the schedule's session live here (hydrating it), as its owner would: SESSION_OWNED_ELSEWHERE when another
   * node has it, so a trigger is forwarded there. Nothing when its owner's tokens no longer let it run.
   */
  async ensureLocal(id: string, caller: Caller): Promise<void> {
    const schedule = await this.visible(id, caller);
    const who = scheduleCaller(schedule.owner, this.deps.grants);
    if ('caller' in who) await this.deps.sessions.ensureLocal(scheduleSessionId(schedule), who.caller, true);
  }

  /** POST /v1/schedules/:id/trigger: one tick now (outside the cron; the cron's ticks go on as before). */
  async trigger(id: string, caller: Caller, idempotencyKey?: string): Promise<TickResult> {
    const { store, clock } = this.deps;
    const schedule = await this.visible(id, caller);
    const now = clock.now();
    const result = await runScheduleTick(this.deps, schedule, now, true, idempotencyKey);
    if (result.pause) await pauseSchedule(store, id, result.pause, now);
    const ticks = await store.ticks(id);
    await store.putTicks({ id, lastTickAtMs: ticks?.lastTickAtMs ?? schedule.createdAtMs, lastTick: result.tick });
    return result;
  }

  private view(schedule: ScheduleRecord, ticks: ScheduleTickState | undefined): Schedule {
    const now = this.deps.clock.now();
    let nextRunAtMs: number | null = null;
    if (!schedule.paused) {
      const cron = new ScheduleCron(schedule.cron, schedule.timezone);
      const after = cron.next(ticks?.lastTickAtMs ?? schedule.createdAtMs);
      nextRunAtMs = (after !== undefined && after >= now - TICK_GRACE_MS ? after : cron.next(now)) ?? null;
    }
    return { ...schedule, sessionId: scheduleSessionId(schedule), nextRunAtMs, lastTick: ticks?.lastTick ?? null };
  }
}
