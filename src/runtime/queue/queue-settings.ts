import type { Lane, LaneHandlerMode } from '../../protocol/queue.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import { DEFAULT_LANE_CONCURRENCY, DEFAULT_LANE_TIMEOUT_MS, LANES } from './lane-map.js';

/** One lane's settings: its slots, its handler mode and the handler's timeout. */
export interface LaneSettings {
  readonly maxConcurrency: number;
  readonly mode: LaneHandlerMode;
  /** How long the host has for an external task of this lane (ms). */
  readonly timeoutMs: number;
  /** The option that set `timeoutMs`, named in the timeout result. */
  readonly timeoutSource: string;
}

/** A session's resolved lane queue settings. */
export interface QueueSettings {
  readonly lanes: Readonly<Record<Lane, LaneSettings>>;
  /** queueConfig.timeoutMs: the default handler timeout, and a bound on a call run here (with toolTimeoutMs). */
  readonly timeoutMs?: number;
  /** retryPolicy with its defaults (strategy none without one: a call is tried once). */
  readonly retry: RetrySettings;
  /** Most dead letters kept (enableDlq; dlqMaxSize, default 1000); undefined without a dead-letter queue. */
  readonly dlqMaxSize?: number;
  /** enableMetrics (or enableAllFeatures): counters, gauges and latency percentiles per lane. */
  readonly metrics: boolean;
  /** enableAlerts (or enableAllFeatures): queue_alert for a deep or slow lane. */
  readonly alerts: boolean;
}

/** The seed's retry_policy with its defaults filled in. */
export interface RetrySettings {
  readonly strategy: 'exponential' | 'fixed' | 'none';
  readonly maxRetries: number;
  readonly initialDelayMs: number;
  readonly fixedDelayMs: number;
}

/** The seed's default dead-letter queue size. */
export const DEFAULT_DLQ_MAX_SIZE = 1000;

/** The delay before retry number `retry` (1-based) under `policy`. */
export function retryDelayMs(policy: RetrySettings, retry: number): number {
  return policy.strategy === 'fixed' ? policy.fixedDelayMs : policy.initialDelayMs * 2 ** (retry - 1);
}

/** The seed's queueConfig, as SessionOptions carries it. */
export type QueueConfig = NonNullable<SessionOptions['queueConfig']>;

/** The seed's defaults filled in: concurrency per lane, internal handlers, handler timeout 60000 (or queueConfig.timeoutMs). */
export function resolveQueueSettings(config: QueueConfig): QueueSettings {
  const concurrency: Record<Lane, number> = {
    ...DEFAULT_LANE_CONCURRENCY,
    ...(config.queryConcurrency !== undefined ? { query: config.queryConcurrency } : {}),
    ...(config.executeConcurrency !== undefined ? { execute: config.executeConcurrency } : {}),
    ...(config.generateConcurrency !== undefined ? { generate: config.generateConcurrency } : {}),
  };
  const lanes = Object.fromEntries(
    LANES.map((lane) => {
      const handler = config.laneHandlers?.[lane];
      return [
        lane,
        {
          maxConcurrency: concurrency[lane],
          mode: handler?.mode ?? 'internal',
          ...laneTimeout(lane, handler?.timeoutMs, config.timeoutMs),
        },
      ];
    }),
  ) as Record<Lane, LaneSettings>;
  const policy = config.retryPolicy;
  const initialDelayMs = policy?.initialDelayMs ?? 100;
  const retry: RetrySettings = policy
    ? {
        strategy: policy.strategy,
        maxRetries: policy.strategy === 'none' ? 0 : (policy.maxRetries ?? 3),
        initialDelayMs,
        fixedDelayMs: policy.fixedDelayMs ?? initialDelayMs,
      }
    : { strategy: 'none', maxRetries: 0, initialDelayMs, fixedDelayMs: initialDelayMs };
  // enableAllFeatures is the seed's with_lane_features(): DLQ, metrics, alerts and timeoutMs 60000 (explicit values win).
  const all = config.enableAllFeatures === true;
  const timeoutMs = config.timeoutMs ?? (all ? DEFAULT_LANE_TIMEOUT_MS : undefined);
  const dlq = config.enableDlq ?? all;
  return {
    lanes,
    retry,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(dlq ? { dlqMaxSize: config.dlqMaxSize ?? DEFAULT_DLQ_MAX_SIZE } : {}),
    metrics: config.enableMetrics ?? all,
    alerts: config.enableAlerts ?? all,
  };
}

/** A lane handler's timeout and the option it came from. */
export function laneTimeout(
  lane: Lane,
  handlerMs: number | undefined,
  queueMs: number | undefined,
  handlerSource = `queueConfig.laneHandlers.${lane}.timeoutMs`,
): { timeoutMs: number; timeoutSource: string } {
  if (handlerMs !== undefined) return { timeoutMs: handlerMs, timeoutSource: handlerSource };
  if (queueMs !== undefined) return { timeoutMs: queueMs, timeoutSource: 'queueConfig.timeoutMs' };
  return {
    timeoutMs: DEFAULT_LANE_TIMEOUT_MS,
    timeoutSource: `the default lane handler timeout ${DEFAULT_LANE_TIMEOUT_MS} ms`,
  };
}
