import type { FastifyInstance } from 'fastify';
import { HealthResponseSchema } from '../protocol/http.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** Liveness and readiness (store reachable, not draining); no auth. */
export function registerHealthRoutes(app: FastifyInstance, ctx: ServerContext): void {
  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/healthz', summary: 'Liveness', scope: null, responses: { 200: HealthResponseSchema } },
    async () => ({ status: 'ok' }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/readyz',
      summary: 'Readiness: store reachable and not draining',
      scope: null,
      responses: { 200: HealthResponseSchema, 503: HealthResponseSchema },
    },
    async ({ reply }) => {
      const store = await ctx.store.ping();
      const admitting = ctx.agent.admitting;
      const ready = store && admitting;
      reply.status(ready ? 200 : 503);
      return { status: ready ? 'ready' : 'not_ready', checks: { store, admitting }, sandbox: ctx.sandbox.kind };
    },
  );
}
