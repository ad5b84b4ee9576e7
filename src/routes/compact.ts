import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import { CompactResponseSchema, type CompactResponse } from '../protocol/compaction.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import { summaryOf } from '../runtime/compaction/compact-transcript.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** POST /v1/sessions/:id/compact: run `/compact` under the run lease and answer what it did to the transcript. */
export function registerCompactRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/compact',
      summary:
        'Compact the conversation now (the seed /compact): older messages become a model-written summary, the recent ones stay',
      description:
        'Runs the `/compact` command as a run of the session (single flight: 409 SESSION_BUSY while another run is active) and waits for it. ' +
        'Fewer than two messages: `compacted: false`, "Nothing to compact yet." A blocking pre_compact hook, an empty summary or a failed summary call leave the transcript as it was, with `error` saying why. ' +
        "The summary call goes through the session budget and hooks like any provider call; the run's events hold context_compacted.",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: {
        200: CompactResponseSchema,
        404: ErrorBodySchema,
        409: ErrorBodySchema,
        410: ErrorBodySchema,
        503: ErrorBodySchema,
      },
    },
    async ({ params, caller }): Promise<CompactResponse> => {
      if (!agent.admitting) throw new CodeError('SHUTTING_DOWN', 'the server is shutting down and admits no new runs');
      const session = agent.getSession(params.id, caller);
      const before = session.transcript.history();
      const run = await session.runs.start({ input: '/compact' }).done;
      const after = session.transcript.history();
      // The transcript holds the same message objects unless the command replaced it.
      const compacted =
        run.status === 'completed' && (before.length !== after.length || before.some((m, i) => m !== after[i]));
      const summary = compacted ? summaryOf(after[0]) : undefined;
      return {
        beforeMessages: before.length,
        afterMessages: after.length,
        compacted,
        runId: run.runId,
        text: run.result?.text ?? '',
        ...(summary !== undefined ? { summary } : {}),
        error: run.error ?? null,
      };
    },
  );
}
