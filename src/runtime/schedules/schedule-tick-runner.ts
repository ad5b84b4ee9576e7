import { CodeError } from '../../errors.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { ScheduleRecord, ScheduleTick } from '../../protocol/schedules.js';
import { SessionOptionsSchema, type SessionOptions } from '../../protocol/session-options.js';
import { formatZodIssues, zodFieldIssues } from '../../protocol/format-zod-issues.js';
import type { Caller } from '../ports/caller.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { RunHandle } from '../session-kernel/run-handle.js';
import { scheduleCaller, type TokenGrants } from './schedule-caller.js';

/** What a tick needs of the agent: the session routes' own operations (Agent has them). */
export interface ScheduleSessions {
  ensureLocal(sessionId: string, caller: Caller, startsRun: boolean): Promise<void>;
  getSession(id: string, caller: Caller): AgentSession;
  createSession(
    options: SessionOptions,
    caller: Caller,
    field?: string,
  ): Promise<{ session: AgentSession; resumed: boolean }>;
  checkSessionOptions(options: SessionOptions, caller: Caller, field?: string): Promise<void>;
}

/** Failures that leave a tick to another node (the session's owner, or any while this one drains): thrown. */
export const LEFT_TO_ANOTHER_NODE: ReadonlySet<string> = new Set(['SESSION_OWNED_ELSEWHERE', 'SHUTTING_DOWN']);

/** What runs a tick. */
export interface ScheduleTickDeps {
  readonly sessions: ScheduleSessions;
  readonly grants: TokenGrants;
  readonly nodeId: string;
  /** Logs a failure that is no CodeError (the tick records INTERNAL_ERROR, never its text). */
  readonly onError: (error: unknown, scheduleId?: string) => void;
}

/** The session a schedule's runs go to: the one it names, or `schedule:<name>`. */
export function scheduleSessionId(schedule: Pick<ScheduleRecord, 'name' | 'session'>): string {
  return schedule.session.id ?? `schedule:${schedule.name}`;
}

/** The Idempotency-Key a cron tick starts its run with: a retried tick (another node, a restart) finds the run it started. */
export function tickIdempotencyKey(scheduleId: string, tickAtMs: number): string {
  return `schedule:${scheduleId}:${new Date(tickAtMs).toISOString()}`;
}

/** What one tick did; `pause` set when the owner's tokens no longer let it run (the schedule is paused). */
export interface TickResult {
  tick: ScheduleTick;
  run?: RunRecord;
  pause?: { code: string; message: string };
}

/** The schedule's session for a tick: its template checked like a creation, then the session hydrated, found or made. */
async function openSession(deps: ScheduleTickDeps, schedule: ScheduleRecord, caller: Caller): Promise<AgentSession> {
  const id = scheduleSessionId(schedule);
  const template = schedule.session.template === undefined ? undefined : parseTemplate(schedule.session.template);
  const options: SessionOptions | undefined = template && { ...template, sessionId: id };
  // Every tick checks the template as a creation with the caller as it is now (scopes, workspace, model, limits).
  if (options) await deps.sessions.checkSessionOptions(options, caller, 'session.template');
  // A stored session is hydrated here; one another live node owns throws SESSION_OWNED_ELSEWHERE (the tick goes there).
  await deps.sessions.ensureLocal(id, caller, true);
  try {
    return deps.sessions.getSession(id, caller);
  } catch (error) {
    if (!options || !(error instanceof CodeError)) throw error;
    if (error.code !== 'SESSION_NOT_FOUND' && error.code !== 'SESSION_CLOSED') throw error;
    // `schedule:<name>` is made at the first tick (and reopened when a client closed it).
    const resume = error.code === 'SESSION_CLOSED' ? { resume: true } : {};
    try {
      return (await deps.sessions.createSession({ ...options, ...resume }, caller, 'session.template')).session;
    } catch (raced) {
      // A trigger and a tick at once: the other made it.
      if (raced instanceof CodeError && raced.code === 'SESSION_EXISTS') return deps.sessions.getSession(id, caller);
      throw raced;
    }
  }
}

/** The stored template read as POST /v1/sessions reads its body (a template stored by an older build may no longer be valid). */
function parseTemplate(template: Record<string, unknown>): SessionOptions {
  const parsed = SessionOptionsSchema.safeParse(template);
  if (!parsed.success)
    throw new CodeError('VALIDATION_ERROR', formatZodIssues(parsed.error, { where: 'session.template' }), {
      issues: zodFieldIssues(parsed.error, 'session.template', 10),
    });
  return parsed.data;
}

function busy(session: AgentSession): boolean {
  return session.runs.activeRunId !== undefined || session.runs.list().some((run) => run.status === 'queued');
}

/** Start the tick's run as the schedule's overlap says: skip while busy, queue behind, or cancel what runs first. */
function startRun(session: AgentSession, schedule: ScheduleRecord, key: string | undefined): RunHandle | undefined {
  const request = { input: schedule.input, ...(key !== undefined ? { idempotencyKey: key } : {}) };
  const existing = key !== undefined ? session.runs.forIdempotencyKey(key) : undefined;
  if (existing) return existing;
  if (schedule.overlap === 'skip') return busy(session) ? undefined : session.runs.start(request);
  if (schedule.overlap === 'enqueue') return session.runs.start({ ...request, multitaskStrategy: 'enqueue' });
  for (const run of session.runs.list()) if (run.status === 'queued') session.runs.cancel(run.runId);
  session.runs.cancel();
  // The cancelled run still holds the session until its producer ends: this run goes first in the queue.
  return session.runs.start({ ...request, multitaskStrategy: 'interrupt' });
}

/**
 * Run one tick of a schedule at `tickAtMs`: as its owner with today's grants (a revoked token pauses it), in its
 * session, through the ordinary run admission (quotas, budgets, events, verification). SESSION_OWNED_ELSEWHERE and
 * SHUTTING_DOWN are thrown (another node runs it); every other failure is the tick's `failed` outcome.
 */
export async function runScheduleTick(
  deps: ScheduleTickDeps,
  schedule: ScheduleRecord,
  tickAtMs: number,
  manual: boolean,
  idempotencyKey?: string,
): Promise<TickResult> {
  const base = { tickAtMs, nodeId: deps.nodeId, ...(manual ? { manual: true } : {}) };
  const who = scheduleCaller(schedule.owner, deps.grants);
  if ('refused' in who) return { tick: { ...base, outcome: 'paused', error: who.refused }, pause: who.refused };
  try {
    const session = await openSession(deps, schedule, who.caller);
    // A trigger is as idempotent as its client asks (its Idempotency-Key header), like POST .../runs.
    const key = manual ? idempotencyKey : tickIdempotencyKey(schedule.id, tickAtMs);
    const handle = startRun(session, schedule, key);
    if (!handle)
      return {
        tick: {
          ...base,
          outcome: 'skipped',
          error: { code: 'SESSION_BUSY', message: `session ${session.id} was busy (overlap "skip")` },
        },
      };
    await handle.saved;
    const outcome = handle.record.status === 'queued' ? 'queued' : 'started';
    return { tick: { ...base, outcome, runId: handle.record.runId }, run: handle.record };
  } catch (error) {
    if (error instanceof CodeError && LEFT_TO_ANOTHER_NODE.has(error.code)) throw error;
    if (!(error instanceof CodeError)) deps.onError(error, schedule.id);
    const code = error instanceof CodeError ? error.code : 'INTERNAL_ERROR';
    const message = error instanceof CodeError ? error.message : 'the tick failed';
    return { tick: { ...base, outcome: 'failed', error: { code, message } } };
  }
}
