import type { EventEnvelope } from '../../protocol/event-envelope.js';
import type { WsControl } from '../../protocol/ws-messages.js';
import type { SequenceGap } from './sequence-gap.js';

/**
 * What a subscription reads: a session's event log (SessionEventLog), or a bounded buffer fed by another
 * node's event stream (see src/runtime/events/session-stream-follow.ts).
 */
export interface SubscriptionSource {
  /** The session_sequence of the last event the source holds (where a live-only subscriber starts). */
  readonly lastSequence: number;
  /** Up to `max` held events with session_sequence > after, in order. */
  read(after: number, max: number): EventEnvelope[];
  /** The first hole after `after` in events read from the source (or in what follows them), if any. */
  firstGap(after: number, events: readonly EventEnvelope[]): SequenceGap | undefined;
  /**
   * Call the listener for every event appended from now on; returns its removal. For a `pulled` source,
   * only for events appended to the session while the subscriber's window is full and the source has
   * stopped taking events in (they count toward closing a stalled subscriber).
   */
  listen(listener: (event: EventEnvelope) => void): () => void;
  /**
   * True when events reach the source in batches, faster than a reader acknowledges frames (another
   * node's stream): the subscription never writes an event as it arrives but always pulls, as when
   * catching up; the source calls `EventSubscription.pull()` when it has new events.
   */
  readonly pulled?: boolean;
  /** The event after which the subscription ends with the session-closed code (default: any `session_closed`). */
  ends?(event: EventEnvelope): boolean;
}

/**
 * Where a subscription writes: one ordered frame channel with an end-to-end acknowledgement. Over
 * WebSocket, `requestAck` is a ping whose payload is the token and the client's pong carries it back;
 * because frames arrive in order, that pong proves the client has read every frame written before it.
 */
export interface SubscriptionTransport {
  /** Write one text frame; `event` is the envelope it serialises (absent for control frames), for framings that need its type and cursor (SSE). */
  send(frame: string, event?: EventEnvelope): void;
  /** Ask the peer to acknowledge every frame written so far; its answer is passed to `ack(token)`. */
  requestAck(token: number): void;
  /** Close the channel (the subscription has already stopped listening). */
  close(code: number, reason: string): void;
  /**
   * Bytes written but still queued in this process (not yet handed to the OS). For an honest peer this
   * never exceeds the unacknowledged bytes; it bounds memory even against a peer that acknowledges
   * frames it has not read.
   */
  queuedBytes(): number;
}

/** Bounds of one subscriber's unacknowledged frames. */
export interface SubscriptionLimits {
  /** Frames written but not yet acknowledged (limits.subscriberBufferEvents). */
  maxUnackedFrames: number;
  /** Bytes written but not yet acknowledged. */
  maxUnackedBytes: number;
}

/** Close codes a subscription uses. */
export interface SubscriptionCloseCodes {
  slowConsumer: number;
  sessionClosed: number;
}

interface Serialized {
  text: string;
  bytes: number;
}

interface PendingAck {
  token: number;
  frames: number;
  bytes: number;
}

const serializedCache = new WeakMap<EventEnvelope, Serialized>();

/** Serialise an envelope once, however many subscribers receive it. */
function serialize(event: EventEnvelope): Serialized {
  let cached = serializedCache.get(event);
  if (cached === undefined) {
    const text = JSON.stringify(event);
    cached = { text, bytes: Buffer.byteLength(text) };
    serializedCache.set(event, cached);
  }
  return cached;
}

/** Bytes of an envelope's frame (serialised once, then shared with every subscription that writes it). */
export function eventFrameBytes(event: EventEnvelope): number {
  return serialize(event).bytes;
}

/** Serialise a control frame (replay_gap, pong, error, cancel_result). */
export function controlFrameText(frame: WsControl): string {
  return JSON.stringify({ version: 1, type: frame.type, payload: frame.payload, metadata: {} });
}

/**
 * One subscriber of a session's event log. It first catches up from its cursor by pulling retained
 * events from the log, never more than the unacknowledged window at a time, so a replay of any length
 * costs the server one window per subscriber. Once caught up it follows live events in the same tick
 * (no gap, no duplicate). A live subscriber whose unacknowledged frames or bytes would exceed the
 * window has stopped reading (or reads too slowly): it is closed with the slow-consumer code and
 * resumes from its last cursor. So is one still catching up that acknowledges nothing while a whole
 * window of new events is appended. Memory per subscriber is therefore one window, whatever the
 * client does; the rest stays in the log (bounded by retention) or in the OS socket buffers. Every
 * hole in the sequence (events dropped by retention) is announced by a `replay_gap` control frame
 * before the first event after it. A `pulled` source (another node's stream) is always read this way,
 * never followed live: the subscriber is closed once a window of events is appended to the session
 * while its own window is full and unacknowledged.
 */
export class EventSubscription {
  private cursor = 0;
  private live = false;
  /** Events appended while catching up with a full window since the last acknowledgement. */
  private starved = 0;
  private pumping = false;
  private stopped = false;
  private unlisten: (() => void) | undefined;
  private sentFrames = 0;
  private sentBytes = 0;
  private ackedFrames = 0;
  private ackedBytes = 0;
  private requestedFrames = 0;
  private requestedBytes = 0;
  private nextToken = 1;
  private readonly pending: PendingAck[] = [];
  private readonly ackEveryFrames: number;
  private readonly ackEveryBytes: number;

  constructor(
    private readonly log: SubscriptionSource,
    private readonly transport: SubscriptionTransport,
    private readonly limits: SubscriptionLimits,
    private readonly codes: SubscriptionCloseCodes,
  ) {
    // Ask for an acknowledgement every quarter window, so a reading client always has room in flight.
    this.ackEveryFrames = Math.max(1, Math.floor(limits.maxUnackedFrames / 4));
    this.ackEveryBytes = Math.max(1, Math.floor(limits.maxUnackedBytes / 4));
  }

  /** Start from a cursor (replay events with session_sequence > after, then live) or live-only (undefined). */
  start(after: number | undefined): void {
    // A cursor beyond the log (e.g. from an earlier incarnation of the session id) has nothing to replay.
    this.cursor = after === undefined ? this.log.lastSequence : Math.min(after, this.log.lastSequence);
    this.unlisten = this.log.listen((event) => this.onAppend(event));
    if (after === undefined && this.log.pulled !== true) this.live = true;
    else this.pump();
  }

  /** A pulled source has new events: read them while the window has room. */
  pull(): void {
    if (!this.stopped && !this.live) this.pump();
  }

  /** The session_sequence of the last event written. */
  get lastSequence(): number {
    return this.cursor;
  }

  /** True once the subscriber follows live events (never for a pulled source). */
  get isLive(): boolean {
    return this.live;
  }

  /** Frames written but not yet acknowledged. */
  get unackedFrames(): number {
    return this.sentFrames - this.ackedFrames;
  }

  /** The peer acknowledged a token: every frame written before that request has been read. */
  ack(token: number): void {
    const index = this.pending.findIndex((p) => p.token === token);
    if (index < 0) return; // not ours (an unsolicited or repeated pong)
    const [entry] = this.pending.splice(0, index + 1).slice(-1);
    this.ackedFrames = Math.max(this.ackedFrames, entry.frames);
    this.ackedBytes = Math.max(this.ackedBytes, entry.bytes);
    this.starved = 0;
    if (!this.live) this.pump();
  }

  /**
   * Write a control frame in answer to the client. Answers share the window with events but get
   * one extra window of slack, so a client that only sends and never reads is still closed.
   */
  sendControl(frame: WsControl): void {
    if (this.stopped) return;
    const text = controlFrameText(frame);
    if (
      this.unackedFrames >= 2 * this.limits.maxUnackedFrames ||
      this.unackedBytes() >= 2 * this.limits.maxUnackedBytes
    ) {
      this.slowConsumer();
      return;
    }
    this.write(text, Buffer.byteLength(text));
  }

  /** Stop listening and writing (the socket closed). Idempotent. */
  stop(): void {
    this.stopped = true;
    this.unlisten?.();
    this.unlisten = undefined;
  }

  private unackedBytes(): number {
    return this.sentBytes - this.ackedBytes;
  }

  private windowFull(): boolean {
    return (
      this.unackedFrames >= this.limits.maxUnackedFrames ||
      Math.max(this.unackedBytes(), this.transport.queuedBytes()) >= this.limits.maxUnackedBytes
    );
  }

  /** Catch up from the log while the window has room; go live once nothing is left to read. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      this.catchUp();
    } finally {
      this.pumping = false;
    }
  }

  private catchUp(): void {
    while (!this.stopped && !this.live) {
      if (this.windowFull()) {
        this.requestAck(true);
        return;
      }
      const batch = this.log.read(this.cursor, Math.max(1, this.limits.maxUnackedFrames - this.unackedFrames));
      if (batch.length === 0) {
        const gap = this.log.firstGap(this.cursor, batch);
        if (gap) this.announceGap(gap.after, gap.firstAvailable, this.log.lastSequence);
        // A pulled source is read whenever it has events: the subscriber never follows it live.
        if (this.log.pulled !== true) this.goLive();
        return;
      }
      for (const event of batch) {
        this.deliver(event);
        if (this.stopped || this.windowFull()) break;
      }
    }
  }

  private goLive(): void {
    this.live = true;
  }

  /**
   * A new event in the log. Live: write it, or close a subscriber whose window is full. Catching up:
   * the pump reads it from the log in turn; but a subscriber that acknowledges nothing while a whole
   * window of new events is appended is as slow as a live one with a full window, and is closed too.
   */
  private onAppend(event: EventEnvelope): void {
    if (this.stopped || event.metadata.session_sequence <= this.cursor) return;
    if (!this.live) {
      if (!this.windowFull()) {
        if (!this.pumping) this.pump();
        return;
      }
      this.starved += 1;
      if (this.starved >= this.limits.maxUnackedFrames) this.slowConsumer();
      return;
    }
    if (this.windowFull()) {
      this.slowConsumer();
      return;
    }
    this.deliver(event);
  }

  private deliver(event: EventEnvelope): void {
    const sequence = event.metadata.session_sequence;
    if (sequence > this.cursor + 1) this.announceGap(this.cursor, sequence, sequence - 1);
    const { text, bytes } = serialize(event);
    this.cursor = sequence;
    this.write(text, bytes, event);
    if (this.log.ends ? this.log.ends(event) : event.type === 'session_closed')
      this.end(this.codes.sessionClosed, 'session closed');
  }

  private announceGap(after: number, firstAvailable: number, cursorAfter: number): void {
    const text = controlFrameText({
      type: 'replay_gap',
      payload: { requested_after: after, first_available: firstAvailable },
    });
    this.cursor = cursorAfter;
    this.write(text, Buffer.byteLength(text));
  }

  private write(text: string, bytes: number, event?: EventEnvelope): void {
    this.sentFrames += 1;
    this.sentBytes += bytes;
    this.transport.send(text, event);
    this.requestAck(false);
  }

  /** Request an acknowledgement when a quarter window went out since the last request (or, forced, when anything did). */
  private requestAck(force: boolean): void {
    const frames = this.sentFrames - this.requestedFrames;
    const bytes = this.sentBytes - this.requestedBytes;
    if (frames === 0 || (!force && frames < this.ackEveryFrames && bytes < this.ackEveryBytes)) return;
    const token = this.nextToken;
    this.nextToken += 1;
    this.requestedFrames = this.sentFrames;
    this.requestedBytes = this.sentBytes;
    this.pending.push({ token, frames: this.sentFrames, bytes: this.sentBytes });
    this.transport.requestAck(token);
  }

  private slowConsumer(): void {
    // Close reasons are capped at 123 bytes: name the bound that was reached.
    const pendingBytes = Math.max(this.unackedBytes(), this.transport.queuedBytes());
    const detail =
      pendingBytes >= this.limits.maxUnackedBytes
        ? `${pendingBytes} bytes unacknowledged (max ${this.limits.maxUnackedBytes})`
        : `${this.unackedFrames} frames unacknowledged (limits.subscriberBufferEvents)`;
    this.end(this.codes.slowConsumer, `slow consumer: ${detail}; resume from your last session_sequence`);
  }

  private end(code: number, reason: string): void {
    if (this.stopped) return;
    this.stop();
    this.transport.close(code, reason);
  }
}
