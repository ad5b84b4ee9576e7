import { z } from 'zod';
import { RunRecordSchema } from './run-record.js';
import { SessionOptionsSchema } from './session-options.js';

/** A schedule's name: its session is `schedule:<name>` unless it names one (letters, digits, "_", "." and "-"). */
export const ScheduleNameSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
    'must be 1-64 letters, digits, "_", "." or "-", not starting with one of "_.-"',
  );

/** What a tick does while the schedule's session still has a run active (or queued). */
export const ScheduleOverlapSchema = z.enum(['skip', 'enqueue', 'cancel_previous']);

/** What a tick missed while no node ran (the server was down) becomes: nothing, or the latest one run late. */
export const ScheduleCatchUpSchema = z.enum(['none', 'latest']);

/** A five-field cron expression (or a nickname such as `@hourly`), read by croner; checked on the server. */
export const ScheduleCronSchema = z.string().min(1).max(200);

/** An IANA time zone the cron is read in (default UTC). */
export const ScheduleTimezoneSchema = z.string().min(1).max(100);

/** Where a schedule's runs go: an existing session of the creator's tenant, or one made from a template. */
export const ScheduleSessionSchema = z
  .object({
    /** An existing session of the creator's tenant (it must be there at each tick). */
    id: z.string().min(1).max(128).optional(),
    /** The SessionOptions of `schedule:<name>`, created at the first tick and checked again at every tick. */
    template: SessionOptionsSchema.optional(),
  })
  .strict()
  .refine((s) => (s.id === undefined) !== (s.template === undefined), {
    message: 'exactly one of session.id or session.template must be set',
  });

/** Body of POST /v1/schedules. */
export const CreateScheduleRequestSchema = z
  .object({
    name: ScheduleNameSchema,
    cron: ScheduleCronSchema,
    timezone: ScheduleTimezoneSchema.optional(),
    session: ScheduleSessionSchema.default({ template: {} }),
    /** The run input of every tick. */
    input: z.string().min(1),
    overlap: ScheduleOverlapSchema.default('skip'),
    catchUp: ScheduleCatchUpSchema.default('none'),
    /** Create it paused (no tick until a PATCH resumes it). */
    paused: z.boolean().optional(),
  })
  .strict();

/** A POST /v1/schedules body. */
export type CreateScheduleRequest = z.infer<typeof CreateScheduleRequestSchema>;

/** Body of PATCH /v1/schedules/:id: pause or resume, and edit (the name stays: it names the session). */
export const UpdateScheduleRequestSchema = z
  .object({
    paused: z.boolean().optional(),
    cron: ScheduleCronSchema.optional(),
    timezone: ScheduleTimezoneSchema.optional(),
    session: ScheduleSessionSchema.optional(),
    input: z.string().min(1).optional(),
    overlap: ScheduleOverlapSchema.optional(),
    catchUp: ScheduleCatchUpSchema.optional(),
  })
  .strict();

/** A PATCH /v1/schedules/:id body. */
export type UpdateScheduleRequest = z.infer<typeof UpdateScheduleRequestSchema>;

/** Who a schedule runs as: its creator, as the creator's token granted at creation. */
export const ScheduleOwnerSchema = z.object({
  principal: z.string(),
  tenantId: z.string(),
  /** The token's scopes at creation (config/api-token.ts ScopeSchema; protocol imports no config). */
  scopes: z.array(z.enum(['sessions', 'host_direct', 'admin'])),
});

/** Why a schedule was paused by the server rather than by a client. */
export const SchedulePauseReasonSchema = z.object({
  /** TOKEN_REVOKED: no configured token of the owner grants the tenant what a tick needs now. */
  code: z.string(),
  message: z.string(),
  atMs: z.number().int().nonnegative(),
});

/** What one tick did: started (or queued) a run, skipped it (overlap), or failed before a run started. */
export const ScheduleTickSchema = z.object({
  /** The cron time of the tick (or the time of a trigger). */
  tickAtMs: z.number().int().nonnegative(),
  outcome: z.enum(['started', 'queued', 'skipped', 'failed', 'paused']),
  /** Set when this tick did not fire on the cron but by POST .../trigger. */
  manual: z.boolean().optional(),
  runId: z.string().optional(),
  /** Why it failed or was skipped (an error code, e.g. SESSION_BUSY, QUOTA_EXCEEDED, SESSION_NOT_FOUND). */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** The node that ran it. */
  nodeId: z.string().optional(),
});

/** A tick's record. */
export type ScheduleTick = z.infer<typeof ScheduleTickSchema>;

/** A stored schedule (what POST takes, plus its owner and state). */
export const ScheduleRecordSchema = z.object({
  id: z.string(),
  name: ScheduleNameSchema,
  cron: z.string(),
  timezone: z.string(),
  session: z.object({ id: z.string().optional(), template: z.record(z.string(), z.unknown()).optional() }),
  input: z.string(),
  overlap: ScheduleOverlapSchema,
  catchUp: ScheduleCatchUpSchema,
  paused: z.boolean(),
  pausedReason: SchedulePauseReasonSchema.optional(),
  owner: ScheduleOwnerSchema,
  createdAtMs: z.number().int().nonnegative(),
  updatedAtMs: z.number().int().nonnegative(),
});

/** A stored schedule. */
export type ScheduleRecord = z.infer<typeof ScheduleRecordSchema>;

/** The tick state of a schedule, stored apart from it (ticks never rewrite what a client edits). */
export const ScheduleTickStateSchema = z.object({
  id: z.string(),
  /** The cron time of the newest tick handled (run, skipped or dropped): the next is after it. */
  lastTickAtMs: z.number().int().nonnegative(),
  lastTick: ScheduleTickSchema.optional(),
});

/** A schedule's tick state. */
export type ScheduleTickState = z.infer<typeof ScheduleTickStateSchema>;

/** A schedule as the routes answer it. */
export const ScheduleSchema = ScheduleRecordSchema.extend({
  /** The session its runs go to: session.id, or `schedule:<name>`. */
  sessionId: z.string(),
  /** The next cron time a tick fires at (null while paused or when the cron has no future time). */
  nextRunAtMs: z.number().int().nonnegative().nullable(),
  lastTick: ScheduleTickSchema.nullable(),
}).meta({ id: 'Schedule' });

/** A schedule as the routes answer it. */
export type Schedule = z.infer<typeof ScheduleSchema>;

/** `:id` of the schedule routes. */
export const ScheduleParamsSchema = z.object({ id: z.string().min(1).max(128) }).strict();

/** One schedule. */
export const ScheduleResponseSchema = z.object({ schedule: ScheduleSchema });

/** The caller's tenant's schedules. */
export const ScheduleListResponseSchema = z.object({ schedules: z.array(ScheduleSchema) });

/** DELETE /v1/schedules/:id. */
export const ScheduleDeleteResponseSchema = z.object({ deleted: z.boolean() });

/** POST /v1/schedules/:id/trigger: what the tick did, and its run when it started or queued one. */
export const ScheduleTriggerResponseSchema = z.object({
  tick: ScheduleTickSchema,
  run: RunRecordSchema.nullable(),
});
