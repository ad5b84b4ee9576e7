import type { FastifyInstance } from 'fastify';
import { MetricsTextSchema } from '../protocol/metrics-text.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** What the WebSocket connection gauge reads (the app's SocketRegistry). */
export interface SocketCount {
  readonly size: number;
}

/**
 * GET /metrics (scope admin): the context's Prometheus registry as text. Also counts every answered HTTP
 * request (onResponse) under its route pattern, so register it before the other routes.
 */
export function registerMetricsRoutes(app: FastifyInstance, ctx: ServerContext, sockets: SocketCount): void {
  const metrics = ctx.metrics;
  metrics.countSockets(() => sockets.size);
  // The route pattern, never the raw URL: label values stay bounded by the routes the app serves.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/metrics',
      summary: 'Prometheus metrics',
      description:
        'Process metrics (process_*, nodejs_*) and a3s_* metrics: live sessions, WebSocket connections, HTTP requests and durations, finished runs, tool calls, provider calls and tokens, emitted events, lane queues (a3s_queue_*, summed over live sessions with a queue).',
      scope: 'admin',
      produces: 'text/plain',
      responses: { 200: MetricsTextSchema },
    },
    async ({ reply }) => {
      reply.type(metrics.contentType);
      return metrics.scrape();
    },
  );
}
