import type { FastifyInstance } from 'fastify';
import { ClusterEventInjectedResponseSchema, ClusterEventSchema } from '../protocol/cluster-event.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/**
 * POST /v1/sessions/:id/cluster-events (admin): inject `budget_threshold_hit`, `passivation_requested` or
 * `peer_invocation`; subscribers see the event and session hooks observe it. `passivation_requested`
 * also passivates the session (save, release the lease, drop it from memory) by `deadline_ms` (epoch ms; omitted: now).
 */
export function registerClusterEventRoutes(app: FastifyInstance, ctx: ServerContext): void {
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/cluster-events',
      summary: 'Inject a cluster event (budget_threshold_hit, passivation_requested, peer_invocation)',
      description:
        'Subscribers see the event and session hooks observe it; passivation_requested also passivates the session: an active run may finish until deadline_ms (epoch ms), then it stops keeping its checkpoint; the session is saved, its lease released and it leaves memory (the next request hydrates it, on any node).',
      scope: 'admin',
      params: SessionParamsSchema,
      body: ClusterEventSchema,
      responses: { 202: ClusterEventInjectedResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller, reply }) => {
      const session = ctx.agent.getSession(params.id, caller);
      session.injectClusterEvent(body.type, body.payload);
      let passivated = false;
      if (body.type === 'passivation_requested') {
        await ctx.agent.passivate(session.key, Math.max(0, (body.payload.deadline_ms ?? 0) - ctx.hostEnv.now()));
        passivated = true;
      }
      reply.status(202);
      return { injected: true as const, type: body.type, passivated };
    },
  );
}
