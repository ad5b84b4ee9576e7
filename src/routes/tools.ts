import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import {
  ArtifactParamsSchema,
  ArtifactResponseSchema,
  ErrorBodySchema,
  SessionParamsSchema,
  ToolCallBodySchema,
  ToolListResponseSchema,
  ToolParamsSchema,
  ToolResultResponseSchema,
} from '../protocol/http.js';
import { ProgramBodySchema, programBodyToArgs } from '../protocol/program-args.js';
import type { ToolCallOutcome } from '../runtime/invocation/tool-invoker.js';
import { toolListEntry } from '../runtime/tools/tool-registry.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** The seed SDK's ToolResult of a call (`name` is the tool called), with our extras. */
export function toolResult(name: string, outcome: ToolCallOutcome) {
  return {
    name,
    output: outcome.output,
    exitCode: outcome.exitCode,
    metadata: outcome.metadata ?? {},
    ...(outcome.errorKind ? { errorKind: outcome.errorKind } : {}),
    truncated: outcome.truncated,
    artifactId: outcome.artifactId ?? null,
    durationMs: outcome.durationMs,
  };
}

/** Tool routes: list, host-direct call (host_direct scope), artifacts. */
export function registerToolRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/tools',
      summary: 'Tool names and JSON-schema definitions',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: ToolListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({
      tools: agent.getSession(params.id, caller).tools.registry.list().map(toolListEntry),
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
    async ({ params, body, caller }) =>
      toolResult(
        params.name,
        await agent.getSession(params.id, caller).directCalls.invoke(params.name, body.args, 'host_direct'),
      ),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/program',
      summary: "Run a bounded QuickJS program host-direct (the seed's session.program)",
      description:
        'Runs code on the host: needs the host_direct scope. The body is the seed SDK\'s {source | path, inputs, allowedTools, limits} (allowed_tools, type: "script" and language: "javascript" are accepted too). The program\'s own tool calls are trusted nested calls (hooks, budget, timeouts and redaction still apply). Result JSON in metadata.script_result, calls in metadata.program.tool_calls; a failing script is a tool result with exitCode 1.',
      scope: 'host_direct',
      params: SessionParamsSchema,
      body: ProgramBodySchema,
      responses: { 200: ToolResultResponseSchema, 400: ErrorBodySchema, 403: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller }) =>
      toolResult(
        'program',
        await agent.getSession(params.id, caller).directCalls.invoke('program', programBodyToArgs(body), 'host_direct'),
      ),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/tools/:name/governed',
      summary: 'Governed direct tool call: full permission policy, hooks, budget and confirmation, no LLM',
      description:
        'A call the policy asks about waits for a human confirmation (or is denied when confirmation is disabled); denials are results with exitCode 1.',
      scope: 'sessions',
      params: ToolParamsSchema,
      body: ToolCallBodySchema,
      responses: { 200: ToolResultResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller }) =>
      toolResult(
        params.name,
        await agent.getSession(params.id, caller).directCalls.invoke(params.name, body.args, 'governed_direct'),
      ),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/artifacts/:artifactId',
      summary: 'Full output of a truncated tool result',
      scope: 'sessions',
      params: ArtifactParamsSchema,
      responses: { 200: ArtifactResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => {
      const session = agent.getSession(params.id, caller);
      const artifact = session.artifacts.get(params.artifactId);
      if (!artifact) {
        const limit = session.artifacts.evictedBy(params.artifactId);
        if (limit)
          throw new CodeError(
            'NOT_FOUND',
            `artifact ${params.artifactId} was evicted: the session keeps only its newest artifacts (${limit})`,
            { artifactId: params.artifactId, evicted: true, limit },
          );
        throw new CodeError('NOT_FOUND', `artifact ${params.artifactId} not found`, { artifactId: params.artifactId });
      }
      return { artifact };
    },
  );
}
