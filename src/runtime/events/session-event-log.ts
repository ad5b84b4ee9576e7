import type { EventEnvelope } from '../../protocol/event-envelope.js';
import { EventOrigin } from './event-origin.js';
import { EventRecords } from './event-records.js';
import { PayloadSizes, payloadBytes } from './payload-sizes.js';
import type { RunEventPage } from './run-event-page.js';
import type { ReplayResult, SequenceGap } from './sequence-gap.js';
import { SequenceRanges } from './sequence-ranges.js';
import type { UnstampedEvent } from './unstamped-event.js';

/** A live listener on a session's events. */
export type EventListener = (event: EventEnvelope) => void;

/** Retention bounds of an event log. */
export interface EventLogLimits {
  maxEventsPerRun: number;
  maxRuns: number;
  maxSessionEvents: number;
  /** UTF-8 bytes of payload (compact JSON) a run's retained events may hold (retentionLimits.maxEventBytesPerRun); absent: none. */
  maxEventBytesPerRun?: number;
}

// A run's retained events, by session_sequence in per-run order (the records hold the events).
interface RunBucket {
  origin: EventOrigin | undefined;
  events: SequenceRanges;
  dropped: number;
  total: number;
  /** With a byte bound only: the payload bytes of the retained events, in the order of `events`. */
  sizes: PayloadSizes | undefined;
}

/**
 * The event log of one session: assigns `session_sequence` (from 1) and per-run `sequence` (from 0),
 * never reusing either, keeps each run's events within retention limits (FIFO), and fans new events
 * out to live listeners synchronously so replay-then-follow has no gaps or duplicates. A session-ordered
 * index lets a subscriber page through retained events from any cursor in O(log n + page). Each event is
 * kept compactly (its own fields and its run's shared EventOrigin); its envelope is built when it is read,
 * and on append only when a live listener or the caller needs one.
 */
export class SessionEventLog {
  /** The highest session_sequence restored from a snapshot (0: none). */
  private restoredThrough = 0;
  private sessionSequence: number;
  private readonly runs = new Map<string, RunBucket>();
  /** Session sequences of the retained run-less events, oldest first. */
  private readonly runless = new SequenceRanges();
  private runlessOrigin: EventOrigin | undefined;
  // Created by the first live listener: runs waited on over REST have none.
  private listeners: Set<EventListener> | undefined;
  /** Every retained event in session order. */
  private readonly records = new EventRecords();

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
    return this.records.retained;
  }

  /**
   * Append an event, stamping its sequences; returns the stamped envelope (the one live listeners got).
   * Its metadata is written in wire order, whatever order it was given in.
   */
  append(event: UnstampedEvent): EventEnvelope {
    return this.record(EventOrigin.of(event.metadata), event.type, event.payload, event.metadata.timestamp_ms, true);
  }

  /**
   * Append an event of `origin` (the emitter's path: no envelope or metadata object is built for it unless
   * a live listener needs one or `envelope` asks for it). Returns the envelope when one was built.
   */
  record(
    origin: EventOrigin,
    type: string,
    payload: Record<string, unknown>,
    timestampMs: number,
    envelope: true,
  ): EventEnvelope;
  record(
    origin: EventOrigin,
    type: string,
    payload: Record<string, unknown>,
    timestampMs: number,
    envelope?: boolean,
  ): EventEnvelope | undefined;
  record(
    origin: EventOrigin,
    type: string,
    payload: Record<string, unknown>,
    timestampMs: number,
    envelope = false,
  ): EventEnvelope | undefined {
    this.sessionSequence += 1;
    const sessionSequence = this.sessionSequence;
    const runId = origin.runId;
    const bucket = runId === undefined ? undefined : this.bucket(runId);
    let sequence = 0;
    // Every event of a run shares one origin, the first one given (an unequal one, possible through
    // append, stays with its own event).
    let shared: EventOrigin;
    if (bucket !== undefined) {
      shared = bucket.origin ??= origin;
      sequence = bucket.total;
      bucket.total += 1;
      bucket.events.push(sessionSequence);
      bucket.sizes?.push(payloadBytes(payload));
    } else {
      shared = this.runlessOrigin ??= origin;
      this.runless.push(sessionSequence);
    }
    if (!shared.sameAs(origin)) shared = origin;
    const records = this.records;
    if (!records.push(shared, type, payload, timestampMs, sequence, sessionSequence)) {
      records.pushVerbatim(shared.envelope(type, payload, timestampMs, sequence, sessionSequence));
    }
    const listeners = this.listeners;
    const stamped =
      envelope || (listeners !== undefined && listeners.size > 0) ? records.envelopeAt(records.length - 1) : undefined;
    if (bucket !== undefined) this.trimBucket(bucket);
    else this.trimRunless();
    this.records.compact();
    // A listener that unsubscribes (or subscribes) while being called must not disturb this fan-out;
    // an event nobody follows (most of them: runs waited on over REST) needs no copy of the set.
    if (stamped === undefined || listeners === undefined || listeners.size === 0) return stamped;
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
    const records = this.records;
    const events: EventEnvelope[] = [];
    for (let i = records.indexAfter(after); i < records.length && events.length < max; i += 1) {
      if (!records.isDropped(i)) events.push(records.envelopeAt(i));
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
    if (events.length === 0 && this.sessionSequence > previous && !this.retainsAfter(previous)) {
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
    // A bucket is in per-run order: find the first event after the cursor by binary search.
    let lo = 0;
    let hi = bucket.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sequenceOf(bucket.events.at(mid)) > after) hi = mid;
      else lo = mid + 1;
    }
    const events: EventEnvelope[] = [];
    for (let k = lo; k < bucket.events.length && events.length < limit; k += 1) {
      events.push(this.records.envelopeAt(this.records.indexOf(bucket.events.at(k))));
    }
    const last = events.at(-1)?.metadata.sequence;
    const more = last !== undefined && last < bucket.total - 1;
    return {
      events,
      retentionGap,
      nextAfter: more ? last : undefined,
      firstAvailableSequence: bucket.events.length > 0 ? this.sequenceOf(bucket.events.at(0)) : null,
      latestSequenceExclusive: bucket.total,
      hasMore: more,
    };
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
    for (const sessionSequence of bucket.events.toArray()) this.drop(sessionSequence);
    this.runs.delete(runId);
    this.records.compact();
  }

  /**
   * True for the `session_closed` that ends subscriptions: this session's own, never one restored from an
   * earlier life of the session (a shutdown or passivation before it was restored), which replays like any event.
   */
  ends(event: EventEnvelope): boolean {
    return event.type === 'session_closed' && event.metadata.session_sequence > this.restoredThrough;
  }

  /**
   * Restore retained events (from a snapshot's trace); retention limits apply to them too. They are kept
   * verbatim (any metadata, unknown keys included, reads back as it was); a session_sequence the log
   * already holds (a trace repeating one) is kept once.
   */
  restore(events: readonly EventEnvelope[]): void {
    const held = new Set<number>();
    for (let i = 0; i < this.records.length; i += 1)
      if (!this.records.isDropped(i)) held.add(this.records.sessionSequenceAt(i));
    for (const e of events) {
      const sessionSequence = e.metadata.session_sequence;
      if (held.has(sessionSequence)) continue;
      held.add(sessionSequence);
      this.restoredThrough = Math.max(this.restoredThrough, sessionSequence);
      const runId = e.metadata.run_id;
      if (runId === undefined) this.runless.push(sessionSequence);
      else {
        const bucket = this.bucket(runId);
        bucket.events.push(sessionSequence);
        bucket.total = Math.max(bucket.total, (e.metadata.sequence ?? 0) + 1);
        bucket.dropped = bucket.total - bucket.events.length;
      }
      this.records.pushVerbatim(e);
      this.sessionSequence = Math.max(this.sessionSequence, sessionSequence);
    }
    this.records.sort();
    for (const bucket of this.runs.values()) {
      bucket.events.reset(bucket.events.toArray().sort((a, b) => this.sequenceOf(a) - this.sequenceOf(b)));
      if (bucket.sizes) {
        // Sizes follow the per-run order the events were just sorted into.
        bucket.sizes = new PayloadSizes();
        for (const sessionSequence of bucket.events.toArray())
          bucket.sizes.push(payloadBytes(this.records.envelopeAt(this.records.indexOf(sessionSequence)).payload));
      }
      this.trimBucket(bucket);
    }
    this.runless.reset(this.runless.toArray().sort((a, b) => a - b));
    this.trimRunless();
    this.records.compact();
  }

  /** Every retained event in session order, capped to the newest `max` (snapshot trace). */
  retained(max: number): EventEnvelope[] {
    return this.trace(0, Number.POSITIVE_INFINITY, max);
  }

  /**
   * The trace: of the newest `max` retained events (what a snapshot stores as trace_events), up to `limit`
   * with session_sequence > after, in order. Walks back over at most `max` retained events, not the whole log.
   */
  trace(after: number, limit: number, max: number): EventEnvelope[] {
    const records = this.records;
    let start = records.length;
    for (let kept = 0; start > 0 && kept < max;) {
      start -= 1;
      if (!records.isDropped(start)) kept += 1;
    }
    const events: EventEnvelope[] = [];
    for (let i = Math.max(start, records.indexAfter(after)); i < records.length && events.length < limit; i += 1) {
      if (!records.isDropped(i)) events.push(records.envelopeAt(i));
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
      bucket = {
        origin: undefined,
        events: new SequenceRanges(),
        dropped: 0,
        total: 0,
        sizes: this.limits.maxEventBytesPerRun !== undefined ? new PayloadSizes() : undefined,
      };
      this.runs.set(runId, bucket);
    }
    return bucket;
  }

  private trimBucket(bucket: RunBucket): void {
    while (bucket.events.length > this.limits.maxEventsPerRun) this.dropOldest(bucket);
    const sizes = bucket.sizes;
    if (sizes === undefined) return;
    // The newest event stays even when it alone is over the byte bound: a run's last event is always readable.
    const maxBytes = this.limits.maxEventBytesPerRun ?? Number.POSITIVE_INFINITY;
    while (sizes.total > maxBytes && bucket.events.length > 1) this.dropOldest(bucket);
  }

  private dropOldest(bucket: RunBucket): void {
    const removed = bucket.events.shift();
    bucket.sizes?.shift();
    bucket.dropped += 1;
    if (removed !== undefined) this.drop(removed);
  }

  private trimRunless(): void {
    while (this.runless.length > this.limits.maxSessionEvents) {
      const removed = this.runless.shift();
      if (removed !== undefined) this.drop(removed);
    }
  }

  /** Drop the retained event with this session_sequence, releasing its payload at once. */
  private drop(sessionSequence: number): void {
    const index = this.records.indexOf(sessionSequence);
    if (index >= 0) this.records.drop(index);
  }

  /** The per-run sequence of a retained event. */
  private sequenceOf(sessionSequence: number): number {
    return this.records.sequenceAt(this.records.indexOf(sessionSequence));
  }

  /** True when an event with session_sequence > after is retained. */
  private retainsAfter(after: number): boolean {
    const records = this.records;
    for (let i = records.indexAfter(after); i < records.length; i += 1) if (!records.isDropped(i)) return true;
    return false;
  }
}
