import type { FastifyInstance } from 'fastify';
import { ForkRequestSchema } from '../protocol/fork.js';
import {
  ErrorBodySchema,
  SessionParamsSchema,
  SessionResponseSchema,
  SessionTenantQuerySchema,
} from '../protocol/http.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';
import { sessionInfo } from '../server/session-info.js';

/** POST /v1/sessions/:id/fork: a new session with the transcript up to a run or message (docs/fork.md). */
export function registerSessionForkRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/fork',
      summary: 'Fork a session: a new session with its transcript up to a run or a message',
      description:
        "`atRunId`: the transcript as that run found it (404 RUN_NOT_FOUND; 409 FORK_POINT_UNAVAILABLE when it was compacted, cleared or rewritten since, or the run never started); `atMessage`: the history's messages [0, atMessage) (400 when out of range or cutting a tool call from its results); neither: the whole committed transcript (a busy session's active run is not part of it). Both: 400 naming both. " +
        "The fork is the caller's tenant's, on the parent's workspace (`workspace: \"shared\"`, pinned again) or on a copy of its files at the fork point (`\"copy\"`: a new directory `<parent workspace name>-fork-<id>` in the caller's tenant root, written from the parent's shadow store in the sandbox; 409 FORK_TREE_UNAVAILABLE when no tree was captured for that point or this node does not hold it, 409 WORKSPACE_CHANGED when the tenant root was swapped meanwhile), with the parent's options re-checked as a creation with the caller's scopes (403 FORBIDDEN, details.options naming each refused one). " +
        "Grants (\"allow always\"), hooks, the budget host, MCP servers the parent added, host tools and pending confirmations or questions are not copied. `sessionId` (generated when absent) is 409 SESSION_EXISTS when the tenant has it. An admin forks another tenant's session with `tenantId`; the fork lives in the admin's tenant, and its workspace must be inside that tenant's space (403 naming workspace).",
      scope: 'sessions',
      params: SessionParamsSchema,
      query: SessionTenantQuerySchema,
      body: ForkRequestSchema,
      responses: {
        201: SessionResponseSchema,
        400: ErrorBodySchema,
        403: ErrorBodySchema,
        404: ErrorBodySchema,
        409: ErrorBodySchema,
        410: ErrorBodySchema,
        413: ErrorBodySchema,
        429: ErrorBodySchema,
        503: ErrorBodySchema,
      },
    },
    async ({ params, body, caller, request, reply }) => {
      const parent = agent.getSession(params.id, caller);
      // `caller` addresses the parent's tenant (an admin's `tenantId`); the fork is the token's own tenant's.
      const forker = ctx.authenticator.fromHeader(request.headers.authorization);
      const session = await agent.forkSession(parent, body, forker);
      reply.status(201);
      return { session: sessionInfo(session) };
    },
  );
}
