import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ErrorBodySchema, RunParamsSchema } from '../protocol/http.js';
import {
  InterruptBodySchema,
  RunControlReceiptSchema,
  RunControlSnapshotSchema,
  SteerBodySchema,
} from '../protocol/run-control.js';
import { assertInputBound } from '../server/input-bound.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

const ReceiptResponseSchema = z.object({ receipt: RunControlReceiptSchema }).meta({ id: 'RunControlReceiptResponse' });

/** Run control (the seed's steer, interrupt and runControlSnapshot) of a session's active run. */
export function registerRunControlRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  const refusals = { 400: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema };
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/runs/:runId/steer',
      summary: 'Steer the active run: the input joins the transcript as a user message at its next safe point',
      description:
        "The next safe point is before the run's next provider call (after the tool round in flight). Idempotent by requestId (the same id answers the same receipt). The receipt is accepted, or rejected when expectedTurnId or expectedTurnRevision no longer hold; it becomes applied at the safe point (run_control_applied), rejected when deadlineMs passed first, settled when the run ended first. Never parsed as a slash command; bounded by limits.maxInputBytes (413). 409 RUN_NOT_ACTIVE for a run that is not running, 404 RUN_NOT_FOUND for an unknown one.",
      scope: 'sessions',
      params: RunParamsSchema,
      body: SteerBodySchema,
      responses: { 202: ReceiptResponseSchema, ...refusals, 413: ErrorBodySchema },
    },
    async ({ params, body, caller, reply }) => {
      assertInputBound(body.input, ctx.config.limits.maxInputBytes);
      const receipt = agent.getSession(params.id, caller).runs.steer(params.runId, body);
      reply.status(202);
      return { receipt };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/runs/:runId/interrupt',
      summary: 'Interrupt the active run at its next safe point, or now with force',
      description:
        'Without force the run stops before its next provider call, keeping what it did (status cancelled, error CANCELLED with the reason; run_control_applied). With force it stops now, like a cancel, and the receipt is applied at once. 409 RUN_NOT_ACTIVE for a run that is not running.',
      scope: 'sessions',
      params: RunParamsSchema,
      body: InterruptBodySchema,
      responses: { 202: ReceiptResponseSchema, ...refusals },
    },
    async ({ params, body, caller, reply }) => {
      const receipt = agent.getSession(params.id, caller).runs.interrupt(params.runId, body);
      reply.status(202);
      return { receipt };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/runs/:runId/control',
      summary:
        "The run's control snapshot (the seed's runControlSnapshot): next turn id and revision, waiting requests",
      scope: 'sessions',
      params: RunParamsSchema,
      responses: { 200: RunControlSnapshotSchema, 404: ErrorBodySchema, 409: ErrorBodySchema },
    },
    async ({ params, caller }) => agent.getSession(params.id, caller).runs.controlSnapshot(params.runId),
  );
}
