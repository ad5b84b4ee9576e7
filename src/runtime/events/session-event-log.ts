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

/** A live listener on a session's events; returns false to ask to be removed. */
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

/** What a subscriber gets when it attaches: retained events after its cursor, and whether some were lost. */
export interface ReplayResult {
  events: EventEnvelope[];
  gap: { firstAvailable: number } | undefined;
}

/** A page of one run's events. */
export interface RunEventPage {
  events: EventEnvelope[];
  retentionGap: { firstAvailableSequence: number } | undefined;
  nextAfter: number | undefined;
}

/**
 * The event log of one session: assigns `session_sequence` (from 1) and per-run `sequence` (from 0),
 * never reusing either, keeps each run's events within retention limits (FIFO), and fans new events
 * out to live listeners synchronously so replay-then-follow has no gaps or duplicates.
 */
export class SessionEventLog {
  private sessionSequence: number;
  private readonly runs = new Map<string, RunBucket>();
  private readonly runless: EventEnvelope[] = [];
  private readonly listeners = new Set<EventListener>();
  private droppedThrough = 0;

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

  /** Append an event, stamping sequences; returns the stamped envelope. */
  append(event: UnstampedEvent): EventEnvelope {
    this.sessionSequence += 1;
    const runId = event.metadata.run_id;
    let stamped: EventEnvelope;
    if (runId !== undefined) {
      const bucket = this.bucket(runId);
      stamped = { ...event, metadata: { ...event.metadata, sequence: bucket.total, session_sequence: this.sessionSequence } };
      bucket.total += 1;
      bucket.events.push(stamped);
      if (bucket.events.length > this.limits.maxEventsPerRun) {
        const removed = bucket.events.shift();
        bucket.dropped += 1;
        if (removed) this.noteDropped(removed);
      }
    } else {
      stamped = { ...event, metadata: { ...event.metadata, session_sequence: this.sessionSequence } };
      this.runless.push(stamped);
      if (this.runless.length > this.limits.maxSessionEvents) {
        const removed = this.runless.shift();
        if (removed) this.noteDropped(removed);
      }
    }
    for (const listener of this.listeners) listener(stamped);
    return stamped;
  }

  /** Retained events with session_sequence > after, then (same tick) a live listener; returns an unsubscribe. */
  subscribe(after: number | undefined, listener: EventListener): { replay: ReplayResult; unsubscribe: () => void } {
    const replay = after === undefined ? { events: [], gap: undefined } : this.replay(after);
    this.listeners.add(listener);
    return { replay, unsubscribe: () => this.listeners.delete(listener) };
  }

  /** Retained events with session_sequence > after, in order. */
  replay(after: number): ReplayResult {
    const events: EventEnvelope[] = [];
    for (const bucket of this.runs.values()) for (const e of bucket.events) if (e.metadata.session_sequence > after) events.push(e);
    for (const e of this.runless) if (e.metadata.session_sequence > after) events.push(e);
    events.sort((a, b) => a.metadata.session_sequence - b.metadata.session_sequence);
    const gap = after < this.droppedThrough ? { firstAvailable: events[0]?.metadata.session_sequence ?? this.sessionSequence + 1 } : undefined;
    return { events, gap };
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
    for (const e of bucket.events) this.noteDropped(e);
    this.runs.delete(runId);
  }

  /** Restore a run's retained events (from a snapshot's trace). */
  restore(events: EventEnvelope[]): void {
    for (const e of events) {
      const runId = e.metadata.run_id;
      if (runId === undefined) this.runless.push(e);
      else {
        const bucket = this.bucket(runId);
        bucket.events.push(e);
        bucket.total = Math.max(bucket.total, (e.metadata.sequence ?? 0) + 1);
        bucket.dropped = bucket.total - bucket.events.length;
      }
      this.sessionSequence = Math.max(this.sessionSequence, e.metadata.session_sequence);
    }
  }

  /** Every retained event in session order, capped to the newest `max` (snapshot trace). */
  retained(max: number): EventEnvelope[] {
    const all = this.replay(0).events;
    return max >= all.length ? all : all.slice(all.length - max);
  }

  /** Number of live listeners. */
  get listenerCount(): number {
    return this.listeners.size;
  }

  private bucket(runId: string): RunBucket {
    let bucket = this.runs.get(runId);
    if (!bucket) {
      bucket = { events: [], dropped: 0, total: 0 };
      this.runs.set(runId, bucket);
    }
    return bucket;
  }

  private noteDropped(event: EventEnvelope): void {
    this.droppedThrough = Math.max(this.droppedThrough, event.metadata.session_sequence);
  }
}
