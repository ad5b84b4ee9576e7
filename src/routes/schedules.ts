import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import { ErrorBodySchema } from '../protocol/http.js';
import {
  CreateScheduleRequestSchema,
  ScheduleDeleteResponseSchema,
  ScheduleListResponseSchema,
  ScheduleParamsSchema,
  ScheduleResponseSchema,
  ScheduleTriggerResponseSchema,
  UpdateScheduleRequestSchema,
} from '../protocol/schedules.js';
import { assertInputBound } from '../server/input-bound.js';
import { ensureLocalOrForward, addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** Schedule routes: create, list, get, edit (pause/resume), delete, trigger (docs/schedules.md). */
export function registerScheduleRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { schedules } = ctx;
  const errors = { 400: ErrorBodySchema, 403: ErrorBodySchema, 404: ErrorBodySchema };
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/schedules',
      summary: 'Create a schedule: a cron whose ticks start runs in a session',
      description:
        "A five-field `cron` (or a nickname such as `@hourly`) in `timezone` (default UTC); six-field (seconds) crons are 400 naming `cron`. Runs go to `session.id` (an existing session of the tenant) or to `schedule:<name>`, made from `session.template` (SessionOptions, checked like POST /v1/sessions now and at every tick). The schedule runs as its creator: each tick with the scopes both this request and the principal's configured tokens grant then (none left pauses it). `overlap` (skip, enqueue, cancel_previous) says what a tick does while the session is busy; `catchUp` (none, latest) what ticks missed while no node ran become. A name the tenant has is 409 SCHEDULE_EXISTS; past limits.maxSchedulesPerTenant (default 20) 429 QUOTA_EXCEEDED.",
      scope: 'sessions',
      body: CreateScheduleRequestSchema,
      responses: {
        201: ScheduleResponseSchema,
        ...errors,
        409: ErrorBodySchema,
        413: ErrorBodySchema,
        429: ErrorBodySchema,
      },
    },
    async ({ body, caller, reply }) => {
      assertInputBound(body.input, ctx.config.limits.maxInputBytes);
      const schedule = await schedules.create(body, caller);
      reply.status(201);
      return { schedule };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/schedules',
      summary: "The caller's tenant's schedules",
      scope: 'sessions',
      responses: { 200: ScheduleListResponseSchema },
    },
    async ({ caller }) => ({ schedules: await schedules.list(caller) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/schedules/:id',
      summary: 'One schedule, with its next tick and what its last tick did',
      scope: 'sessions',
      params: ScheduleParamsSchema,
      responses: { 200: ScheduleResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ schedule: await schedules.get(params.id, caller) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'PATCH',
      url: '/v1/schedules/:id',
      summary: 'Pause or resume a schedule, or edit it',
      description:
        '`paused: true` stops its ticks, `false` resumes them (ticks that fell while it was paused are not caught up; a pause the server made, pausedReason, is cleared). Any other field edits it, checked as at creation, and the schedule then runs as the caller who edited it. The name is fixed: it names the session.',
      scope: 'sessions',
      params: ScheduleParamsSchema,
      body: UpdateScheduleRequestSchema,
      responses: { 200: ScheduleResponseSchema, ...errors, 413: ErrorBodySchema },
    },
    async ({ params, body, caller }) => {
      if (body.input !== undefined) assertInputBound(body.input, ctx.config.limits.maxInputBytes);
      return { schedule: await schedules.update(params.id, body, caller) };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/schedules/:id',
      summary: 'Delete a schedule (the runs it started stay)',
      scope: 'sessions',
      params: ScheduleParamsSchema,
      responses: { 200: ScheduleDeleteResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ deleted: await schedules.delete(params.id, caller) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/schedules/:id/trigger',
      summary: 'Run a schedule now: one tick outside its cron',
      description:
        "A tick now, as a cron tick runs (its owner's grants, its template checked, its overlap): `tick.outcome` is started, queued, skipped (overlap skip while busy), failed (`tick.error`) or paused (the owner's tokens are gone: the schedule is paused). An `Idempotency-Key` header makes a retry answer the run it started. Answered by the node that owns the schedule's session (forwarded there).",
      scope: 'sessions',
      params: ScheduleParamsSchema,
      headers: { 'Idempotency-Key': 'Optional; up to 200 visible ASCII characters.' },
      responses: { 200: ScheduleTriggerResponseSchema, ...errors, 503: ErrorBodySchema },
    },
    async ({ params, caller, request, reply }) => {
      const raw = request.headers['idempotency-key'];
      const key = Array.isArray(raw) ? raw[0] : raw;
      if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
        throw new CodeError('VALIDATION_ERROR', 'headers.idempotency-key: must be 1-200 visible ASCII characters', {
          field: 'Idempotency-Key',
        });
      if (await ensureLocalOrForward(ctx, request, reply, () => schedules.ensureLocal(params.id, caller))) return reply;
      const { tick, run } = await schedules.trigger(params.id, caller, key);
      return { tick, run: run ?? null };
    },
  );
}
