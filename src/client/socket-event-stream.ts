import { WS_CLOSE } from '../protocol/ws-messages.js';
import { A3sError, toA3sError } from './a3s-error.js';
import { toAgentEvent, type AgentEvent, type AgentEventInput, type ReplayGap } from './agent-event.js';
import { EventStream } from './event-stream.js';
import { messageText, WS_OPEN, type WebSocketConstructor, type WebSocketLike } from './websocket-like.js';

/** How a socket stream reconnects after a dropped socket or a 4008 (slow consumer) close. */
export interface ReconnectOptions {
  /** Consecutive attempts without a new event before the stream fails with NETWORK_ERROR (default 10). */
  maxAttempts?: number;
  /** First delay (default 100 ms); it doubles on every attempt. */
  initialDelayMs?: number;
  /** Largest delay (default 5000 ms). */
  maxDelayMs?: number;
}

export type { ReplayGap } from './agent-event.js';

/** Options of a socket stream. */
export interface SocketEventStreamOptions {
  /** The server's base URL (http(s); the socket uses ws(s)). */
  baseUrl: string;
  token?: string;
  /** The constructor, or its pending import (the stream connects once it is there, or fails with its error). */
  WebSocket: WebSocketConstructor | Promise<WebSocketConstructor>;
  sessionId: string;
  /** The tenant whose session it is (admins only). */
  tenantId?: string;
  /** Replay events with session_sequence > after, then follow; undefined: live events only. */
  after?: number;
  /** Only this run's events. */
  runId?: string;
  /** End after this run's `agent_end` (or an `error` that no `agent_end` follows: NODE_LOST). */
  untilRunEnd?: boolean;
  /**
   * With untilRunEnd: awaited after the run's last event is delivered and before the stream ends (null), so a
   * reader that sees the end can start the next run at once (the session waits for the run to release it).
   */
  settle?: () => Promise<void>;
  reconnect?: ReconnectOptions;
  /** Called for each replay gap (it is also delivered as an AgentEvent of type `replay_gap`). */
  onReplayGap?: (gap: ReplayGap) => void;
  /** Called for control frames other than replay_gap (pong, error, cancel_result, ...). */
  onControl?: (frame: { type: string; payload: Record<string, unknown> }) => void;
  /** Called before each reconnect: the close code and reason of the socket that went away, and the cursor it resumes from. */
  onReconnect?: (info: { code: number; reason: string; attempt: number; after: number | undefined }) => void;
  /** Events buffered unread before the socket is closed until the reader catches up (default 10000). */
  maxBufferedEvents?: number;
}

/** The events WebSocket URL of a session from a cursor. */
export function eventsSocketUrl(
  baseUrl: string,
  sessionId: string,
  after: number | undefined,
  tenantId?: string,
): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/v1/sessions/${encodeURIComponent(sessionId)}/events`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (after !== undefined) url.searchParams.set('after', String(after));
  if (tenantId !== undefined) url.searchParams.set('tenantId', tenantId);
  return url.toString();
}

/** Close codes after which reconnecting cannot help: the stream fails with the matching typed error. */
const FATAL_CLOSES: Record<number, string> = {
  [WS_CLOSE.unauthorized]: 'UNAUTHORIZED',
  [WS_CLOSE.forbidden]: 'FORBIDDEN',
  [WS_CLOSE.notFound]: 'SESSION_NOT_FOUND',
  [WS_CLOSE.policy]: 'VALIDATION_ERROR',
};

/**
 * The session's events over `GET /v1/sessions/:id/events` (WebSocket). It keeps the last session_sequence
 * it saw and, after a dropped socket or a close it can recover from (4008 slow consumer, 1001 shutdown,
 * 1006 abnormal, ...), reconnects with `?after=<that sequence>` after a bounded exponential backoff, and
 * drops anything at or below the cursor: no event is delivered twice and none is skipped (a hole that
 * retention made is announced as a `replay_gap` event). 4001/4003/4004/1008 fail the stream with
 * UnauthorizedError/ForbiddenError/SessionNotFoundError/ValidationError; 4010 (session closed) ends it.
 */
export class SocketEventStream extends EventStream {
  private socket: WebSocketLike | undefined;
  private cursor: number | undefined;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private paused = false;
  private reconnects = 0;
  private readonly maxBuffered: number;
  private WebSocket: WebSocketConstructor | undefined;

  constructor(private readonly options: SocketEventStreamOptions) {
    super(options.runId);
    this.cursor = options.after;
    this.maxBuffered = options.maxBufferedEvents ?? 10_000;
    const given = options.WebSocket;
    if (typeof given === 'function') {
      this.WebSocket = given;
      this.connect();
    } else
      given.then(
        (WebSocket) => {
          this.WebSocket = WebSocket;
          this.connect();
        },
        (error: unknown) =>
          this.fail(error instanceof A3sError ? error : toA3sError('NETWORK_ERROR', String(error), 0)),
      );
  }

  /** The last session_sequence received (the resume cursor), undefined before the first event of a live-only stream. */
  get lastSequence(): number | undefined {
    return this.cursor;
  }

  /** How many times the stream has reconnected. */
  get reconnectCount(): number {
    return this.reconnects;
  }

  protected stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.closeSocket(1000, 'client closed the stream');
  }

  protected override afterRead(): void {
    if (this.paused && this.buffered <= this.maxBuffered / 2) {
      this.paused = false;
      this.connect();
    }
  }

  private closeSocket(code: number, reason: string): void {
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return;
    socket.onmessage = null;
    socket.onclose = null;
    socket.onerror = () => {};
    try {
      socket.close(code, reason);
    } catch {
      // already closing
    }
  }

  private connect(): void {
    const WebSocket = this.WebSocket;
    if (this.stopped || this.ended || WebSocket === undefined) return;
    const socket = new WebSocket(
      eventsSocketUrl(this.options.baseUrl, this.options.sessionId, this.cursor, this.options.tenantId),
    );
    this.socket = socket;
    socket.onopen = () => {
      if (this.options.token !== undefined && socket.readyState === WS_OPEN)
        socket.send(JSON.stringify({ type: 'auth', token: this.options.token }));
    };
    socket.onmessage = (message) => this.onFrame(message.data);
    socket.onerror = () => {
      // The close that follows decides.
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.onClose(event.code, event.reason);
    };
  }

  private onFrame(data: unknown): void {
    let frame: { type?: unknown; payload?: unknown; metadata?: unknown };
    try {
      frame = JSON.parse(messageText(data)) as typeof frame;
    } catch {
      return;
    }
    if (typeof frame.type !== 'string' || typeof frame.payload !== 'object' || frame.payload === null) return;
    const payload = frame.payload as Record<string, unknown>;
    const metadata = (typeof frame.metadata === 'object' && frame.metadata !== null ? frame.metadata : {}) as Record<
      string,
      unknown
    >;
    const sequence = metadata.session_sequence;
    if (typeof sequence !== 'number') {
      this.onControlFrame(frame.type, payload);
      return;
    }
    // At or below the cursor: already delivered before a reconnect.
    if (this.cursor !== undefined && sequence <= this.cursor) return;
    this.cursor = sequence;
    this.attempts = 0;
    const runId = this.options.runId;
    if (runId !== undefined && metadata.run_id !== runId) return;
    const event = this.read({ type: frame.type, payload, metadata });
    if (event === undefined) return;
    this.push(event);
    if (this.options.untilRunEnd && this.endsRun(event)) {
      this.stopped = true;
      this.closeSocket(1000, 'run ended');
      const settle = this.options.settle?.() ?? Promise.resolve();
      void settle
        .catch(() => undefined)
        .then(() => {
          this.finish();
          this.stop();
        });
      return;
    }
    if (this.buffered > this.maxBuffered && !this.paused) {
      // The reader is behind: stop reading the server until it catches up, then resume from the cursor.
      this.paused = true;
      this.closeSocket(1000, 'client buffer full; resuming later from the cursor');
    }
  }

  /** The frame as an AgentEvent; a frame that is not the documented shape fails the stream (PROTOCOL_ERROR). */
  private read(input: AgentEventInput): AgentEvent | undefined {
    try {
      return toAgentEvent(input);
    } catch (error) {
      this.failWith(error as A3sError);
      return undefined;
    }
  }

  private endsRun(event: AgentEvent): boolean {
    return event.type === 'agent_end' || (event.type === 'error' && event.payload.code === 'NODE_LOST');
  }

  private onControlFrame(type: string, payload: Record<string, unknown>): void {
    if (type === 'replay_gap') {
      const event = this.read({ type, payload });
      if (event?.type !== 'replay_gap') return;
      this.options.onReplayGap?.(event.payload);
      this.push(event);
      return;
    }
    this.options.onControl?.({ type, payload });
  }

  private onClose(code: number, reason: string): void {
    if (this.stopped || this.ended || this.paused) return;
    if (code === WS_CLOSE.sessionClosed) {
      this.finish();
      this.stop();
      return;
    }
    const fatal = FATAL_CLOSES[code];
    if (fatal !== undefined) {
      this.failWith(toA3sError(fatal, `events socket closed with ${code}: ${reason || fatal}`, 0, { closeCode: code }));
      return;
    }
    const max = this.options.reconnect?.maxAttempts ?? 10;
    if (this.attempts >= max) {
      this.failWith(
        toA3sError(
          'NETWORK_ERROR',
          `events socket closed (${code}${reason ? `: ${reason}` : ''}) and ${max} reconnect attempts brought no event`,
          0,
          { closeCode: code, attempts: max },
        ),
      );
      return;
    }
    const initial = this.options.reconnect?.initialDelayMs ?? 100;
    const delay = Math.min(this.options.reconnect?.maxDelayMs ?? 5000, initial * 2 ** this.attempts);
    this.attempts += 1;
    this.reconnects += 1;
    this.options.onReconnect?.({ code, reason, attempt: this.attempts, after: this.cursor });
    this.timer = setTimeout(() => this.connect(), delay);
  }

  private failWith(error: A3sError): void {
    this.fail(error);
    this.stop();
  }
}
