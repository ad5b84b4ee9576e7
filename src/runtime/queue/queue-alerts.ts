import type { Lane } from '../../protocol/queue.js';
import type { EventSink } from '../invocation/invocation-context.js';

/** A lane's depth alert fires at this many waiting calls per slot of the lane (10 × its concurrency). */
export const QUEUE_DEPTH_ALERT_PER_SLOT = 10;
/** A latency alert fires for a call that waited at least this share of its lane's handler timeout. */
export const QUEUE_LATENCY_ALERT_SHARE = 0.5;

/**
 * A queue's alerts (queueConfig.enableAlerts): `queue_alert {level: "warning", alert_type, message}` when a
 * lane's depth reaches 10 × its concurrency (`queue_depth`) or a call waited half its lane timeout or more
 * (`queue_latency`). Each fires once per lane until the lane recovers: depth back to half the bound or
 * below, a call that waited less than the bound.
 */
export class QueueAlerts {
  private readonly deep = new Set<Lane>();
  private readonly slow = new Set<Lane>();

  /** Check a lane's depth (calls waiting for a slot) against its bound. */
  depth(lane: Lane, pending: number, maxConcurrency: number, emit: EventSink): void {
    const bound = QUEUE_DEPTH_ALERT_PER_SLOT * maxConcurrency;
    if (this.deep.has(lane)) {
      if (pending * 2 <= bound) this.deep.delete(lane);
      return;
    }
    if (pending < bound) return;
    this.deep.add(lane);
    emit('queue_alert', {
      level: 'warning',
      alert_type: 'queue_depth',
      message: `the ${lane} lane has ${pending} calls waiting for a slot (bound ${bound}: ${QUEUE_DEPTH_ALERT_PER_SLOT} × its concurrency ${maxConcurrency})`,
    });
  }

  /** Check how long a call waited for its slot (ms) against half its lane's handler timeout. */
  waited(lane: Lane, waitedMs: number, laneTimeoutMs: number, emit: EventSink): void {
    const bound = laneTimeoutMs * QUEUE_LATENCY_ALERT_SHARE;
    if (waitedMs < bound) {
      this.slow.delete(lane);
      return;
    }
    if (this.slow.has(lane)) return;
    this.slow.add(lane);
    emit('queue_alert', {
      level: 'warning',
      alert_type: 'queue_latency',
      message: `a call waited ${Math.round(waitedMs)} ms for a slot of the ${lane} lane (bound ${bound} ms: half its timeout ${laneTimeoutMs} ms)`,
    });
  }
}
