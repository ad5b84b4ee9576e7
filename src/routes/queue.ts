import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import {
  CompleteExternalTaskBodySchema,
  CompleteExternalTaskResponseSchema,
  DeadLettersResponseSchema,
  ExternalTaskParamsSchema,
  ExternalTasksResponseSchema,
  LaneHandlerConfigSchema,
  LaneHandlerResponseSchema,
  LaneParamsSchema,
  QueueInfoResponseSchema,
  QueueStatsSchema,
} from '../protocol/queue.js';
import { QueueMetricsResponseSchema } from '../protocol/queue-metrics.js';
import type { Caller } from '../runtime/ports/caller.js';
import type { SessionQueue } from '../runtime/queue/session-queue.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** What the queue routes need of a session. */
export interface QueueSessionPort {
  readonly id: string;
  readonly queue: SessionQueue | undefined;
  readonly lifecycle: { assertOpen(): void };
}

const errors = { 400: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 410: ErrorBodySchema };

/** The seed's lane queue over REST: hasQueue + stats, lane handlers, external tasks the host completes (scope `sessions`). */
export function registerQueueRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  getSession: (id: string, caller: Caller) => QueueSessionPort,
): void {
  const queueOf = (id: string, caller: Caller): SessionQueue => {
    const session = getSession(id, caller);
    session.lifecycle.assertOpen();
    if (!session.queue) {
      throw new CodeError(
        'QUEUE_NOT_CONFIGURED',
        `session ${session.id} has no lane queue; create it with queueConfig {...} (e.g. {"laneHandlers": {"execute": {"mode": "external"}}})`,
        { sessionId: session.id, field: 'queueConfig' },
      );
    }
    return session.queue;
  };
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/queue',
      summary: 'Whether the session has a lane queue, and its stats (hasQueue)',
      description: 'A session without queueConfig answers {hasQueue: false, stats: null}.',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: QueueInfoResponseSchema, ...errors },
    },
    async ({ params, caller }) => {
      const session = getSession(params.id, caller);
      session.lifecycle.assertOpen();
      return { hasQueue: session.queue !== undefined, stats: session.queue?.stats() ?? null };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/queue/stats',
      summary: 'Lane queue stats (queueStats)',
      description:
        'totalPending (waiting for a slot), totalActive (holding one), externalPending (awaiting the host), and per lane {lane, pending, active, maxConcurrency, handlerMode}. 409 QUEUE_NOT_CONFIGURED without queueConfig.',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: QueueStatsSchema, ...errors },
    },
    async ({ params, caller }) => queueOf(params.id, caller).stats(),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/queue/metrics',
      summary: 'Lane queue metrics (queueMetrics)',
      description:
        "With queueConfig.enableMetrics (or enableAllFeatures): {metrics: {counters, gauges, histograms}}, each keyed by lane — counters since the session opened (submitted, completed, failed, timed_out, cancelled, retried, dead_lettered), gauges now (pending, active, external_pending), wait_ms and run_ms percentiles (p50, p90, p99, max) over the lane's last 1000 calls. {metrics: null} with metrics off; 409 QUEUE_NOT_CONFIGURED without queueConfig.",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: QueueMetricsResponseSchema, ...errors },
    },
    async ({ params, caller }) => ({ metrics: queueOf(params.id, caller).metrics() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/queue/dead-letters',
      summary: 'Dead-lettered calls (deadLetters)',
      description:
        'Calls whose last attempt failed with a retryable fault (lane timeout, host failure), oldest first, at most queueConfig.dlqMaxSize (default 1000); empty without enableDlq.',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: DeadLettersResponseSchema, ...errors },
    },
    async ({ params, caller }) => ({ deadLetters: queueOf(params.id, caller).deadLetters() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'PUT',
      url: '/v1/sessions/:id/queue/lanes/:lane',
      summary: "Set a lane's handler (setLaneHandler)",
      description:
        'mode internal (run here), external (hand each call to the host as an external task) or hybrid (run here, notify the host); timeoutMs is how long the host has (default queueConfig.timeoutMs, else 60000). Applies to calls that get their slot from now on.',
      scope: 'sessions',
      params: LaneParamsSchema,
      body: LaneHandlerConfigSchema,
      responses: { 200: LaneHandlerResponseSchema, ...errors },
    },
    async ({ params, body, caller }) => ({
      lane: queueOf(params.id, caller).setLaneHandler(params.lane, body.mode, body.timeoutMs),
    }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/queue/external-tasks',
      summary: 'External tasks awaiting the host (pendingExternalTasks)',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: ExternalTasksResponseSchema, ...errors },
    },
    async ({ params, caller }) => ({ tasks: queueOf(params.id, caller).pendingExternalTasks() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/queue/external-tasks/:taskId',
      summary: 'Complete an external task (completeExternalTask)',
      description:
        'success true: the model gets `result` (a string as is, anything else as JSON) with exit code 0; success false: `error` with exit code 1. 404 EXTERNAL_TASK_NOT_FOUND for an id never handed out; 409 EXTERNAL_TASK_SETTLED (details.outcome) for one already completed, timed out or cancelled.',
      scope: 'sessions',
      params: ExternalTaskParamsSchema,
      body: CompleteExternalTaskBodySchema,
      responses: { 200: CompleteExternalTaskResponseSchema, ...errors },
    },
    async ({ params, body, caller }) => {
      queueOf(params.id, caller).completeExternalTask(params.taskId, body);
      return { completed: true as const };
    },
  );
}
