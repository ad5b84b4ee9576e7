import type { FastifyInstance } from 'fastify';
import {
  CancelResponseSchema,
  CloseQuerySchema,
  CloseResponseSchema,
  ErrorBodySchema,
  HistoryResponseSchema,
  SaveResponseSchema,
  SessionListQuerySchema,
  SessionListResponseSchema,
  SessionParamsSchema,
  SessionResponseSchema,
  TraceQuerySchema,
  TraceResponseSchema,
} from '../protocol/http.js';
import { SessionOptionsSchema } from '../protocol/session-options.js';
import { addressedCaller } from '../runtime/live-sessions/session-address.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';
import { sessionInfo } from '../server/session-info.js';

/** Session routes: create/resume, list, get, close, cancel, history, trace, save. */
export function registerSessionRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions',
      summary: 'Create a session (or resume one with resume: true)',
      description:
        'Takes every seed SessionOptions name. An unknown name is 400 VALIDATION_ERROR naming it; options whose capability is not built yet are 400 UNSUPPORTED_OPTION when their value asks for something (details.options lists them all), and accepted when it asks for nothing (false, "disabled", []). securityProvider {type: "none"} needs the host_direct scope (403). tenantId and principal of a caller without the admin scope must be the token\'s own (403 FORBIDDEN, details.field "tenantId" or "principal"). Options over limits.maxSessionOptionsBytes (compact JSON, default 256 KiB) are 413 PAYLOAD_TOO_LARGE naming the limit; a tenant over a quota is 429 QUOTA_EXCEEDED.',
      scope: 'sessions',
      body: SessionOptionsSchema,
      responses: {
        201: SessionResponseSchema,
        400: ErrorBodySchema,
        403: ErrorBodySchema,
        404: ErrorBodySchema,
        409: ErrorBodySchema,
        413: ErrorBodySchema,
        429: ErrorBodySchema,
        503: ErrorBodySchema,
      },
    },
    async ({ body, caller, reply }) => {
      const { session, resumed } = await agent.createSession(body, caller);
      // 201 either way (API.md); `resumed` tells a resumed session from a new one.
      reply.status(201);
      return { session: sessionInfo(session), resumed };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions',
      summary: "List the caller's live sessions",
      description:
        "A token lists its own tenant's sessions. An admin lists every tenant's (labels.tenantId tells them apart), or one tenant's with `tenantId`; a non-admin naming another tenant is 403. `forkedFrom=<id>` lists only the forks of that session (SessionInfo.forkedFrom.sessionId).",
      scope: 'sessions',
      query: SessionListQuerySchema,
      responses: { 200: SessionListResponseSchema, 400: ErrorBodySchema, 403: ErrorBodySchema },
    },
    async ({ caller, query }) => ({
      sessions: agent
        .listSessions(addressedCaller(caller, query.tenantId), query.tenantId)
        .filter((s) => query.forkedFrom === undefined || s.config.forkedFrom?.sessionId === query.forkedFrom)
        .map(sessionInfo),
    }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id',
      summary: 'Session info',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: SessionResponseSchema, 404: ErrorBodySchema, 410: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ session: sessionInfo(agent.getSession(params.id, caller)) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id',
      summary:
        'Close a session: cancel in-flight work, release resources (idempotent); `purge=true` also deletes it from the store',
      description:
        '`closed` is true when this request closed an open session, false when it was already closed. A closed session stays stored (a `resume: true` reopens it) ' +
        "unless `purge=true`: then its snapshot (transcript, artifacts, reports) and its runs' checkpoints are deleted at once and `purged` says whether anything was stored. " +
        'Owner or admin (`tenantId`) only; config `retention.closed_session_days` deletes closed sessions after that many days.',
      scope: 'sessions',
      params: SessionParamsSchema,
      query: CloseQuerySchema,
      responses: { 200: CloseResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, query, caller }) =>
      query.purge
        ? await agent.purgeSession(params.id, caller)
        : { closed: await agent.closeSession(params.id, caller) },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/cancel',
      summary: "Cancel the session's active run (false when nothing runs)",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: CancelResponseSchema, 404: ErrorBodySchema, 410: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ cancelled: agent.getSession(params.id, caller).runs.cancel() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/history',
      summary: 'Transcript messages',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: HistoryResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ messages: agent.getSession(params.id, caller).transcript.history() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/trace',
      summary: "The session's trace events (seed traceEvents())",
      description:
        "The session's event log as the snapshot's trace_events holds it: the newest retentionLimits.maxTraceEvents retained events, in session order. `after` is a session_sequence (0: from the start), `limit` 1-1000 (default 100); page on with the last event's session_sequence.",
      scope: 'sessions',
      params: SessionParamsSchema,
      query: TraceQuerySchema,
      responses: { 200: TraceResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, query, caller }) => {
      const session = agent.getSession(params.id, caller);
      return { events: session.events.trace(query.after, query.limit, session.config.retention.maxTraceEvents) };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/save',
      summary: 'Save one atomic snapshot generation',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: SaveResponseSchema, 404: ErrorBodySchema, 500: ErrorBodySchema },
    },
    async ({ params, caller }) => {
      const session = agent.getSession(params.id, caller);
      session.lifecycle.assertOpen();
      return { generation: await session.persistence.save() };
    },
  );
}
