import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import { ArtifactParamsSchema, ArtifactResponseSchema, ErrorBodySchema, SessionParamsSchema, ToolCallBodySchema, ToolListResponseSchema, ToolParamsSchema, ToolResultResponseSchema } from '../protocol/http.js';
import { toolSpec } from '../runtime/tools/tool-registry.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** Tool routes: list, host-direct call (host_direct scope), artifacts. */
export function registerToolRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/sessions/:id/tools', summary: 'Tool names and JSON-schema definitions', scope: 'sessions', params: SessionParamsSchema, responses: { 200: ToolListResponseSchema, 404: ErrorBodySchema } },
    async ({ params, caller }) => ({
      tools: agent
        .getSession(params.id, caller)
        .registry.list()
        .map((tool) => ({ ...toolSpec(tool), readOnly: tool.readOnly })),
    }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/tools/:name',
      summary: 'Host-direct tool call (TrustedControlPlane)',
      description: 'Runs code on the host: needs the host_direct scope. Does not take the run lease.',
      scope: 'host_direct',
      params: ToolParamsSchema,
      body: ToolCallBodySchema,
      responses: { 200: ToolResultResponseSchema, 400: ErrorBodySchema, 403: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller }) => {
      const outcome = await agent.getSession(params.id, caller).invokeToolDirect(params.name, body.args);
      return { output: outcome.output, exitCode: outcome.exitCode, truncated: outcome.truncated, artifactId: outcome.artifactId ?? null, durationMs: outcome.durationMs };
    },
  );
  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/sessions/:id/artifacts/:artifactId', summary: 'Full output of a truncated tool result', scope: 'sessions', params: ArtifactParamsSchema, responses: { 200: ArtifactResponseSchema, 404: ErrorBodySchema } },
    async ({ params, caller }) => {
      const artifact = agent.getSession(params.id, caller).getArtifact(params.artifactId);
      if (!artifact) throw new CodeError('NOT_FOUND', `artifact ${params.artifactId} not found`, { artifactId: params.artifactId });
      return { artifact };
    },
  );
}
