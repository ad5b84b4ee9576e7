import type { EventEnvelope } from '../../protocol/event-envelope.js';

/** An event before the log stamps its sequences. */
export interface UnstampedEvent {
  version: 1;
  type: string;
  payload: Record<string, unknown>;
  metadata: {
    run_id?: string;
    session_id: string;
    timestamp_ms: number;
    tenant_id?: string;
    principal?: string;
    agent_template_id?: string;
    correlation_id?: string;
  };
}

/** A live listener on a session's events. */
export type EventListener = (event: EventEnvelope) => void;

/** Retention bounds of an event log. */
export interface EventLogLimits {
  maxEventsPerRun: number;
  maxRuns: number;
  maxSessionEvents: number;
}

interface RunBucket {
  events: EventEnvelope[];
  dropped: number;
  total: number;
}

/**
 * A hole in the retained events: every event with `after < session_sequence < firstAvailable` was
 * dropped by retention (or predates a restored snapshot's trace).
 */
export interface SequenceGap {
  after: number;
  firstAvailable: number;
}

/** What a subscriber gets when it attaches: retained events after its cursor, and the first hole, if any. */
export interface ReplayResult {
  events: EventEnvelope[];
  gap: SequenceGap | undefined;
}

/** A page of one run's events. */
export interface RunEventPage {
  events: EventEnvelope[];
  retentionGap: { firstAvailableSequence: number } | undefined;
  nextAfter: number | undefined;
}

// Dropped entries stay in the session-ordered index until they outnumber the live ones (amortised O(1)).
const COMPACT_MIN_DROPPED = 256;

/**
 * The event log of one session: assigns `session_sequence` (from 1) and per-run `sequence` (from 0),
 * never reusing either, keeps each run's events within retention limits (FIFO), and fans new events
 * out to live listeners synchronously so replay-then-follow has no gaps or duplicates. A session-ordered
 * index lets a subscriber page through retained events from any cursor in O(log n + page).
 */
export class SessionEventLog {
  /** The highest session_sequence restored from a snapshot (0: none). */
  private restoredThrough = 0;
  private sessionSequence: number;
  private readonly runs = new Map<string, RunBucket>();
  private readonly runless: EventEnvelope[] = [];
  // Created by the first live listener: runs waited on over REST have none.
  private listeners: Set<EventListener> | undefined;
  /** Every retained event in session order; entries in `dropped` are skipped and compacted lazily. */
  private ordered: EventEnvelope[] = [];
  // Created when retention first drops an event: most sessions never reach their limits.
  private dropped: WeakSet<EventEnvelope> | undefined;
  private droppedInOrdered = 0;

  constructor(
    private readonly limits: EventLogLimits,
    startSequence = 0,
  ) {
    this.sessionSequence = startSequence;
  }

  /** The last assigned session sequence. */
  get lastSequence(): number {
    return this.sessionSequence;
  }

  /** Number of retained events (all runs and run-less events). */
  get size(): number {
    return this.ordered.length - this.droppedInOrdered;
  }

  /**
   * Append an event, stamping its sequences; returns the stamped envelope. The log takes the event over:
   * the event and its metadata are stamped in place and become the envelope, so callers pass fresh ones.
   */
  append(event: UnstampedEvent): EventEnvelope {
    this.sessionSequence += 1;
    const metadata: UnstampedEvent['metadata'] & { sequence?: number; session_sequence?: number } = event.metadata;
    const runId = metadata.run_id;
    // The envelope is the event itself, once its metadata carries the sequences (set here, in wire order).
    const stamped = event as EventEnvelope;
    if (runId !== undefined) {
      const bucket = this.bucket(runId);
      metadata.sequence = bucket.total;
      metadata.session_sequence = this.sessionSequence;
      bucket.total += 1;
      bucket.events.push(stamped);
      this.ordered.push(stamped);
      this.trimBucket(bucket);
      return this.publish(stamped);
    }
    metadata.session_sequence = this.sessionSequence;
    this.runless.push(stamped);
    this.ordered.push(stamped);
    this.trimRunless();
    return this.publish(stamped);
  }

  /** Compacts when due and fans a stamped event out to the live listeners. */
  private publish(stamped: EventEnvelope): EventEnvelope {
    this.maybeCompact();
    // A listener that unsubscribes (or subscribes) while being called must not disturb this fan-out;
    // an event nobody follows (most of them: runs waited on over REST) needs no copy of the set.
    const listeners = this.listeners;
    if (listeners === undefined || listeners.size === 0) return stamped;
    if (listeners.size === 1) listeners.values().next().value?.(stamped);
    else for (const listener of [...listeners]) listener(stamped);
    return stamped;
  }

  /** Add a live listener for events appended from now on; returns its removal. */
  listen(listener: EventListener): () => void {
    const listeners = (this.listeners ??= new Set());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** Retained events with session_sequence > after, then (same tick) a live listener; returns an unsubscribe. */
  subscribe(after: number | undefined, listener: EventListener): { replay: ReplayResult; unsubscribe: () => void } {
    const replay = after === undefined ? { events: [], gap: undefined } : this.replay(after);
    return { replay, unsubscribe: this.listen(listener) };
  }

  /**
   * Up to `max` retained events with session_sequence > after, in session order. Consecutive results
   * whose sequences are not consecutive integers straddle events dropped by retention.
   */
  read(after: number, max: number): EventEnvelope[] {
    const events: EventEnvelope[] = [];
    for (let i = this.indexAfter(after); i < this.ordered.length && events.length < max; i += 1) {
      const event = this.ordered[i];
      if (!this.dropped?.has(event)) events.push(event);
    }
    return events;
  }

  /** Retained events with session_sequence > after, in order, and the first hole among them, if any. */
  replay(after: number): ReplayResult {
    const events = this.read(after, Number.POSITIVE_INFINITY);
    return { events, gap: this.firstGap(after, events) };
  }

  /** The first hole after `after` in a run of events read from this log (or in what follows it), if any. */
  firstGap(after: number, events: readonly EventEnvelope[]): SequenceGap | undefined {
    let previous = after;
    for (const event of events) {
      const sequence = event.metadata.session_sequence;
      if (sequence > previous + 1) return { after: previous, firstAvailable: sequence };
      previous = sequence;
    }
    // Nothing retained after `previous`, yet later sequences were assigned: they were all dropped.
    if (events.length === 0 && this.sessionSequence > previous && this.read(previous, 1).length === 0) {
      return { after: previous, firstAvailable: this.sessionSequence + 1 };
    }
    return undefined;
  }

  /** A page of one run's events with sequence > after (after = -1 for the start). */
  runPage(runId: string, after: number, limit: number): RunEventPage | undefined {
    const bucket = this.runs.get(runId);
    if (!bucket) return undefined;
    const firstAvailable = bucket.dropped;
    const retentionGap = after + 1 < firstAvailable ? { firstAvailableSequence: firstAvailable } : undefined;
    const events = bucket.events.filter((e) => (e.metadata.sequence ?? 0) > after).slice(0, limit);
    const last = events.at(-1)?.metadata.sequence;
    const more = last !== undefined && last < bucket.total - 1;
    return { events, retentionGap, nextAfter: more ? last : undefined };
  }

  /** Number of events a run has emitted (including dropped ones) and the first retained per-run sequence. */
  runCounts(runId: string): { total: number; firstRetained: number } {
    const bucket = this.runs.get(runId);
    return { total: bucket?.total ?? 0, firstRetained: bucket?.dropped ?? 0 };
  }

  /** Forget a run's events (run retention); its sequences are never reused. */
  dropRun(runId: string): void {
    const bucket = this.runs.get(runId);
    if (!bucket) return;
    for (const e of bucket.events) this.markDropped(e);
    this.runs.delete(runId);
    this.maybeCompact();
  }

  /**
   * True for the `session_closed` that ends subscriptions: this session's own, never one restored from an
   * earlier life of the session (a shutdown or passivation before it was restored), which replays like any event.
   */
  ends(event: EventEnvelope): boolean {
    return event.type === 'session_closed' && event.metadata.session_sequence > this.restoredThrough;
  }

  /** Restore retained events (from a snapshot's trace); retention limits apply to them too. */
  restore(events: readonly EventEnvelope[]): void {
    for (const e of events) {
      this.restoredThrough = Math.max(this.restoredThrough, e.metadata.session_sequence);
      const runId = e.metadata.run_id;
      if (runId === undefined) this.runless.push(e);
      else {
        const bucket = this.bucket(runId);
        bucket.events.push(e);
        bucket.total = Math.max(bucket.total, (e.metadata.sequence ?? 0) + 1);
        bucket.dropped = bucket.total - bucket.events.length;
      }
      this.ordered.push(e);
      this.sessionSequence = Math.max(this.sessionSequence, e.metadata.session_sequence);
    }
    this.ordered.sort((a, b) => a.metadata.session_sequence - b.metadata.session_sequence);
    for (const bucket of this.runs.values()) {
      bucket.events.sort((a, b) => (a.metadata.sequence ?? 0) - (b.metadata.sequence ?? 0));
      this.trimBucket(bucket);
    }
    this.runless.sort((a, b) => a.metadata.session_sequence - b.metadata.session_sequence);
    this.trimRunless();
    this.maybeCompact();
  }

  /** Every retained event in session order, capped to the newest `max` (snapshot trace). */
  retained(max: number): EventEnvelope[] {
    const all = this.read(0, Number.POSITIVE_INFINITY);
    return max >= all.length ? all : all.slice(all.length - max);
  }

  /**
   * The trace: of the newest `max` retained events (what a snapshot stores as trace_events), up to `limit`
   * with session_sequence > after, in order. Walks back over at most `max` retained events, not the whole log.
   */
  trace(after: number, limit: number, max: number): EventEnvelope[] {
    let start = this.ordered.length;
    for (let kept = 0; start > 0 && kept < max; ) {
      start -= 1;
      if (!this.dropped?.has(this.ordered[start])) kept += 1;
    }
    const events: EventEnvelope[] = [];
    for (let i = Math.max(start, this.indexAfter(after)); i < this.ordered.length && events.length < limit; i += 1) {
      const event = this.ordered[i];
      if (!this.dropped?.has(event)) events.push(event);
    }
    return events;
  }

  /** Number of live listeners. */
  get listenerCount(): number {
    return this.listeners?.size ?? 0;
  }

  private bucket(runId: string): RunBucket {
    let bucket = this.runs.get(runId);
    if (!bucket) {
      bucket = { events: [], dropped: 0, total: 0 };
      this.runs.set(runId, bucket);
    }
    return bucket;
  }

  private trimBucket(bucket: RunBucket): void {
    while (bucket.events.length > this.limits.maxEventsPerRun) {
      const removed = bucket.events.shift();
      bucket.dropped += 1;
      if (removed) this.markDropped(removed);
    }
  }

  private trimRunless(): void {
    while (this.runless.length > this.limits.maxSessionEvents) {
      const removed = this.runless.shift();
      if (removed) this.markDropped(removed);
    }
  }

  private markDropped(event: EventEnvelope): void {
    const dropped = (this.dropped ??= new WeakSet());
    if (dropped.has(event)) return;
    dropped.add(event);
    this.droppedInOrdered += 1;
  }

  private maybeCompact(): void {
    if (this.droppedInOrdered < COMPACT_MIN_DROPPED || this.droppedInOrdered * 2 < this.ordered.length) return;
    this.ordered = this.ordered.filter((e) => !this.dropped?.has(e));
    this.droppedInOrdered = 0;
  }

  /** Index of the first entry of `ordered` with session_sequence > after (binary search; dropped entries keep their order). */
  private indexAfter(after: number): number {
    let lo = 0;
    let hi = this.ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ordered[mid].metadata.session_sequence > after) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
