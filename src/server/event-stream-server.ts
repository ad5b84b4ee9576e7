import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CodeError } from '../errors.js';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import { EventStreamQuerySchema } from '../protocol/auth-ticket.js';
import { SessionParamsSchema } from '../protocol/http.js';
import { WS_CLOSE } from '../protocol/ws-messages.js';
import { addressedCaller } from '../runtime/live-sessions/session-address.js';
import type { SubscriptionLimits, SubscriptionTransport } from '../runtime/events/event-subscription.js';
import { hasScope, type Caller } from '../runtime/ports/caller.js';
import type { EventTickets } from './event-tickets.js';
import { ensureLocalOrForward, validationError } from './route.js';
import type { ServerContext } from './server-context.js';
import { sessionKey } from '../stores/session-key.js';
import { openSessionSubscription, type OpenedSubscription } from './session-subscription.js';

/** A stream that was ended (slow reader, shutdown) but whose peer does not take the rest is cut off after this long. */
export const SSE_END_GRACE_MS = 1000;

/** True when a request without an upgrade asks for Server-Sent Events (Accept: text/event-stream). */
export function wantsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.toLowerCase().includes('text/event-stream');
}

// An event's SSE frame, built once however many readers receive it.
const frameCache = new WeakMap<EventEnvelope, string>();

/** The SSE frame of an event: `id: <session_sequence>`, `event: <type>`, `data: <envelope JSON>` (JSON has no raw newlines). */
export function sseEventFrame(event: EventEnvelope, json: string): string {
  let frame = frameCache.get(event);
  if (frame === undefined) {
    frame = `id: ${event.metadata.session_sequence}\nevent: ${event.type}\ndata: ${json}\n\n`;
    frameCache.set(event, frame);
  }
  return frame;
}

/** The SSE frame of a control frame (replay_gap): no `id:`, so it never moves the reader's Last-Event-ID. */
export function sseControlFrame(json: string): string {
  const type = (JSON.parse(json) as { type: string }).type;
  return `event: ${type}\ndata: ${json}\n\n`;
}

/**
 * The SSE side of a subscription: frames are written to the HTTP response in order, and a frame counts as
 * read once Node has handed it to the kernel (a write callback): SSE has no end-to-end acknowledgement, so
 * the window bounds what waits in this process, and a reader that stops reading fills the kernel's socket
 * buffers, then the window, and is ended like a slow WebSocket (a `: close 4008 ...` comment, then the end
 * of the response); it resumes with Last-Event-ID.
 */
class SseTransport implements SubscriptionTransport {
  private written = 0;
  private flushed = 0;
  private readonly pendingAcks: { target: number; token: number }[] = [];
  private ended = false;
  private corked = false;
  /** Where acknowledgements go (the subscription, once attached). */
  onAck: (token: number) => void = () => {};
  /** Called once when the stream ends, whoever ends it. */
  onEnd: () => void = () => {};

  constructor(private readonly res: ServerResponse) {}

  private readonly afterWrite = () => {
    this.flushed += 1;
    while (this.pendingAcks.length > 0 && this.pendingAcks[0].target <= this.flushed) {
      const entry = this.pendingAcks.shift();
      if (entry) this.onAck(entry.token);
    }
  };

  send(frame: string, event?: EventEnvelope): void {
    this.writeRaw(event ? sseEventFrame(event, frame) : sseControlFrame(frame));
  }

  /** Write raw SSE text (frames, comments), batched per tick. */
  writeRaw(text: string): void {
    if (this.ended || this.res.destroyed) return;
    // Frames written in one tick (a replay batch) go out in one chunk.
    if (!this.corked && this.res.socket) {
      this.corked = true;
      this.res.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.res.socket?.uncork();
      });
    }
    this.written += 1;
    this.res.write(text, this.afterWrite);
  }

  requestAck(token: number): void {
    if (this.flushed >= this.written) setImmediate(() => this.onAck(token));
    else this.pendingAcks.push({ target: this.written, token });
  }

  close(code: number, reason: string): void {
    if (this.ended) return;
    this.writeRaw(`: close ${code} ${reason.replace(/[\r\n]+/g, ' ')}\n\n`);
    this.ended = true;
    this.onEnd();
    if (this.res.destroyed) return;
    this.res.end();
    // A reader that stopped reading never takes the rest: cut it off.
    const timer = setTimeout(() => this.res.destroy(), SSE_END_GRACE_MS);
    timer.unref();
    this.res.once('close', () => clearTimeout(timer));
  }

  /** The peer went away (or the response ended): no more writes. */
  closed(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
  }

  queuedBytes(): number {
    return this.res.writableLength;
  }
}

/** Options of the SSE events route. */
export interface EventStreamOptions {
  limits: SubscriptionLimits;
  tickets: EventTickets;
  /** A `: ping` comment goes out this often (limits.sseHeartbeatMs). */
  heartbeatMs: number;
}

/**
 * Serves GET /v1/sessions/:id/events as Server-Sent Events: the WebSocket's frames and guarantees over one
 * HTTP response, tracked so shutdown can end them. Auth is the Authorization header or `?ticket=` (see
 * EventTickets); the cursor is Last-Event-ID, else `?after=`.
 */
export class EventStreamServer {
  private readonly open = new Set<SseTransport>();

  constructor(
    private readonly ctx: ServerContext,
    private readonly options: EventStreamOptions,
  ) {}

  /** Number of open SSE streams. */
  get size(): number {
    return this.open.size;
  }

  /** End every open stream (shutdown): readers reconnect with Last-Event-ID elsewhere. */
  closeAll(reason: string): void {
    for (const transport of [...this.open]) transport.close(WS_CLOSE.goingAway, reason);
  }

  /** Answer one request: an error in the one error shape before the stream starts, else the stream. */
  async serve(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const params = SessionParamsSchema.safeParse(request.params);
    if (!params.success) throw validationError('params', params.error);
    const query = EventStreamQuerySchema.safeParse(request.query ?? {});
    if (!query.success) throw validationError('query', query.error);
    const sessionId = params.data.id;
    const who = this.authenticate(request, sessionId, query.data.ticket, query.data.tenantId);
    const after = lastEventId(request) ?? query.data.after;
    // Another node owns the session: its stream is forwarded from there; when it is not (A3S-Route: no-forward,
    // no peers), the events are followed through the shared stream below.
    try {
      if (await ensureLocalOrForward(this.ctx, request, reply, () => this.ctx.agent.ensureLocal(sessionId, who, false)))
        return;
    } catch (error) {
      if (!(error instanceof CodeError) || error.code !== 'SESSION_OWNED_ELSEWHERE') throw error;
    }

    const res = reply.raw;
    const transport = new SseTransport(res);
    // Errors before the first byte are ordinary error answers (404, 410, ...): EventSource does not retry those.
    const opened: OpenedSubscription = await openSessionSubscription(
      this.ctx,
      who,
      sessionId,
      after,
      transport,
      this.options.limits,
    );
    if (res.destroyed || !res.socket || res.socket.destroyed) {
      opened.stop();
      return;
    }
    reply.hijack();
    res.writeHead(200, {
      ...headersOf(reply),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    const heartbeat = setInterval(() => transport.writeRaw(': ping\n\n'), this.options.heartbeatMs);
    heartbeat.unref();
    this.open.add(transport);
    transport.onAck = (token) => opened.subscription.ack(token);
    transport.onEnd = () => {
      clearInterval(heartbeat);
      this.open.delete(transport);
      opened.stop();
    };
    res.once('close', () => transport.closed());
    opened.start();
  }

  /** The caller as it addresses `:id`: from `?ticket=` (bound to this session) or the Authorization header. */
  private authenticate(
    request: FastifyRequest,
    sessionId: string,
    ticket: string | undefined,
    tenantId: string | undefined,
  ): Caller {
    const header = request.headers.authorization;
    let caller: Caller;
    if (ticket !== undefined) {
      caller = this.options.tickets.redeem(ticket, (issuer) =>
        sessionKey(addressedCaller(issuer, tenantId).tenantId, sessionId),
      );
      // A ticket is its issuer's: sent beside another caller's token, it is refused.
      if (header !== undefined && !this.ctx.authenticator.anonymous) {
        const other = this.ctx.authenticator.fromHeader(header);
        if (other.principal !== caller.principal || other.tenantId !== caller.tenantId) {
          throw new CodeError('UNAUTHORIZED', "query.ticket: issued to another caller than the Authorization header's");
        }
      }
    } else {
      caller = this.ctx.authenticator.fromHeader(header);
    }
    if (!hasScope(caller, 'sessions'))
      throw new CodeError('FORBIDDEN', 'this route needs the "sessions" scope', { scope: 'sessions' });
    return addressedCaller(caller, tenantId);
  }
}

/** The Last-Event-ID header as a cursor (absent or empty: none); VALIDATION_ERROR naming it when malformed. */
function lastEventId(request: FastifyRequest): number | undefined {
  const value = request.headers['last-event-id'];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,15}$/.test(value.trim())) {
    const message = 'must be a session_sequence (a non-negative integer)';
    throw new CodeError('VALIDATION_ERROR', `headers.last-event-id: ${message}`, {
      issues: [{ path: 'headers.last-event-id', message }],
    });
  }
  return Number(value.trim());
}

/** Headers set on the reply by earlier hooks (they would be lost with the hijacked response). */
function headersOf(reply: FastifyReply): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value : String(value);
  }
  return out;
}
