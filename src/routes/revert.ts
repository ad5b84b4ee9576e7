import type { FastifyInstance } from 'fastify';
import { ErrorBodySchema, RunParamsSchema, SessionParamsSchema } from '../protocol/http.js';
import { RevertRequestSchema, RevertResponseSchema } from '../protocol/revert.js';
import { revertRun, unrevertRuns } from '../runtime/changes/session-revert.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

const ERRORS = {
  400: ErrorBodySchema,
  404: ErrorBodySchema,
  409: ErrorBodySchema,
  410: ErrorBodySchema,
  422: ErrorBodySchema,
};

/** POST .../runs/:runId/revert and POST .../unrevert: undo and redo a run's files and messages (docs/changes.md). */
export function registerRevertRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/runs/:runId/revert',
      summary: "Revert a run: its files and every later run's back to before it, its messages hidden from the model",
      description:
        "Under the run lease (409 SESSION_BUSY while a run is active or queued). Each path the run or a later captured run changed is checked out from the run's base tree (or removed when that tree has none), in the sandbox; the transcript from the run's start on is no longer sent to the model (its events stay). " +
        '409 REVERT_CONFLICT (`details.paths`) when such a path was changed since the last capture, unless `force: true`; 409 REVERT_UNAVAILABLE when the run was compacted into a summary since or is already reverted; 422 NO_CHANGE_SET (`details.reason`) when the run or a later one has no change set for a reason other than making no call that could change files. ' +
        'The next run drops the reverted messages for good (an unrevert is then 409 NOTHING_REVERTED).',
      scope: 'sessions',
      params: RunParamsSchema,
      body: RevertRequestSchema,
      responses: { 200: RevertResponseSchema, ...ERRORS },
    },
    async ({ params, body, caller }) => {
      const session = agent.getSession(params.id, caller);
      return session.runs.exclusive('revert', () =>
        revertRun(session, agent.deps.changes, params.runId, body?.force === true),
      );
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/unrevert',
      summary: "Undo the revert: the reverted runs' files and messages back",
      description:
        "Under the run lease. The reverted paths are checked out from the last reverted run's result tree (removed when it has none) and the hidden messages are sent to the model again. 409 NOTHING_REVERTED when nothing is reverted (or a run started since the revert); 409 REVERT_CONFLICT (`details.paths`) when a path was changed since the revert, unless `force: true`.",
      scope: 'sessions',
      params: SessionParamsSchema,
      body: RevertRequestSchema,
      responses: { 200: RevertResponseSchema, ...ERRORS },
    },
    async ({ params, body, caller }) => {
      const session = agent.getSession(params.id, caller);
      return session.runs.exclusive('revert', () => unrevertRuns(session, agent.deps.changes, body?.force === true));
    },
  );
}
