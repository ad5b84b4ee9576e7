import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import {
  McpAddServerResponseSchema,
  McpDisconnectIdleRequestSchema,
  McpDisconnectIdleResponseSchema,
  McpRemoveServerResponseSchema,
  McpServerConfigSchema,
  McpServerListResponseSchema,
  McpServerParamsSchema,
} from '../protocol/mcp.js';
import { hasScope } from '../runtime/ports/caller.js';
import { layerMcpStatus } from '../runtime/mcp/layered-mcp-tools.js';
import { assertMcpCwdsInTenantSpace, assertMcpUrlsOutbound } from '../runtime/live-sessions/session-mcp-layers.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** MCP routes: a session's own servers (add, list across layers, remove) and the admin routes for global servers. */
export function registerMcpRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/mcp',
      summary: "Add an MCP server to the session's own layer; answers its tool count",
      description:
        'stdio servers run a command on the host and need the host_direct scope; http, streamable-http and sse servers need sessions. Its tools are named mcp__<server>__<tool> and shadow inherited tools of the same name in this session only.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: McpServerConfigSchema,
      responses: {
        201: McpAddServerResponseSchema,
        400: ErrorBodySchema,
        403: ErrorBodySchema,
        404: ErrorBodySchema,
        503: ErrorBodySchema,
      },
    },
    async ({ params, body, caller, reply }) => {
      if (body.transport.type === 'stdio' && !hasScope(caller, 'host_direct')) {
        throw new CodeError(
          'FORBIDDEN',
          'stdio MCP servers run a command on the host and need the "host_direct" scope',
          { scope: 'host_direct' },
        );
      }
      const session = agent.getSession(params.id, caller);
      await assertMcpCwdsInTenantSpace(session, [body], caller, ctx, () => 'transport.cwd');
      await assertMcpUrlsOutbound(session, [body], caller, ctx.config, () => 'transport.url');
      const { toolCount } = await session.mcp.add(body);
      // An autoSave session stores the server at once, so a restore on any node, even after this one dies, registers it again.
      await session.persistence.saveIfAutoSave();
      reply.status(201);
      return { name: body.name, toolCount };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/mcp',
      summary: 'MCP servers of every layer the session sees (global, inherited, its own), with their source',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: McpServerListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ servers: layerMcpStatus(agent.getSession(params.id, caller).mcp.layers()) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id/mcp/:name',
      summary:
        "Remove one of the session's own MCP servers (its process group is killed); inherited and global servers cannot be removed here",
      scope: 'sessions',
      params: McpServerParamsSchema,
      responses: { 200: McpRemoveServerResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => {
      const session = agent.getSession(params.id, caller);
      if (!(await session.mcp.remove(params.name)))
        throw new CodeError('NOT_FOUND', `MCP server ${params.name} is not one of this session's own servers`, {
          name: params.name,
        });
      await session.persistence.saveIfAutoSave();
      return { removed: true };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/admin/mcp/disconnect-idle',
      summary: 'Disconnect MCP servers idle longer than thresholdMs (configuration kept; the next call reconnects)',
      scope: 'admin',
      body: McpDisconnectIdleRequestSchema,
      responses: { 200: McpDisconnectIdleResponseSchema, 400: ErrorBodySchema },
    },
    async ({ body }) => ({ disconnected: await agent.disconnectIdleMcp(body.thresholdMs) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/admin/mcp/refresh',
      summary: 'Re-list the tools of every global MCP server',
      scope: 'admin',
      responses: { 200: McpServerListResponseSchema },
    },
    async () => {
      await agent.refreshMcpTools();
      return { servers: agent.mcp.status() };
    },
  );
}
