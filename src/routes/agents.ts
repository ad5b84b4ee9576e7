import type { FastifyInstance } from 'fastify';
import {
  AgentDirRegisteredResponseSchema,
  AgentDirRequestSchema,
  AgentListResponseSchema,
} from '../protocol/agents.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import { RegisterWorkerAgentsRequestSchema, RegisterWorkerAgentsResponseSchema } from '../protocol/worker-agents.js';
import { hasScope } from '../runtime/ports/caller.js';
import {
  compileWorkerAgents,
  mayAutoApprove,
  workerAgentDefinition,
} from '../runtime/agent-definitions/worker-agent.js';
import { agentInfo } from '../runtime/agent-definitions/agent-registry.js';
import { loadAgentDir } from '../runtime/agent-definitions/load-agent-dir.js';
import { resolveWorkspaceAgentDir } from '../runtime/agent-definitions/resolve-workspace-agent-dir.js';
import { withHeldDirectory } from '../runtime/workspace/held-directory.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/**
 * Agent routes: list a session's agents, register a directory of definitions inside its workspace
 * (registerAgentDir), and register worker agents (registerWorkerAgent, registerWorkerAgents).
 */
export function registerAgentRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/agents',
      summary: "The session's agents: built-ins, then the operator's agent_dirs, then the session's own",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: AgentListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ agents: agent.getSession(params.id, caller).config.agents.list().map(agentInfo) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/agents/dirs',
      summary:
        'Register a directory of agent definitions (registerAgentDir); the path must be inside the session workspace',
      description:
        'Reads *.md (YAML front matter: name, description, max_steps, permissions {allow, deny}, model, prompt; the body is the prompt) and *.yaml/*.yml files, not recursively. ' +
        'A bad file is a 400 naming the file and the field, and registers nothing; built-in names cannot be redefined; a later definition of a custom name replaces the earlier one. ' +
        'Registered agents live as long as the session is live (the task tool and GET .../agents see them); they are not part of its snapshot.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: AgentDirRequestSchema,
      responses: { 200: AgentDirRegisteredResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller }) => {
      const session = agent.getSession(params.id, caller);
      // Opened from the session's pinned workspace and read from the held directory (links confined to it).
      const held = resolveWorkspaceAgentDir(session.config.workspaceDir, body.path, 'path', 'VALIDATION_ERROR');
      const definitions = await withHeldDirectory(held, (root) =>
        loadAgentDir({ root, label: body.path, source: 'session', errorCode: 'VALIDATION_ERROR' }),
      );
      session.config.agents.add(definitions);
      return { registered: definitions.length, agents: session.config.agents.list().map(agentInfo) };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/agents/workers',
      summary: 'Register worker agents (registerWorkerAgent: one spec, registerWorkerAgents: several)',
      description:
        "Each WorkerAgentSpec {name, description, kind, hidden?, permissions?, model?, prompt?, maxSteps?, confirmationInheritance?} is compiled into an agent the task tool delegates to by name: the kind's bound, prompt and steps (read_only, planner and reviewer are read-only; verifier may run bash but not write files; implementer may not delegate; custom asks for every call until its permissions say otherwise). " +
        "A spec's permissions narrow its kind's bound (a custom worker's replace its default), and every call stays under the session's policy and the operator's floor: a worker never gets more than its session. " +
        'A bad spec is a 400 naming `body.workers.<i>.<field>` and registers nothing; built-in names cannot be redefined; a worker replaces an earlier custom agent of its name; confirmationInheritance "auto_approve" needs host_direct (403). ' +
        'Registered workers live as long as the session is live; they are not part of its snapshot (workerAgents given at creation are).',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: RegisterWorkerAgentsRequestSchema,
      responses: {
        200: RegisterWorkerAgentsResponseSchema,
        400: ErrorBodySchema,
        403: ErrorBodySchema,
        404: ErrorBodySchema,
      },
    },
    async ({ params, body, caller }) => {
      const session = agent.getSession(params.id, caller);
      const definitions = compileWorkerAgents(body.workers, {
        mayAutoApprove: mayAutoApprove(hasScope(caller, 'host_direct'), ctx.config.delegation.confirmationInheritance),
        field: 'body.workers',
        errorCode: 'VALIDATION_ERROR',
      });
      session.config.agents.add(definitions);
      return {
        registered: definitions.map((definition, index) => workerAgentDefinition(definition, body.workers[index])),
        agents: session.config.agents.list().map(agentInfo),
      };
    },
  );
}
