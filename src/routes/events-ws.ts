import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import { CodeError } from '../errors.js';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import { SessionParamsSchema } from '../protocol/http.js';
import { WS_CLOSE, WsClientMessageSchema, WsQuerySchema } from '../protocol/ws-messages.js';
import type { Caller } from '../runtime/caller.js';
import type { AgentSession } from '../runtime/session/agent-session.js';
import type { ServerContext } from '../server/server-context.js';

const AUTH_TIMEOUT_MS = 5000;
const frameCache = new WeakMap<EventEnvelope, string>();

/** Serialise an envelope once, however many subscribers receive it. */
function frame(event: EventEnvelope): string {
  let text = frameCache.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    frameCache.set(event, text);
  }
  return text;
}

function sendControl(socket: WebSocket, type: string, payload: Record<string, unknown>): void {
  socket.send(JSON.stringify({ version: 1, type, payload, metadata: {} }));
}

/** Live WebSocket sockets, so shutdown can close them with 1001. */
export class SocketRegistry {
  private readonly sockets = new Set<WebSocket>();

  /** Track a socket until it closes. */
  add(socket: WebSocket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Close every socket with 1001 (going away). */
  closeAll(reason: string): void {
    for (const socket of this.sockets) socket.close(WS_CLOSE.goingAway, reason);
  }

  /** Number of open sockets. */
  get size(): number {
    return this.sockets.size;
  }
}

/**
 * GET /v1/sessions/:id/events (WebSocket): replay retained events after the `after` cursor, then follow
 * live events, in order, without gaps or duplicates. Auth by header or a first `auth` message within 5 s.
 * Each subscriber has a bounded send buffer; a subscriber that falls behind is closed with 4008.
 */
export function registerEventsWebSocket(app: FastifyInstance, ctx: ServerContext, sockets: SocketRegistry): void {
  ctx.openapi.add({
    method: 'GET',
    url: '/v1/sessions/:id/events',
    summary: 'WebSocket: replay from ?after=<session_sequence>, then live EventEnvelopeV1 frames',
    description: 'Upgrade to WebSocket. Client messages: auth, ping, confirm, cancel. Close codes: 1001 shutdown, 4001 unauthorized, 4004 not found, 4008 slow consumer, 4010 session closed.',
    scope: 'sessions',
    params: SessionParamsSchema,
    query: WsQuerySchema,
    responses: { 101: null },
  });
  const limit = ctx.config.limits.subscriberBufferEvents;

  app.get('/v1/sessions/:id/events', { websocket: true }, (socket, request) => {
    sockets.add(socket);
    const paramsResult = SessionParamsSchema.safeParse(request.params);
    const queryResult = WsQuerySchema.safeParse(request.query);
    if (!paramsResult.success || !queryResult.success) {
      socket.close(WS_CLOSE.policy, 'invalid session id or after cursor');
      return;
    }
    const sessionId = paramsResult.data.id;
    const after = queryResult.data.after;
    let caller: Caller | undefined;
    let session: AgentSession | undefined;
    let unsubscribe: (() => void) | undefined;
    let inflight = 0;
    let closed = false;

    const close = (code: number, reason: string) => {
      if (closed) return;
      closed = true;
      unsubscribe?.();
      socket.close(code, reason);
    };
    const send = (event: EventEnvelope) => {
      if (closed) return;
      if (inflight >= limit) {
        close(WS_CLOSE.slowConsumer, `subscriber fell behind by more than ${limit} events (limits.subscriberBufferEvents); resume from your last session_sequence`);
        return;
      }
      inflight += 1;
      socket.send(frame(event), () => {
        inflight -= 1;
      });
      if (event.type === 'session_closed') close(WS_CLOSE.sessionClosed, 'session closed');
    };
    const attach = (who: Caller) => {
      try {
        session = ctx.agent.getSession(sessionId, who);
        session.assertOpen();
      } catch (error) {
        const code = error instanceof CodeError && error.code === 'SESSION_CLOSED' ? WS_CLOSE.sessionClosed : WS_CLOSE.notFound;
        close(code, error instanceof Error ? error.message : 'not found');
        return;
      }
      const subscription = session.events.subscribe(after, send);
      unsubscribe = subscription.unsubscribe;
      if (subscription.replay.gap) sendControl(socket, 'replay_gap', { first_available: subscription.replay.gap.firstAvailable, requested_after: after ?? 0 });
      for (const event of subscription.replay.events) send(event);
    };
    const authenticate = (token: string | undefined, header: boolean) => {
      try {
        caller = header ? ctx.authenticator.fromHeader(token) : ctx.authenticator.fromToken(token ?? '');
      } catch (error) {
        close(WS_CLOSE.unauthorized, error instanceof Error ? error.message : 'unauthorized');
        return;
      }
      attach(caller);
    };

    let authTimer: NodeJS.Timeout | undefined;
    if (ctx.authenticator.anonymous || request.headers.authorization) authenticate(request.headers.authorization, true);
    else authTimer = setTimeout(() => close(WS_CLOSE.unauthorized, `no auth message within ${AUTH_TIMEOUT_MS} ms`), AUTH_TIMEOUT_MS);

    socket.on('message', (data) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        sendControl(socket, 'error', { code: 'VALIDATION_ERROR', message: 'message: invalid JSON' });
        return;
      }
      const result = WsClientMessageSchema.safeParse(parsed);
      if (!result.success) {
        const issue = result.error.issues[0];
        sendControl(socket, 'error', { code: 'VALIDATION_ERROR', message: `message.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` });
        return;
      }
      const message = result.data;
      if (message.type === 'auth') {
        if (caller) return;
        clearTimeout(authTimer);
        authenticate(message.token, false);
        return;
      }
      if (!caller || !session) {
        sendControl(socket, 'error', { code: 'UNAUTHORIZED', message: 'authenticate first with {"type":"auth","token":"..."}' });
        return;
      }
      if (message.type === 'ping') sendControl(socket, 'pong', {});
      else if (message.type === 'cancel') {
        try {
          sendControl(socket, 'cancel_result', { run_id: message.runId, cancelled: session.cancelRun(message.runId) });
        } catch (error) {
          sendControl(socket, 'error', { code: error instanceof CodeError ? error.code : 'INTERNAL_ERROR', message: error instanceof Error ? error.message : 'failed' });
        }
      } else sendControl(socket, 'error', { code: 'UNSUPPORTED_OPTION', message: 'confirm: human confirmation is not enabled on this server yet' });
    });
    socket.on('close', () => {
      closed = true;
      clearTimeout(authTimer);
      unsubscribe?.();
    });
  });
}
