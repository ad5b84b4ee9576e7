import type { FastifyInstance } from 'fastify';
import {
  CancelResponseSchema,
  ErrorBodySchema,
  SessionParamsSchema,
  ToolResultResponseSchema,
} from '../protocol/http.js';
import {
  SubagentTaskListSchema,
  SubagentTaskSnapshotSchema,
  TaskParamsPathSchema,
  TaskRequestSchema,
} from '../protocol/subagent-task.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';
import { toolResult } from './tools.js';

/** Subagent task routes: host-selected tasks (the seed's session.task() / session.tasks()) and the session's task snapshots. */
export function registerTaskRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/tasks',
      summary: "Run host-selected tasks in child sessions (the seed's session.task() / session.tasks())",
      description:
        'One task `{agent, description, prompt, maxSteps?, background?, outputSchema?}` is a host-direct `task` call; `{tasks: [...], allowPartialFailure?, timeoutMs?, minSuccessCount?}` is a host-direct `parallel_task`. ' +
        "Needs the host_direct scope: the host chooses the children (trusted-nested, as in the seed), but each child's own tool calls are governed by its agent's permissions within the session's policy. " +
        "`confirmationInheritance` (default: config delegation.confirmation_inheritance, itself inherit_parent by default) says how a child answers a call its policy asks about: inherit_parent asks on this session's confirmations route, deny_on_ask denies, auto_approve approves. " +
        'Answers the ToolResult `{name: "task" | "parallel_task", output, exitCode, metadata}`; metadata carries task_id, session_id (the child), agent, success.',
      scope: 'host_direct',
      params: SessionParamsSchema,
      body: TaskRequestSchema,
      responses: { 200: ToolResultResponseSchema, 400: ErrorBodySchema, 403: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller }) => {
      const session = agent.getSession(params.id, caller);
      return toolResult('tasks' in body ? 'parallel_task' : 'task', await session.directCalls.runTasks(body));
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/tasks',
      summary: "The session's subagent task snapshots, oldest first (running ones and the retained terminal ones)",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: SubagentTaskListSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ tasks: agent.getSession(params.id, caller).tasks.list() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/tasks/:taskId',
      summary: 'One subagent task: status, child session id, output (unknown id: 404 TASK_NOT_FOUND)',
      scope: 'sessions',
      params: TaskParamsPathSchema,
      responses: { 200: SubagentTaskSnapshotSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => agent.getSession(params.id, caller).tasks.require(params.taskId),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/tasks/:taskId/cancel',
      summary: "Cancel a queued or running subagent task (the seed's cancelSubagentTask)",
      description:
        "Aborts the task's child run; the task ends `cancelled` (subagent_end success false). `{cancelled: false}` when it had already finished; 404 TASK_NOT_FOUND for an unknown id.",
      scope: 'sessions',
      params: TaskParamsPathSchema,
      responses: { 200: CancelResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({
      cancelled: agent.getSession(params.id, caller).tasks.cancel(params.taskId, new Error('cancelled by the host')),
    }),
  );
}
