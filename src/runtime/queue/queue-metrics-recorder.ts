import type { Lane } from '../../protocol/queue.js';
import {
  QUEUE_LATENCY_WINDOW,
  type LaneCounters,
  type LatencySummary,
  type QueueMetrics,
} from '../../protocol/queue-metrics.js';
import type { ToolResult } from '../tools/define-tool.js';
import { LANES } from './lane-map.js';

/** A lane's figures right now, read from the queue when the metrics are asked for. */
export type LaneGauges = QueueMetrics['gauges'][Lane];

/** The most recent samples, at most `size` of them (a ring). */
class Window {
  private readonly samples: number[] = [];
  private next = 0;

  constructor(private readonly size: number) {}

  add(value: number): void {
    if (this.samples.length < this.size) this.samples.push(value);
    else this.samples[this.next] = value;
    this.next = (this.next + 1) % this.size;
  }

  summary(): LatencySummary {
    const sorted = [...this.samples].sort((a, b) => a - b);
    const at = (q: number): number =>
      sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
    return {
      count: sorted.length,
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      max: sorted.length === 0 ? 0 : (sorted[sorted.length - 1] ?? 0),
    };
  }
}

interface LaneRecord {
  readonly counters: LaneCounters;
  readonly wait: Window;
  readonly run: Window;
}

/** How a lane call ended, for the counters. */
export type LaneOutcome = 'completed' | 'failed' | 'timed_out' | 'cancelled';

/** The outcome of a call's final result: cancelled, timed out, failed (non-zero exit) or completed. */
export function laneOutcome(result: ToolResult): LaneOutcome {
  const meta = result.metadata ?? {};
  if (meta.cancelled === true) return 'cancelled';
  if (meta.timed_out === true || result.errorKind?.type === 'timeout') return 'timed_out';
  return result.exitCode === 0 ? 'completed' : 'failed';
}

/**
 * A queue's metrics (queueConfig.enableMetrics): counters per lane and the wait/run latency of each
 * lane's most recent QUEUE_LATENCY_WINDOW calls (nearest-rank percentiles, computed when read).
 */
export class QueueMetricsRecorder {
  private readonly lanes: Record<Lane, LaneRecord>;

  constructor(window = QUEUE_LATENCY_WINDOW) {
    this.lanes = Object.fromEntries(
      LANES.map((lane) => [
        lane,
        {
          counters: { submitted: 0, completed: 0, failed: 0, timed_out: 0, cancelled: 0, retried: 0, dead_lettered: 0 },
          wait: new Window(window),
          run: new Window(window),
        },
      ]),
    ) as Record<Lane, LaneRecord>;
  }

  /** Count one counter of a lane. */
  count(lane: Lane, counter: keyof LaneCounters): void {
    this.lanes[lane].counters[counter] += 1;
  }

  /** Record how long an attempt waited for its slot (ms). */
  waited(lane: Lane, ms: number): void {
    this.lanes[lane].wait.add(Math.max(0, ms));
  }

  /** Record how long an attempt held its slot (ms). */
  ran(lane: Lane, ms: number): void {
    this.lanes[lane].run.add(Math.max(0, ms));
  }

  /** The counters of every lane (copies). */
  counters(): Record<Lane, LaneCounters> {
    return Object.fromEntries(LANES.map((lane) => [lane, { ...this.lanes[lane].counters }])) as Record<
      Lane,
      LaneCounters
    >;
  }

  /** The seed's `{counters, gauges, histograms}`, with the gauges read by `gauges`. */
  snapshot(gauges: (lane: Lane) => LaneGauges): QueueMetrics {
    const byLane = <T>(read: (lane: Lane) => T): Record<Lane, T> =>
      Object.fromEntries(LANES.map((lane) => [lane, read(lane)])) as Record<Lane, T>;
    return {
      counters: this.counters(),
      gauges: byLane(gauges),
      histograms: byLane((lane) => ({
        wait_ms: this.lanes[lane].wait.summary(),
        run_ms: this.lanes[lane].run.summary(),
      })),
    };
  }
}
