import WebSocket from 'ws';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';

/** A control frame of the event stream (replay_gap, pong, error, cancel_result): no session_sequence. */
export interface ControlFrame {
  version: 1;
  type: string;
  payload: Record<string, unknown>;
  metadata: Record<string, never>;
}

/** How a socket closed. */
export interface CloseInfo {
  code: number;
  reason: string;
}

/**
 * A test WebSocket subscriber that records frames and lets a test wait for them. `frames` holds every
 * frame in arrival order, control frames included (their metadata is empty); `events` only the
 * EventEnvelopeV1 frames that carry a session_sequence, `controls` only the control frames.
 */
export interface EventSubscriber {
  socket: WebSocket;
  frames: EventEnvelope[];
  readonly events: EventEnvelope[];
  readonly controls: ControlFrame[];
  /** The session_sequence of every event frame, in arrival order. */
  sequences(): number[];
  /** The last session_sequence received (the cursor to resume from), or undefined. */
  cursor(): number | undefined;
  closed: Promise<CloseInfo>;
  /** Resolve when a frame matching the predicate has arrived (checks frames already received too). */
  waitFor(predicate: (e: EventEnvelope) => boolean, timeoutMs?: number): Promise<EventEnvelope>;
  /** Resolve with the close code and reason, or reject after the timeout. */
  waitClosed(timeoutMs?: number): Promise<CloseInfo>;
  send(message: unknown): void;
  /** Send raw text (for malformed messages). */
  sendRaw(text: string): void;
  /** Stop reading from the TCP socket: the client falls silent (no frames, no pongs). */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Options of subscribe. */
export interface SubscribeOptions {
  after?: number;
  token?: string;
  /** The tenant whose session it is (`?tenantId=`, for an admin addressing another tenant's session). */
  tenantId?: string;
  headers?: Record<string, string>;
  waitOpen?: boolean;
  /** Pause reading as the socket opens, before the first frame is read (a client that never reads). */
  pauseOnOpen?: boolean;
}

/** Open GET /v1/sessions/:id/events as a WebSocket. */
export async function subscribe(
  baseUrl: string,
  sessionId: string,
  options: SubscribeOptions = {},
): Promise<EventSubscriber> {
  const params = [
    ...(options.after !== undefined ? [`after=${options.after}`] : []),
    ...(options.tenantId !== undefined ? [`tenantId=${encodeURIComponent(options.tenantId)}`] : []),
  ];
  const query = params.length > 0 ? `?${params.join('&')}` : '';
  const headers = {
    ...(options.headers ?? {}),
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
  };
  const socket = new WebSocket(
    `${baseUrl.replace(/^http/, 'ws')}/v1/sessions/${encodeURIComponent(sessionId)}/events${query}`,
    { headers },
  );
  // Registered first, so it runs before anything else reacts to 'open' and before the first read.
  if (options.pauseOnOpen) socket.once('open', () => socket.pause());
  const frames: EventEnvelope[] = [];
  const waiters: { predicate: (e: EventEnvelope) => boolean; resolve: (e: EventEnvelope) => void }[] = [];
  socket.on('message', (data) => {
    const event = JSON.parse(data.toString()) as EventEnvelope;
    frames.push(event);
    for (const w of [...waiters]) {
      if (w.predicate(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  });
  // A refused upgrade or a reset connection ends as a close too; the error itself is not the test's subject.
  socket.on('error', () => undefined);
  const closed = new Promise<CloseInfo>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  if (options.waitOpen !== false) {
    await new Promise<void>((resolve) => {
      socket.once('open', () => resolve());
      socket.once('close', () => resolve());
    });
  }
  const isEvent = (f: EventEnvelope): boolean => typeof f.metadata.session_sequence === 'number';
  return {
    socket,
    frames,
    get events() {
      return frames.filter(isEvent);
    },
    get controls() {
      return frames.filter((f) => !isEvent(f)) as unknown as ControlFrame[];
    },
    sequences() {
      return frames.filter(isEvent).map((f) => f.metadata.session_sequence);
    },
    cursor() {
      return frames.filter(isEvent).at(-1)?.metadata.session_sequence;
    },
    closed,
    waitFor(predicate, timeoutMs = 10_000) {
      const found = frames.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for a frame; got ${frames.map((f) => f.type).join(', ')}`)),
          timeoutMs,
        );
        waiters.push({ predicate, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    waitClosed(timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`socket not closed within ${timeoutMs} ms; got ${frames.map((f) => f.type).join(', ')}`)),
          timeoutMs,
        );
        void closed.then((info) => {
          clearTimeout(timer);
          resolve(info);
        });
      });
    },
    send(message) {
      socket.send(JSON.stringify(message));
    },
    sendRaw(text) {
      socket.send(text);
    },
    pause() {
      socket.pause();
    },
    resume() {
      socket.resume();
    },
    close() {
      socket.close();
    },
  };
}
