import type { TraceParent } from '../runtime/ports/telemetry.js';
import { traceOf } from '../server/request-traces.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RunHandle } from '../runtime/session-kernel/run-handle.js';
import type { AgentSession } from '../runtime/session-kernel/agent-session.js';
import { CodeError } from '../errors.js';
import type { Caller } from '../runtime/ports/caller.js';
import type { ResolvedRunWebhook } from '../runtime/ports/run-webhooks.js';
import { privateOutboundAllowed } from '../runtime/outbound/assert-outbound-url.js';
import {
  CancelResponseSchema,
  ErrorBodySchema,
  RunEventsQuerySchema,
  RunEventsResponseSchema,
  RunFinishedResponseSchema,
  RunListResponseSchema,
  ResumeRequestSchema,
  RunParamsSchema,
  RunRequestSchema,
  type RunRequest,
  RunResponseSchema,
  RunStartedResponseSchema,
  SessionParamsSchema,
} from '../protocol/http.js';
import { assertInputBound } from '../server/input-bound.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

function idempotencyKey(raw: string | string[] | undefined): string | undefined {
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
    throw new CodeError('VALIDATION_ERROR', 'headers.idempotency-key: must be 1-200 visible ASCII characters', {
      field: 'Idempotency-Key',
    });
  return key;
}

/**
 * A run with attachments: each part checked (and the inline ones stored) before the run is admitted; when
 * admission fails (SESSION_BUSY, a quota), or a retried Idempotency-Key answers the run it admitted before, the
 * parts this request stored are removed again.
 */
async function startWithAttachments(
  ctx: ServerContext,
  session: AgentSession,
  body: RunRequest,
  key: string | undefined,
  trace: TraceParent | undefined,
  webhook: ResolvedRunWebhook | undefined,
): Promise<RunHandle> {
  if (body.input.startsWith('/'))
    throw new CodeError('VALIDATION_ERROR', 'body.attachments: a slash command takes no attachments', {
      field: 'attachments',
    });
  const model = session.config.model;
  const { refs, created } = await ctx.attachments.resolveRun(session.key, body.attachments ?? [], {
    id: model.id,
    acceptsImages: model.acceptsImages === true,
  });
  try {
    const handle = session.runs.start({
      input: body.input,
      history: body.history,
      idempotencyKey: key,
      attachments: refs,
      ...(body.multitaskStrategy !== undefined ? { multitaskStrategy: body.multitaskStrategy } : {}),
      ...(trace !== undefined ? { traceParent: trace } : {}),
      ...(webhook !== undefined ? { webhook } : {}),
    });
    // A retry of an Idempotency-Key answers the run it admitted, which has its own parts: these would be orphans.
    if (handle.existing) await ctx.attachments.forget(session.key, created);
    return handle;
  } catch (error) {
    await ctx.attachments.forget(session.key, created);
    throw error;
  }
}

/**
 * The run's own webhook (`body.webhook`), checked with the caller's scopes; without one the run gets the session's
 * default, checked when the session was created.
 */
async function runWebhookOf(
  ctx: ServerContext,
  session: AgentSession,
  body: RunRequest,
  caller: Caller,
): Promise<ResolvedRunWebhook | undefined> {
  if (body.webhook === undefined) return undefined;
  const allowPrivate = privateOutboundAllowed(caller, ctx.config);
  return ctx.webhooks.check(body.webhook, session.config.ownerTenantId, allowPrivate, 'body.webhook');
}

/** The answer to a started (or existing, for a retried Idempotency-Key) run: 202 at once, or 200 with the result when the caller waits. */
async function runAnswer(started: RunHandle | Promise<RunHandle>, wait: boolean, reply: FastifyReply) {
  const handle = await started;
  if (wait) {
    const run = await handle.done;
    reply.status(200);
    return { runId: run.runId, run, result: run.result ?? null, existing: handle.existing };
  }
  // A queued run is accepted once it is durable: a node lost right after the 202 does not lose it.
  await handle.saved;
  reply.status(202);
  const queued = handle.queuePosition !== undefined ? { queuePosition: handle.queuePosition } : {};
  return { runId: handle.record.runId, run: handle.record, existing: handle.existing, ...queued };
}

/** Run routes: start (single flight, idempotent), list, get, events page, cancel. */
export function registerRunRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/runs',
      summary: 'Start a run; wait: true answers with the AgentResult',
      description:
        'Single flight: 409 SESSION_BUSY while another run is active, unless `multitaskStrategy` says otherwise: `enqueue` answers 202 with `queuePosition` (status queued; it starts when the session frees), `interrupt` stops the active run at its next safe point and `rollback` cancels it and restores the transcript and its files to before it (run_files_rolled_back says whether they were), each then starting this run (docs/runs.md); past limits.maxQueuedRuns (default 10) 429 RUN_QUEUE_FULL. With `history`, runs a side question that leaves the transcript unchanged. An `Idempotency-Key` header returns the existing run on retry. With `webhook` (or the session default `webhook`) the run record is POSTed, signed, when the run ends and on the events it names (docs/webhooks.md); 400 WEBHOOK_SECRET_MISSING when the tenant has no webhook secret. An `input` over limits.maxInputBytes (UTF-8 bytes, default 256 KiB) answers 413 PAYLOAD_TOO_LARGE with details.field "input" before anything runs.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: RunRequestSchema,
      headers: { 'Idempotency-Key': 'Optional; up to 200 visible ASCII characters.' },
      responses: {
        200: RunFinishedResponseSchema,
        202: RunStartedResponseSchema,
        400: ErrorBodySchema,
        404: ErrorBodySchema,
        409: ErrorBodySchema,
        410: ErrorBodySchema,
        413: ErrorBodySchema,
        429: ErrorBodySchema,
      },
    },
    async ({ params, body, caller, request, reply }) => {
      if (!agent.admitting) throw new CodeError('SHUTTING_DOWN', 'the server is shutting down and admits no new runs');
      assertInputBound(body.input, ctx.config.limits.maxInputBytes);
      if (body.multitaskStrategy !== undefined && body.history !== undefined)
        throw new CodeError(
          'VALIDATION_ERROR',
          'body.multitaskStrategy: a side question (history) never queues or interrupts; send it without multitaskStrategy',
          { field: 'multitaskStrategy' },
        );
      const key = idempotencyKey(request.headers['idempotency-key']);
      const session = agent.getSession(params.id, caller);
      const strategy = body.multitaskStrategy !== undefined ? { multitaskStrategy: body.multitaskStrategy } : {};
      const trace = traceOf(request);
      const traced = trace !== undefined ? { traceParent: trace } : {};
      const webhook = await runWebhookOf(ctx, session, body, caller);
      const hooked = webhook !== undefined ? { webhook } : {};
      if (body.attachments === undefined || body.attachments.length === 0)
        return runAnswer(
          session.runs.start({
            input: body.input,
            history: body.history,
            idempotencyKey: key,
            ...strategy,
            ...traced,
            ...hooked,
          }),
          body.wait === true,
          reply,
        );
      return runAnswer(startWithAttachments(ctx, session, body, key, trace, webhook), body.wait === true, reply);
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/runs',
      summary: 'Run records',
      description:
        'In a cluster, a run that was in flight on a node that died is listed by the node that took the session over as status "failed" with error.code NODE_LOST (its input from its checkpoint or its published agent_start event), whether or not it is resumed.',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: RunListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ runs: agent.getSession(params.id, caller).runs.list() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/runs/:runId',
      summary: 'One run record',
      scope: 'sessions',
      params: RunParamsSchema,
      responses: { 200: RunResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ run: agent.getSession(params.id, caller).runs.get(params.runId) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/runs/:runId/events',
      summary: 'A page of run events (per-run sequence > after)',
      description:
        "`retentionGap` is set when events after the cursor were dropped by retention limits. The seed's page fields: `hasMore` (events after this page are retained), `latestSequenceExclusive` (one past the run's newest sequence), `firstAvailableSequence`, `nextAfterSequence` (= `nextAfter`).",
      scope: 'sessions',
      params: RunParamsSchema,
      query: RunEventsQuerySchema,
      responses: { 200: RunEventsResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, query, caller }) => {
      const session = agent.getSession(params.id, caller);
      session.runs.get(params.runId);
      const page = session.events.runPage(params.runId, query.after, query.limit) ?? {
        events: [],
        retentionGap: undefined,
        nextAfter: undefined,
        firstAvailableSequence: null,
        latestSequenceExclusive: 0,
        hasMore: false,
      };
      const nextAfter = page.nextAfter ?? null;
      return {
        events: page.events,
        retentionGap: page.retentionGap ?? null,
        nextAfter,
        firstAvailableSequence: page.firstAvailableSequence,
        latestSequenceExclusive: page.latestSequenceExclusive,
        nextAfterSequence: nextAfter,
        hasMore: page.hasMore,
      };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/runs/:runId/resume',
      summary: "Resume a run from its loop checkpoint (new run id; the old run is named in the new run's metadata)",
      description:
        'Hydrates the session from the store when it is not live on this node. 409 SESSION_STORE_REQUIRED ("resume_run requires a session_store") without a durable checkpoint store or for a sessionStore {type: "memory"} session; 404 CHECKPOINT_NOT_FOUND ("no loop checkpoint found for run \'<id>\'") when the run has no checkpoint (retry later, or treat the run as lost); 409 SESSION_BUSY while a run is active.',
      scope: 'sessions',
      params: RunParamsSchema,
      body: ResumeRequestSchema,
      headers: { 'Idempotency-Key': 'Optional; up to 200 visible ASCII characters.' },
      responses: {
        200: RunFinishedResponseSchema,
        202: RunStartedResponseSchema,
        404: ErrorBodySchema,
        409: ErrorBodySchema,
      },
    },
    async ({ params, body, caller, request, reply }) => {
      const key = idempotencyKey(request.headers['idempotency-key']);
      const { handle } = await agent.resumeRun(params.id, params.runId, caller, key, traceOf(request));
      return runAnswer(handle, body.wait === true, reply);
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/runs/:runId/cancel',
      summary: 'Cancel the run if it is the active one (or a queued one)',
      description:
        '`cancelled` is false for a run that is not active: finished, unknown or dropped by retention (seed `cancelRun`). A queued run (multitaskStrategy) is taken out of the queue: status cancelled, it never starts.',
      scope: 'sessions',
      params: RunParamsSchema,
      responses: { 200: CancelResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ cancelled: agent.getSession(params.id, caller).runs.cancel(params.runId) }),
  );
}
