import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TenantQuotaUsage } from '../runtime/quotas/tenant-quotas.js';
import type { TenantSessionBytesUsage } from '../runtime/quotas/tenant-session-bytes.js';
import { EVENT_TYPES } from '../protocol/event-catalog.js';
import type { QueueStats } from '../protocol/queue.js';
import type { QueueMetrics } from '../protocol/queue-metrics.js';
import type { RuntimeEventPayloads } from '../protocol/runtime-event.js';
import type { SessionEventObserver } from '../runtime/session-kernel/session-emitter.js';

/** Distinct tool names kept as label values; later ones are counted as "other" (MCP tools are open-ended). */
export const MAX_TOOL_LABELS = 200;

const FINISHED_STATUSES = ['completed', 'failed', 'cancelled'] as const;
type FinishedStatus = (typeof FINISHED_STATUSES)[number];
/** `error` event codes that stand for a failed provider call (the last one, or the breaker's); retried attempts are `provider_retry` events. */
const PROVIDER_FAILURE_CODES: ReadonlySet<string> = new Set(['PROVIDER_ERROR', 'CIRCUIT_BREAKER_OPEN']);
// Runs with `wait: true` hold their request for the whole run, so the buckets reach minutes.
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Live values read at scrape time. */
export interface RuntimeMetricsSources {
  /** Number of live sessions on this node. */
  liveSessions(): number;
  /** The lane queues of live sessions that have one (sessions without a queue are not visited). */
  queues?(): Iterable<QueueFigures>;
  /** Each tenant's quota usage and limits on this node. */
  tenantQuotas?(): readonly TenantQuotaUsage[];
  /** The bytes each tenant's open sessions hold on this node (limits.maxSessionBytesPerTenant). */
  tenantSessionBytes?(): readonly TenantSessionBytesUsage[];
}

/** What /metrics reads of one session's lane queue. */
export interface QueueFigures {
  stats(): QueueStats;
  /** Counters per lane; undefined without queueConfig.enableMetrics. */
  counters(): QueueMetrics['counters'] | undefined;
}

const QUEUE_OUTCOMES = ['completed', 'failed', 'timed_out', 'cancelled'] as const;
const QUEUE_LANE_COUNTERS = [
  [
    'a3s_queue_submitted_total',
    'submitted',
    'Tool calls submitted to a lane (a retried call counts once), by lane; summed over live sessions with enableMetrics.',
  ],
  [
    'a3s_queue_retries_total',
    'retried',
    'Lane queue retries started (command_retry), by lane; summed over live sessions with enableMetrics.',
  ],
  [
    'a3s_queue_dead_lettered_total',
    'dead_lettered',
    'Lane queue calls dead-lettered, by lane; summed over live sessions with enableMetrics.',
  ],
] as const;

/**
 * The Prometheus metrics of one runtime context, in a registry of its own (several servers in one process
 * never share one): default process metrics plus the `a3s_` ones. Session events are counted into plain
 * numbers on the emit path (no labels, no allocation) and handed to prom-client only when scraped.
 */
export class RuntimeMetrics {
  readonly registry = new Registry();
  private readonly eventIndex = new Map<string, number>();
  private readonly eventCounts: Float64Array;
  private readonly runsFinished: Record<FinishedStatus, number> = { completed: 0, failed: 0, cancelled: 0 };
  private readonly toolCalls = new Map<string, { ok: number; error: number }>();
  private readonly provider = { ok: 0, error: 0, promptTokens: 0, completionTokens: 0 };
  private readonly httpRequests: Counter<'method' | 'route' | 'status_code'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private socketCount: (() => number) | undefined;

  constructor(sources: RuntimeMetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    EVENT_TYPES.forEach((type, index) => this.eventIndex.set(type, index));
    this.eventCounts = new Float64Array(EVENT_TYPES.length);

    const live = new Gauge({
      name: 'a3s_sessions_live',
      help: 'Live sessions on this node.',
      registers,
      collect: (): void => live.set(sources.liveSessions()),
    });
    const sockets = new Gauge({
      name: 'a3s_websocket_connections',
      help: 'Open WebSocket connections on /v1/sessions/:id/events (event subscribers and hook or budget hosts).',
      registers,
      collect: (): void => sockets.set(this.socketCount?.() ?? 0),
    });
    this.httpRequests = new Counter({
      name: 'a3s_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status_code'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'a3s_http_request_duration_seconds',
      help: 'HTTP request duration in seconds, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: HTTP_BUCKETS,
      registers,
    });

    const runs = new Counter({
      name: 'a3s_runs_finished_total',
      help: 'Runs that reached a terminal status, by status (completed, failed, cancelled).',
      labelNames: ['status'],
      registers,
      collect: () => {
        for (const status of FINISHED_STATUSES) setCounter(runs, { status }, this.runsFinished[status]);
      },
    });
    const tools = new Counter({
      name: 'a3s_tool_calls_total',
      help: `Tool calls finished, by tool name and outcome (ok: exit code 0, else error); names beyond ${MAX_TOOL_LABELS} distinct ones count as "other".`,
      labelNames: ['tool', 'outcome'],
      registers,
      collect: () => {
        tools.reset();
        for (const [tool, counts] of this.toolCalls) {
          if (counts.ok > 0) tools.inc({ tool, outcome: 'ok' }, counts.ok);
          if (counts.error > 0) tools.inc({ tool, outcome: 'error' }, counts.error);
        }
      },
    });
    const providerCalls = new Counter({
      name: 'a3s_provider_calls_total',
      help: 'Model provider calls (one per turn attempt), by outcome (ok, error; retried attempts count).',
      labelNames: ['outcome'],
      registers,
      collect: () => {
        setCounter(providerCalls, { outcome: 'ok' }, this.provider.ok);
        setCounter(providerCalls, { outcome: 'error' }, this.provider.error);
      },
    });
    const tokens = new Counter({
      name: 'a3s_provider_tokens_total',
      help: 'Tokens the provider reported, by kind (prompt, completion).',
      labelNames: ['kind'],
      registers,
      collect: () => {
        setCounter(tokens, { kind: 'prompt' }, this.provider.promptTokens);
        setCounter(tokens, { kind: 'completion' }, this.provider.completionTokens);
      },
    });
    this.registerQueueMetrics(sources, registers);
    const events = new Counter({
      name: 'a3s_events_emitted_total',
      help: 'Session events emitted on this node, by event type.',
      labelNames: ['type'],
      registers,
      collect: () => {
        events.reset();
        this.eventCounts.forEach((count, index) => {
          if (count > 0) events.inc({ type: EVENT_TYPES[index] as string }, count);
        });
      },
    });
  }

  /** The a3s_queue_* metrics: read from the live queues when scraped (summed, so a closed session's counts leave the totals). */
  private registerQueueMetrics(sources: RuntimeMetricsSources, registers: Registry[]): void {
    const queues = (): Iterable<QueueFigures> => sources.queues?.() ?? [];
    const sumCounters = (): Map<string, QueueMetrics['counters'][keyof QueueMetrics['counters']]> | undefined => {
      let sum: Map<string, QueueMetrics['counters'][keyof QueueMetrics['counters']]> | undefined;
      for (const queue of queues()) {
        const counters = queue.counters();
        if (!counters) continue;
        sum ??= new Map();
        for (const [lane, figures] of Object.entries(counters)) {
          const into = sum.get(lane);
          if (!into) sum.set(lane, { ...figures });
          else for (const key of Object.keys(figures) as (keyof typeof figures)[]) into[key] += figures[key];
        }
      }
      return sum;
    };
    const calls = new Counter({
      name: 'a3s_queue_calls_total',
      help: 'Lane queue calls finished, by lane and outcome (completed, failed, timed_out, cancelled); summed over live sessions with enableMetrics.',
      labelNames: ['lane', 'outcome'],
      registers,
      collect: () => {
        calls.reset();
        for (const [lane, figures] of sumCounters() ?? [])
          for (const outcome of QUEUE_OUTCOMES) calls.inc({ lane, outcome }, figures[outcome]);
      },
    });
    for (const [name, key, help] of QUEUE_LANE_COUNTERS) {
      const counter = new Counter({
        name,
        help,
        labelNames: ['lane'],
        registers,
        collect: () => {
          counter.reset();
          for (const [lane, figures] of sumCounters() ?? []) counter.inc({ lane }, figures[key]);
        },
      });
    }
    const laneGauge = (name: string, help: string, read: (lane: QueueStats['lanes'][number]) => number): void => {
      const gauge = new Gauge({
        name,
        help,
        labelNames: ['lane'],
        registers,
        collect: () => {
          gauge.reset();
          for (const queue of queues())
            for (const lane of queue.stats().lanes) gauge.inc({ lane: lane.lane }, read(lane));
        },
      });
    };
    laneGauge(
      'a3s_queue_pending',
      'Tool calls waiting for a lane slot, by lane; summed over live sessions with a queue.',
      (lane) => lane.pending,
    );
    laneGauge(
      'a3s_queue_active',
      'Tool calls holding a lane slot (running here or at the host), by lane; summed over live sessions with a queue.',
      (lane) => lane.active,
    );
    const external = new Gauge({
      name: 'a3s_queue_external_pending',
      help: 'External tasks awaiting the host; summed over live sessions with a queue.',
      registers,
      collect: () => {
        let total = 0;
        for (const queue of queues()) total += queue.stats().externalPending;
        external.set(total);
      },
    });
    this.registerTenantGauges(sources, registers);
  }

  /** Per-tenant quota usage (a3s_tenant_*) and limits (a3s_tenant_quota_limit), labelled by tenant. */
  private registerTenantGauges(sources: RuntimeMetricsSources, registers: Registry[]): void {
    const usage = (name: string, help: string, read: (tenant: TenantQuotaUsage) => number): void => {
      const gauge = new Gauge({
        name,
        help,
        labelNames: ['tenant'],
        registers,
        collect: () => {
          gauge.reset();
          for (const tenant of sources.tenantQuotas?.() ?? []) gauge.set({ tenant: tenant.tenantId }, read(tenant));
        },
      });
    };
    usage(
      'a3s_tenant_open_sessions',
      'Open sessions of the tenant on this node (quota maxOpenSessions).',
      (t) => t.openSessions,
    );
    usage(
      'a3s_tenant_running_runs',
      'Runs of the tenant in flight on this node (quota maxConcurrentRuns).',
      (t) => t.runningRuns,
    );
    usage(
      'a3s_tenant_runs_last_minute',
      'Runs of the tenant started on this node in the last minute (quota maxRunsPerMinute).',
      (t) => t.runsLastMinute,
    );
    usage(
      'a3s_tenant_stored_bytes',
      "Bytes of the tenant's snapshots saved by this node, plus the disk its sessions' sandboxed commands use (quota maxStoredBytes).",
      (t) => t.storedBytes,
    );
    const sessionBytes = new Gauge({
      name: 'a3s_tenant_session_bytes',
      help: "Bytes the tenant's open sessions hold on this node: options, overhead, transcript and artifacts (limits.maxSessionBytesPerTenant).",
      labelNames: ['tenant'],
      registers,
      collect: () => {
        sessionBytes.reset();
        for (const tenant of sources.tenantSessionBytes?.() ?? [])
          sessionBytes.set({ tenant: tenant.tenantId }, tenant.bytes);
      },
    });
    const limits = new Gauge({
      name: 'a3s_tenant_quota_limit',
      help: "The tenant's quota limits on this node, by quota.",
      labelNames: ['tenant', 'quota'],
      registers,
      collect: () => {
        limits.reset();
        for (const tenant of sources.tenantQuotas?.() ?? [])
          for (const [quota, limit] of Object.entries(tenant.quota))
            limits.set({ tenant: tenant.tenantId, quota }, limit);
      },
    });
  }

  /** Count one session event (wired into every session's emitter): a few array and field increments. */
  readonly observeEvent: SessionEventObserver = (type, payload) => {
    const index = this.eventIndex.get(type);
    if (index !== undefined) this.eventCounts[index] = (this.eventCounts[index] ?? 0) + 1;
    switch (type) {
      case 'run_status_changed': {
        const to = (payload as RuntimeEventPayloads['run_status_changed']).to;
        if (to === 'completed' || to === 'failed' || to === 'cancelled') this.runsFinished[to] += 1;
        break;
      }
      case 'tool_end': {
        const end = payload as RuntimeEventPayloads['tool_end'];
        const counts = this.toolCounts(end.name);
        if (end.exit_code === 0) counts.ok += 1;
        else counts.error += 1;
        break;
      }
      case 'turn_end': {
        const usage = (payload as RuntimeEventPayloads['turn_end']).usage;
        this.provider.ok += 1;
        this.provider.promptTokens += usage.prompt_tokens;
        this.provider.completionTokens += usage.completion_tokens;
        break;
      }
      case 'provider_retry':
        this.provider.error += 1;
        break;
      case 'error':
        if (PROVIDER_FAILURE_CODES.has((payload as RuntimeEventPayloads['error']).code)) this.provider.error += 1;
        break;
    }
  };

  /** Count one answered HTTP request under its route pattern (never the raw URL; unmatched requests share one label). */
  observeRequest(method: string, route: string | undefined, statusCode: number, seconds: number): void {
    const pattern = route ?? 'unmatched';
    this.httpRequests.inc({ method, route: pattern, status_code: statusCode });
    this.httpDuration.observe({ method, route: pattern }, seconds);
  }

  /** Where the WebSocket connection gauge reads its value (the app's socket registry). */
  countSockets(count: () => number): void {
    this.socketCount = count;
  }

  /** Content type of the exposition (`text/plain; version=0.0.4; charset=utf-8`). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  /** Drop every metric: prom-client's GC observer outlives the context and would otherwise keep it reachable. */
  close(): void {
    this.socketCount = undefined;
    this.registry.clear();
  }

  private toolCounts(name: string): { ok: number; error: number } {
    let counts = this.toolCalls.get(name);
    if (counts) return counts;
    const key = this.toolCalls.size < MAX_TOOL_LABELS ? name : 'other';
    counts = this.toolCalls.get(key);
    if (!counts) {
      counts = { ok: 0, error: 0 };
      this.toolCalls.set(key, counts);
    }
    return counts;
  }
}

/** Set a counter child to a running total kept outside prom-client (counters only expose inc). */
function setCounter<L extends string>(counter: Counter<L>, labels: Partial<Record<L, string>>, total: number): void {
  counter.remove(labels);
  counter.inc(labels, total);
}
