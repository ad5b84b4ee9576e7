import type { FastifyInstance } from 'fastify';
import {
  ConfirmationAnsweredResponseSchema,
  ConfirmationAnswerSchema,
  ConfirmationListResponseSchema,
  ConfirmationParamsSchema,
  ConfirmationsCancelledResponseSchema,
  type PendingConfirmationView,
} from '../protocol/governance.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import type { PendingConfirmation } from '../runtime/policy/confirmation-broker.js';
import { hasScope } from '../runtime/ports/caller.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** The wire form of a pending confirmation. */
export function pendingView(p: PendingConfirmation): PendingConfirmationView {
  return { ...p, runId: p.runId ?? null };
}

/** Human-in-the-loop routes: list pending confirmations, answer one, cancel them all. */
export function registerConfirmationRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/confirmations',
      summary: 'Pending human confirmations with their remaining time',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: ConfirmationListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({
      confirmations: agent.getSession(params.id, caller).governance.pendingConfirmations().map(pendingView),
    }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id/confirmations',
      summary: "Cancel every pending confirmation (the seed's cancelConfirmations): each call is rejected",
      description:
        'Each pending call is settled as rejected (confirmation_received {approved: false}); its tool call fails and the run goes on. Answers the number cancelled (0 when none).',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: ConfirmationsCancelledResponseSchema, 404: ErrorBodySchema, 410: ErrorBodySchema },
    },
    async ({ params, caller }) => ({
      cancelled: agent.getSession(params.id, caller).governance.cancelConfirmations(),
    }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/confirmations/:toolId',
      summary: 'Answer a pending confirmation {approved, reason?, argsDigest?, always?}',
      description:
        'An answer settles the pending call once: 404 CONFIRMATION_NOT_FOUND for an unknown id, 409 CONFIRMATION_SETTLED when already answered, timed out or cancelled, 409 CONFIRMATION_MISMATCH when argsDigest names other arguments. always: true with approved: true is "allow always" (a session-scoped grant for the same tool and permission subject; without host_direct it acts as allow once where the operator\'s policy asks); the answer says whether it granted.',
      scope: 'sessions',
      params: ConfirmationParamsSchema,
      body: ConfirmationAnswerSchema,
      responses: { 200: ConfirmationAnsweredResponseSchema, 404: ErrorBodySchema, 409: ErrorBodySchema },
    },
    async ({ params, body, caller }) => {
      const { alwaysGranted, ...settled } = agent
        .getSession(params.id, caller)
        .governance.answerConfirmation(params.toolId, { ...body, mayPassFloor: hasScope(caller, 'host_direct') });
      return {
        confirmation: pendingView(settled),
        approved: body.approved,
        ...(body.always !== undefined ? { always: alwaysGranted } : {}),
      };
    },
  );
}
