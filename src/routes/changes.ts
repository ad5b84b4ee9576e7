import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import {
  ChangeSetSchema,
  ChangesRangeQuerySchema,
  ChangesRangeSchema,
  type ChangeSet,
} from '../protocol/change-set.js';
import { ErrorBodySchema, RunParamsSchema, SessionParamsSchema } from '../protocol/http.js';
import type { AgentSession } from '../runtime/session-kernel/agent-session.js';
import { isTerminal } from '../runtime/session-kernel/session-runs.js';
import { CaptureError } from '../runtime/changes/capture-error.js';
import { sessionKey } from '../stores/session-key.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';
import type { Caller } from '../runtime/ports/caller.js';

const ERRORS = { 404: ErrorBodySchema, 422: ErrorBodySchema, 425: ErrorBodySchema };

/**
 * The run's change set: 425 CHANGES_CAPTURING while the run is running (its capture ends before its agent_end),
 * 422 NO_CHANGE_SET naming why there is none, RUN_NOT_FOUND when the session has no such run.
 */
async function runChangeSet(
  ctx: ServerContext,
  session: AgentSession,
  caller: Caller,
  runId: string,
): Promise<ChangeSet> {
  const record = session.runs.list().find((run) => run.runId === runId);
  if (record && !isTerminal(record.status))
    throw new CodeError('CHANGES_CAPTURING', `run ${runId} is still running; its change set is captured at its end`, {
      runId,
      status: record.status,
    });
  const capture = ctx.agent.deps.changes;
  const found = capture ? await capture.get(sessionKey(caller.tenantId, session.id), runId) : undefined;
  if (found) return found;
  if (!record) throw new CodeError('RUN_NOT_FOUND', `run ${runId} not found`, { runId });
  const why = session.changes?.whyNone(runId);
  throw new CodeError(
    'NO_CHANGE_SET',
    `run ${runId} has no change set: ${why?.message ?? (session.changes ? 'it was not captured on this node' : 'change capture is off for this session')}`,
    { runId, reason: why?.reason ?? 'unknown' },
  );
}

/** GET .../runs/:runId/changes and GET .../changes?from&to (docs/changes.md). */
export function registerChangeRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/runs/:runId/changes',
      summary: "The run's change set (git unified diff, base64)",
      description:
        'The seed\'s change set (`format: "git_unified_diff_v1"`, base and result trees, patch digest and bytes) plus the changed files and what was not captured. 425 `CHANGES_CAPTURING` while the run runs; 422 `NO_CHANGE_SET` (with `details.reason`) when it has none: a run that made no call that could change files has none.',
      scope: 'sessions',
      params: RunParamsSchema,
      responses: { 200: ChangeSetSchema, ...ERRORS },
    },
    async ({ params, caller }) => runChangeSet(ctx, agent.getSession(params.id, caller), caller, params.runId),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/changes',
      summary: "One diff from a run's base to a later run's result",
      description:
        "Computed in the session's shadow store: 422 `NO_CHANGE_SET` with `reason: tree_missing` when it does not hold both trees (the runs were captured on another node before a takeover and `changes_dir` is not shared).",
      scope: 'sessions',
      params: SessionParamsSchema,
      query: ChangesRangeQuerySchema,
      responses: { 200: ChangesRangeSchema, ...ERRORS },
    },
    async ({ params, query, caller }) => {
      const session = agent.getSession(params.id, caller);
      const from = await runChangeSet(ctx, session, caller, query.from);
      const to = from.run_id === query.to ? from : await runChangeSet(ctx, session, caller, query.to);
      const capture = agent.deps.changes;
      if (!capture || !session.changes)
        throw new CodeError('NO_CHANGE_SET', 'change capture is off for this session', { reason: 'unknown' });
      try {
        return await capture.range(session.changes.target, sessionKey(caller.tenantId, session.id), from, to);
      } catch (error) {
        if (error instanceof CaptureError)
          throw new CodeError(
            'NO_CHANGE_SET',
            error.reason === 'tree_missing'
              ? "this node's shadow store does not hold both runs' trees (they were captured on another node)"
              : `the range could not be computed: ${error.message}`,
            { reason: error.reason === 'tree_missing' ? 'tree_missing' : 'capture_failed' },
          );
        throw error;
      }
    },
  );
}
