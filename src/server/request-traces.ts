import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Telemetry, TraceParent, TraceSpan } from '../runtime/ports/telemetry.js';

const spans = new WeakMap<FastifyRequest, TraceSpan>();

/**
 * A server span per HTTP request (docs/operations.md "Traces"): `<METHOD> <route>` with `http.request.method`,
 * `http.route` and `http.response.status_code`, a child of the caller's W3C `traceparent` when it sends a valid
 * one. Nothing else of the request is recorded: no path values, query string (EventSource tickets travel there),
 * header or body. WebSocket upgrades get none (their socket outlives any request span). The request's log lines
 * carry the trace id (`trace_id`).
 */
export function installRequestTraces(app: FastifyInstance, telemetry: Telemetry | undefined): void {
  if (telemetry === undefined) return;
  app.addHook('onRequest', (request, reply, done) => {
    if (request.headers.upgrade === undefined) {
      const route = request.routeOptions.url ?? 'unmatched';
      const span = telemetry.span(
        `${request.method} ${route}`,
        'server',
        { 'http.request.method': request.method, 'http.route': route },
        telemetry.incoming(request.headers),
      );
      spans.set(request, span);
      // Every line logged for the request (and the work it starts in it) names its trace.
      const log = request.log.child({ trace_id: span.traceId });
      request.log = log;
      reply.log = log;
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span !== undefined) {
      spans.delete(request);
      span.setAttributes({ 'http.response.status_code': reply.statusCode });
      if (reply.statusCode >= 500) span.fail(`HTTP ${reply.statusCode}`);
      span.end();
    }
    done();
  });
}

/** The span of a request, for the work it starts (a run's span is its child); undefined without traces. */
export function traceOf(request: FastifyRequest): TraceParent | undefined {
  return spans.get(request);
}
