import type { FastifyInstance } from 'fastify';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import { WebhookDeliveriesResponseSchema } from '../protocol/webhooks.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** GET /v1/sessions/:id/webhooks/deliveries: the session's run webhook delivery log (docs/webhooks.md). */
export function registerWebhookRoutes(app: FastifyInstance, ctx: ServerContext): void {
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/webhooks/deliveries',
      summary: "The session's webhook deliveries (status, attempts, last error), newest first",
      description:
        "Every delivery of the session's run webhooks: `deliveryId` (the `A3S-Delivery-Id` header, the same on every attempt and node), `event`, `status` (`pending` until a 2xx or the last attempt, then `delivered` or `failed`), `attempts`, `nextAttemptAtMs`, the last answer's HTTP status and the last error. Removed with the session when it is purged.",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: WebhookDeliveriesResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => {
      const session = ctx.agent.getSession(params.id, caller);
      return { deliveries: await ctx.webhooks.list(session.key) };
    },
  );
}
