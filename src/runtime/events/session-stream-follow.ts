import type { EventEnvelope } from '../../protocol/event-envelope.js';
import { WS_CLOSE } from '../../protocol/ws-messages.js';
import {
  EventSubscription,
  eventFrameBytes,
  type SubscriptionLimits,
  type SubscriptionSource,
  type SubscriptionTransport,
} from './event-subscription.js';
import type { SequenceGap } from './sequence-gap.js';
import type { SharedEventStream } from '../ports/session-ownership.js';
import type { SessionKey } from '../../stores/session-key.js';

/** The least number of unsent bytes a stream follower's socket may hold before it is closed as a slow consumer. */
const MIN_QUEUED_BYTES = 8 * 1024 * 1024;

/** The buffer of events read from the stream but not yet written holds this fraction of a window (frames and bytes). */
const BUFFER_WINDOW_FRACTION = 4;

// The buffer is compacted once this many released events sit at its head (and they are half of it).
const COMPACT_AFTER = 1024;

/** Options of a stream follower. */
export interface StreamFollowOptions {
  /** The subscriber's window (limits.subscriberBufferEvents frames and its byte bound); the buffer holds a quarter of one more. */
  limits: SubscriptionLimits;
  /** A follower still behind when the session closes gets this long to read the rest, then 4010 (ms). */
  closedDrainMs: number;
}

/** The event that ends a follow: passivation and shutdown hand the session to another node, and the stream goes on. */
function endsFollow(event: EventEnvelope): boolean {
  return event.type === 'session_closed' && event.payload.reason === 'closed';
}

/**
 * A WebSocket subscriber of a session another node owns, fed by the session's shared (Redis) stream. The
 * frames go through an EventSubscription, so a follower has the same pong-acknowledged window as a local
 * subscriber (limits.subscriberBufferEvents frames and the byte bound), the same `replay_gap` frames
 * before a hole (a cursor older than the stream keeps, or entries trimmed while following), and the same
 * 4008 when it stops reading. The stream hands events over in batches, so this is a pulled source: events
 * read from the stream wait in a buffer of at most a quarter window (frames and bytes) until the window
 * has room; when the buffer is full, reading the stream pauses (the rest stays in Redis, bounded by its
 * MAXLEN) and resumes from the buffer's end once the subscriber has taken half of it, so order is kept
 * without gaps or duplicates. While paused, only events appended to the stream after the pause are
 * watched: a subscriber that acknowledges nothing while a window of them is appended is closed with 4008,
 * like a local subscriber that stalls while catching up. Unsent bytes in the socket beyond the byte bound
 * close it too (a safety net against a peer that acknowledges what it has not read).
 */
export class SessionStreamFollow implements SubscriptionSource {
  readonly pulled = true;
  readonly subscription: EventSubscription;
  /** Events read from the stream, in order; those before `first` (or up to the subscription's cursor) are released. */
  private buffer: EventEnvelope[] = [];
  private first = 0;
  private heldBytes = 0;
  /** session_sequence of the last event read from the stream (or the starting cursor). */
  private end: number;
  private listener: ((event: EventEnvelope) => void) | undefined;
  /** Reading events into the buffer; undefined while paused. */
  private reading: AbortController | undefined;
  /** While paused: watching events appended after the pause. */
  private watching: AbortController | undefined;
  /** Bumped on every pause, resume and stop, so a late answer of an earlier one is ignored. */
  private generation = 0;
  private resumeCheck = false;
  private drainTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly maxQueuedBytes: number;
  private readonly bufferFrames: number;
  private readonly bufferBytes: number;

  constructor(
    private readonly stream: SharedEventStream,
    private readonly sessionId: SessionKey,
    private readonly after: number | undefined,
    start: number,
    private readonly transport: SubscriptionTransport,
    private readonly options: StreamFollowOptions,
  ) {
    this.end = start;
    this.maxQueuedBytes = Math.max(MIN_QUEUED_BYTES, options.limits.maxUnackedBytes);
    this.bufferFrames = Math.max(1, Math.floor(options.limits.maxUnackedFrames / BUFFER_WINDOW_FRACTION));
    this.bufferBytes = Math.max(1, Math.floor(options.limits.maxUnackedBytes / BUFFER_WINDOW_FRACTION));
    const guarded: SubscriptionTransport = {
      send: (frame, event) => {
        const queued = transport.queuedBytes();
        if (queued > this.maxQueuedBytes) {
          transport.close(
            WS_CLOSE.slowConsumer,
            `slow consumer: ${queued} bytes unsent (max ${this.maxQueuedBytes}); resume from your last session_sequence`,
          );
          return;
        }
        transport.send(frame, event);
      },
      requestAck: (token) => transport.requestAck(token),
      close: (code, reason) => transport.close(code, reason),
      queuedBytes: () => transport.queuedBytes(),
    };
    this.subscription = new EventSubscription(this, guarded, options.limits, {
      slowConsumer: WS_CLOSE.slowConsumer,
      sessionClosed: WS_CLOSE.sessionClosed,
    });
  }

  /** Start writing (replay from the cursor, or live-only) and reading the stream. */
  start(): void {
    this.subscription.start(this.after);
    if (!this.stopped) this.readFrom(this.end);
  }

  /** Stop reading the stream and writing (the socket closed). Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.generation += 1;
    this.reading?.abort();
    this.watching?.abort();
    this.reading = undefined;
    this.watching = undefined;
    clearTimeout(this.drainTimer);
    this.buffer = [];
    this.first = 0;
    this.heldBytes = 0;
    this.subscription.stop();
  }

  // SubscriptionSource

  get lastSequence(): number {
    return this.end;
  }

  read(after: number, max: number): EventEnvelope[] {
    this.release(after);
    // Once the subscription has written what it takes now, reading the stream may resume.
    if (this.reading === undefined && !this.resumeCheck) {
      this.resumeCheck = true;
      queueMicrotask(() => {
        this.resumeCheck = false;
        this.maybeResume();
      });
    }
    return this.buffer.slice(this.first, this.first + max);
  }

  firstGap(): SequenceGap | undefined {
    // Holes show as jumps between the events read; the subscription announces them as it writes.
    return undefined;
  }

  listen(listener: (event: EventEnvelope) => void): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }

  ends(event: EventEnvelope): boolean {
    return endsFollow(event);
  }

  // Reading the stream

  private readFrom(after: number): void {
    const controller = new AbortController();
    this.reading = controller;
    this.stream
      .follow(
        this.sessionId,
        after,
        (event) => {
          if (this.reading === controller) this.onRead(event);
        },
        controller.signal,
      )
      .catch(() => this.fail());
  }

  private onRead(event: EventEnvelope): void {
    const sequence = event.metadata.session_sequence;
    if (sequence <= this.end) return;
    this.end = sequence;
    this.buffer.push(event);
    this.heldBytes += eventFrameBytes(event);
    this.subscription.pull();
    if (this.stopped) return;
    this.release(this.subscription.lastSequence);
    // The session closed while the subscriber is behind: it gets a while to read the rest.
    if (endsFollow(event) && this.subscription.lastSequence < sequence) this.startDrain();
    if (this.held() >= this.bufferFrames || this.heldBytes >= this.bufferBytes) this.pause();
  }

  /** The buffer is full (so is the subscriber's window): stop reading, and watch what is appended from now on. */
  private pause(): void {
    this.generation += 1;
    const generation = this.generation;
    this.reading?.abort();
    this.reading = undefined;
    this.stream.lastSequence(this.sessionId).then(
      (head) => {
        if (generation !== this.generation || this.stopped) return;
        const controller = new AbortController();
        this.watching = controller;
        this.stream
          .follow(
            this.sessionId,
            Math.max(head ?? 0, this.end),
            (event) => {
              if (this.watching !== controller) return;
              if (endsFollow(event)) this.startDrain();
              // Counted by the subscription: a window of these without an acknowledgement closes it with 4008.
              this.listener?.(event);
            },
            controller.signal,
          )
          .catch(() => this.fail());
      },
      () => {
        if (generation === this.generation) this.fail();
      },
    );
  }

  private maybeResume(): void {
    if (this.stopped || this.reading !== undefined) return;
    this.release(this.subscription.lastSequence);
    if (this.held() * 2 > this.bufferFrames || this.heldBytes * 2 > this.bufferBytes) return;
    this.generation += 1;
    this.watching?.abort();
    this.watching = undefined;
    this.readFrom(this.end);
  }

  /** Drop the buffered events the subscription has written (session_sequence <= cursor). */
  private release(cursor: number): void {
    while (this.first < this.buffer.length && this.buffer[this.first].metadata.session_sequence <= cursor) {
      this.heldBytes -= eventFrameBytes(this.buffer[this.first]);
      this.first += 1;
    }
    if (this.first === this.buffer.length) {
      this.buffer = [];
      this.first = 0;
    } else if (this.first >= COMPACT_AFTER && this.first * 2 >= this.buffer.length) {
      this.buffer = this.buffer.slice(this.first);
      this.first = 0;
    }
  }

  private held(): number {
    return this.buffer.length - this.first;
  }

  private startDrain(): void {
    if (this.drainTimer !== undefined || this.stopped) return;
    this.drainTimer = setTimeout(
      () => this.transport.close(WS_CLOSE.sessionClosed, 'session closed'),
      this.options.closedDrainMs,
    );
    this.drainTimer.unref();
  }

  private fail(): void {
    if (!this.stopped)
      this.transport.close(WS_CLOSE.goingAway, 'event stream unavailable; reconnect with your last session_sequence');
  }
}

/**
 * Subscribe to a session another node owns, through its shared stream, from a cursor (`after`) or live-only
 * (from the stream's newest event). Resolves with the follow, not started: the caller wires acknowledgements
 * (pongs to `subscription.ack`) and control answers (`subscription.sendControl`), then calls `start()`.
 */
export async function followSessionStream(
  stream: SharedEventStream,
  sessionId: SessionKey,
  after: number | undefined,
  transport: SubscriptionTransport,
  options: StreamFollowOptions,
): Promise<SessionStreamFollow> {
  const start = after ?? (await stream.lastSequence(sessionId)) ?? 0;
  return new SessionStreamFollow(stream, sessionId, after, start, transport, options);
}
