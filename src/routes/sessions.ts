import type { FastifyInstance } from 'fastify';
import {
  CloseResponseSchema,
  ErrorBodySchema,
  HistoryResponseSchema,
  SaveResponseSchema,
  SessionListResponseSchema,
  SessionParamsSchema,
  SessionResponseSchema,
} from '../protocol/http.js';
import { SessionOptionsSchema } from '../protocol/session-options.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';
import { sessionInfo } from './session-info.js';

/** Session routes: create/resume, list, get, close, history, save. */
export function registerSessionRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    { method: 'POST', url: '/v1/sessions', summary: 'Create a session (or resume one with resume: true)', scope: 'sessions', body: SessionOptionsSchema, responses: { 201: SessionResponseSchema, 400: ErrorBodySchema, 409: ErrorBodySchema, 503: ErrorBodySchema } },
    async ({ body, caller, reply }) => {
      const { session, resumed } = await agent.createSession(body, caller);
      // 201 either way (API.md); `resumed` tells a resumed session from a new one.
      reply.status(201);
      return { session: sessionInfo(session), resumed };
    },
  );
  addRoute(app, ctx, { method: 'GET', url: '/v1/sessions', summary: "List the caller's live sessions", scope: 'sessions', responses: { 200: SessionListResponseSchema } }, async ({ caller }) => ({
    sessions: agent.listSessions(caller).map(sessionInfo),
  }));
  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/sessions/:id', summary: 'Session info', scope: 'sessions', params: SessionParamsSchema, responses: { 200: SessionResponseSchema, 404: ErrorBodySchema, 410: ErrorBodySchema } },
    async ({ params, caller }) => ({ session: sessionInfo(agent.getSession(params.id, caller)) }),
  );
  addRoute(
    app,
    ctx,
    { method: 'DELETE', url: '/v1/sessions/:id', summary: 'Close a session: cancel in-flight work, release resources (idempotent)', scope: 'sessions', params: SessionParamsSchema, responses: { 200: CloseResponseSchema, 404: ErrorBodySchema } },
    async ({ params, caller }) => {
      await agent.closeSession(params.id, caller);
      return { closed: true as const };
    },
  );
  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/sessions/:id/history', summary: 'Transcript messages', scope: 'sessions', params: SessionParamsSchema, responses: { 200: HistoryResponseSchema, 404: ErrorBodySchema } },
    async ({ params, caller }) => ({ messages: agent.getSession(params.id, caller).history() }),
  );
  addRoute(
    app,
    ctx,
    { method: 'POST', url: '/v1/sessions/:id/save', summary: 'Save one atomic snapshot generation', scope: 'sessions', params: SessionParamsSchema, responses: { 200: SaveResponseSchema, 404: ErrorBodySchema, 500: ErrorBodySchema } },
    async ({ params, caller }) => {
      const session = agent.getSession(params.id, caller);
      session.assertOpen();
      return { generation: await session.save() };
    },
  );
}
