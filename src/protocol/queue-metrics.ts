import { z } from 'zod';

/** Latency samples kept per lane and kind (wait, run) for the percentiles: the most recent ones. */
export const QUEUE_LATENCY_WINDOW = 1000;

const count = z.number().int().nonnegative();

/** One lane's counters since the session opened. */
export const LaneCountersSchema = z.object({
  /** Calls submitted to the lane (a retried call counts once). */
  submitted: count,
  /** Calls that ended with exit code 0. */
  completed: count,
  /** Calls that ended with a non-zero exit code (not a timeout or cancel). */
  failed: count,
  /** Calls whose last attempt timed out (lane handler or tool timeout). */
  timed_out: count,
  /** Calls stopped by their run's cancel (waiting, retrying, running or at the host). */
  cancelled: count,
  /** Retries started (command_retry). */
  retried: count,
  /** Calls dead-lettered (command_dead_lettered). */
  dead_lettered: count,
});

/** One lane's figures right now. */
export const LaneGaugesSchema = z.object({
  /** Calls waiting for a slot. */
  pending: count,
  /** Calls holding a slot. */
  active: count,
  /** External tasks of the lane awaiting the host. */
  external_pending: count,
});

/** Latency figures (ms) over the lane's recent window (0 for all with no samples). */
export const LatencySummarySchema = z.object({
  /** Samples in the window (at most QUEUE_LATENCY_WINDOW). */
  count,
  p50: z.number().nonnegative(),
  p90: z.number().nonnegative(),
  p99: z.number().nonnegative(),
  max: z.number().nonnegative(),
});
/** A latency summary. */
export type LatencySummary = z.infer<typeof LatencySummarySchema>;

/** One lane's latency histograms: wait for the slot, then run (here or at the host). */
export const LaneHistogramsSchema = z.object({ wait_ms: LatencySummarySchema, run_ms: LatencySummarySchema });

const perLane = <T extends z.ZodType>(schema: T) =>
  z.object({ control: schema, query: schema, execute: schema, generate: schema });

/** The seed's queueMetrics(): `{counters, gauges, histograms}`, each keyed by lane. */
export const QueueMetricsSchema = z
  .object({
    counters: perLane(LaneCountersSchema),
    gauges: perLane(LaneGaugesSchema),
    histograms: perLane(LaneHistogramsSchema),
  })
  .meta({ id: 'QueueMetrics' });
/** Queue metrics as on the wire. */
export type QueueMetrics = z.infer<typeof QueueMetricsSchema>;
/** One lane's counters. */
export type LaneCounters = z.infer<typeof LaneCountersSchema>;

/** Answer of GET .../queue/metrics: the metrics, or null when the queue has enableMetrics off. */
export const QueueMetricsResponseSchema = z.object({ metrics: QueueMetricsSchema.nullable() });
