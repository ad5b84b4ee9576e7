import type { FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { CodeError } from '../errors.js';
import { formatZodIssues, zodFieldIssues } from '../protocol/format-zod-issues.js';
import { SessionParamsSchema } from '../protocol/http.js';
import {
  WS_CLOSE,
  WsClientMessageSchema,
  WsQuerySchema,
  type WsClientMessage,
  type WsControl,
} from '../protocol/ws-messages.js';
import { addressedCaller } from '../runtime/live-sessions/session-address.js';
import { controlFrameText, type SubscriptionTransport } from '../runtime/events/event-subscription.js';
import { hasScope, type Caller } from '../runtime/ports/caller.js';
import { clientAddressOf } from './client-address.js';
import { routeEventSocket } from './route-event-socket.js';
import type {
  EventsSocketAddress,
  EventsSocketAttachment,
  EventsSocketDeps,
  EventsSocketState,
} from './events-socket-state.js';
import { openSessionSubscription, type OpenedSubscription } from './session-subscription.js';
import { authenticateSocket, parseJsonFrame, type SocketCredentials } from './socket-auth.js';
import type { ProxiedSocket } from './socket-proxy.js';
import {
  cancelControl,
  completeExternalTaskControl,
  confirmControl,
  answerControl,
  runControlControl,
  hostReplyControl,
  errorControl,
  ownedElsewhereControl,
} from './ws-controls.js';

/** A client that cannot set headers must send `{"type": "auth"}` within this many milliseconds. */
export const AUTH_TIMEOUT_MS = 5000;

/** Refused messages before authentication; one more closes the socket with 4001. */
export const MAX_MESSAGES_BEFORE_AUTH = 8;

/**
 * Messages an authenticated socket may send while its subscription is still being attached (the session
 * looked up, or another node's stream joined); they are handled in order once it is. Pings (and invalid
 * messages) with nothing queued before them are answered at once and not counted. One more closes with 1008.
 */
export const MAX_MESSAGES_BEFORE_ATTACH = 8;

/**
 * The upgraded GET /v1/sessions/:id/events connection: its params and query checked (1008 naming the
 * field), then served by an EventsSocketSession.
 */
export function serveEventsSocket(deps: EventsSocketDeps, socket: WebSocket, request: FastifyRequest): void {
  deps.sockets.add(socket);
  const paramsResult = SessionParamsSchema.safeParse(request.params);
  const queryResult = WsQuerySchema.safeParse(request.query);
  if (!paramsResult.success || !queryResult.success) {
    const [where, error] = paramsResult.success ? ['query', queryResult.error] : ['params', paramsResult.error];
    deps.sockets.close(socket, WS_CLOSE.policy, error ? formatZodIssues(error, { where }) : `${where}: invalid`);
    return;
  }
  new EventsSocketSession(deps, socket, request, {
    sessionId: paramsResult.data.id,
    after: queryResult.data.after,
    tenantId: queryResult.data.tenantId,
  });
}

/**
 * One events WebSocket as a state machine. Each client message is handled by the state it arrives in:
 * before authentication only `auth` is taken (anything else is refused with an error frame, the 9th
 * refusal closes with 4001, and no auth within AUTH_TIMEOUT_MS closes with 4001); while attaching, pings
 * and invalid messages with nothing before them are answered at once and the rest wait (the 9th closes
 * with 1008); once attached they act on the session (or are refused naming its owner node), or pass to
 * the owner unchanged when proxied. Answers share the subscription's bounded window once there is one.
 */
export class EventsSocketSession {
  private state: EventsSocketState;
  private readonly transport: SubscriptionTransport;

  constructor(
    private readonly deps: EventsSocketDeps,
    private readonly socket: WebSocket,
    private readonly request: FastifyRequest,
    private readonly address: EventsSocketAddress,
  ) {
    this.transport = {
      send: (text) => {
        if (socket.readyState === socket.OPEN) socket.send(text);
      },
      requestAck: (token) => {
        if (socket.readyState === socket.OPEN) socket.ping(String(token));
      },
      close: (code, reason) => this.close(code, reason),
      queuedBytes: () => socket.bufferedAmount,
    };
    const header = request.headers.authorization;
    const byHeader = deps.ctx.authenticator.anonymous || header !== undefined;
    const timer = byHeader
      ? undefined
      : setTimeout(
          () => this.close(WS_CLOSE.unauthorized, `no auth message within ${AUTH_TIMEOUT_MS} ms`),
          AUTH_TIMEOUT_MS,
        );
    timer?.unref();
    this.state = { kind: 'unauthenticated', refused: 0, timer };
    socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    socket.on('pong', (data) => this.onPong(data));
    socket.on('close', (code) => this.onClose(code));
    if (byHeader) this.authenticate({ header }, header);
  }

  /** unauthenticated -> attaching, or closed (4001) when the credentials are refused. */
  private authenticate(credentials: SocketCredentials, authorization: string | undefined): void {
    if (this.state.kind !== 'unauthenticated') return;
    clearTimeout(this.state.timer);
    const authenticated = authenticateSocket(this.deps.ctx.authenticator, credentials);
    if ('refused' in authenticated) return this.close(WS_CLOSE.unauthorized, authenticated.refused);
    this.state = { kind: 'attaching', caller: authenticated.caller, waiting: [] };
    void this.attach(authenticated.caller, authorization).catch(() =>
      this.close(WS_CLOSE.goingAway, 'subscription failed'),
    );
  }

  /** attaching -> attached: proxied to the owner node, or subscribed here; closed when the caller may not, or there is no such session. */
  private async attach(caller: Caller, authorization: string | undefined): Promise<void> {
    const { ctx, limits } = this.deps;
    const { sessionId, after } = this.address;
    if (!hasScope(caller, 'sessions'))
      return this.close(WS_CLOSE.forbidden, 'this subscription needs the "sessions" scope');
    // Session ids are per tenant: `:id` is the caller's tenant's, or (admins) the `tenantId` query's.
    let who: Caller;
    try {
      who = addressedCaller(caller, this.address.tenantId);
    } catch (error) {
      return this.close(WS_CLOSE.forbidden, error instanceof Error ? error.message : 'forbidden');
    }
    const route = await routeEventSocket(ctx, this.socket, this.request, who, sessionId, authorization);
    // routeEventSocket closed the socket itself (1012: the owner cannot be reached).
    if (route.kind === 'closed') return this.release();
    if (route.kind === 'proxied') return this.attachProxy(route.proxy);
    let opened: OpenedSubscription;
    try {
      opened = await openSessionSubscription(ctx, who, sessionId, after, this.transport, limits);
    } catch (error) {
      const code =
        error instanceof CodeError && error.code === 'SESSION_CLOSED' ? WS_CLOSE.sessionClosed : WS_CLOSE.notFound;
      return this.close(code, error instanceof CodeError ? error.message : 'session not found');
    }
    // A socket that closed while the session was looked up (or the stream joined) has already been released.
    if (this.state.kind !== 'attaching' || this.socket.readyState !== this.socket.OPEN) return opened.stop();
    const waiting = this.state.waiting;
    const to: EventsSocketAttachment = opened.session
      ? { via: 'session', opened, session: opened.session, hostConnectionId: undefined }
      : { via: 'stream', opened, owner: opened.followedOwner };
    this.state = { kind: 'attached', caller, to };
    opened.start();
    // Handle what the client sent meanwhile, in order.
    for (const message of waiting) {
      if (this.state.kind !== 'attached' || this.socket.readyState !== this.socket.OPEN) return;
      message.handle();
    }
  }

  /** attaching -> attached to the owner node: what the client sent meanwhile goes there as it came. */
  private attachProxy(proxy: ProxiedSocket): void {
    if (this.state.kind !== 'attaching') return proxy.clientClosed(WS_CLOSE.normal);
    const waiting = this.state.waiting;
    this.state = { kind: 'attached', caller: this.state.caller, to: { via: 'proxy', proxy } };
    for (const { raw } of waiting) if (raw) proxy.fromClient(raw[0], raw[1]);
  }

  /** Any state -> closed: stop the subscription, detach the host connection, clear the auth timer. Idempotent. */
  private release(): void {
    const state = this.state;
    this.state = { kind: 'closed' };
    if (state.kind === 'unauthenticated') clearTimeout(state.timer);
    if (state.kind !== 'attached' || state.to.via === 'proxy') return;
    state.to.opened.stop();
    if (state.to.via === 'session' && state.to.hostConnectionId !== undefined)
      this.deps.ctx.hostRegistry.detach(state.to.hostConnectionId);
    state.to.opened.subscription.stop();
  }

  private close(code: number, reason: string): void {
    this.release();
    this.deps.sockets.close(this.socket, code, reason);
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.state.kind === 'attached' && this.state.to.via === 'proxy')
      return this.state.to.proxy.fromClient(data, isBinary);
    const { faults } = this.deps;
    const sessionId = this.address.sessionId;
    const parsed = parseJsonFrame(data);
    if (!parsed) {
      faults.log(
        'ws:invalid-message',
        'info',
        { ip: clientAddressOf(this.request), sessionId },
        'WebSocket client sent a message that is not JSON',
      );
      return this.dispatch(
        () => this.reply(errorControl('VALIDATION_ERROR', 'message: invalid JSON', 'message')),
        true,
        undefined,
      );
    }
    const result = WsClientMessageSchema.safeParse(parsed.value);
    if (!result.success) {
      const field = zodFieldIssues(result.error, 'message', 1)[0]?.path ?? 'message';
      faults.log(
        'ws:invalid-message',
        'info',
        { ip: clientAddressOf(this.request), sessionId, field },
        `WebSocket client sent an invalid message (${field})`,
      );
      return this.dispatch(
        () => this.reply(errorControl('VALIDATION_ERROR', formatZodIssues(result.error, { where: 'message' }), field)),
        true,
        undefined,
      );
    }
    const message = result.data;
    this.dispatch(
      () => this.handle(message),
      message.type === 'ping' || message.type === 'auth',
      message.type === 'auth' ? undefined : [data, isBinary],
    );
  }

  /**
   * Handle a message now, or, while attaching, once attached (in arrival order). `immediate` handling (a
   * ping, an auth, an invalid message) needs no subscription: it runs now when nothing waits before it.
   */
  private dispatch(handle: () => void, immediate: boolean, raw: readonly [RawData, boolean] | undefined): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    const state = this.state;
    if (state.kind !== 'attaching' || (immediate && state.waiting.length === 0)) return handle();
    if (state.waiting.length >= MAX_MESSAGES_BEFORE_ATTACH) {
      return this.close(
        WS_CLOSE.policy,
        `more than ${MAX_MESSAGES_BEFORE_ATTACH} messages before the subscription was attached; wait for its first frame`,
      );
    }
    state.waiting.push({ handle, raw });
  }

  /** A valid client message, by state. */
  private handle(message: WsClientMessage): void {
    const state = this.state;
    if (message.type === 'auth') {
      // Already authenticated (by header, or anonymously): nothing to do.
      if (state.kind === 'unauthenticated') this.authenticate({ token: message.token }, `Bearer ${message.token}`);
      return;
    }
    if (state.kind === 'unauthenticated')
      return this.reply(
        errorControl('UNAUTHORIZED', `${message.type}: authenticate first with {"type":"auth","token":"..."}`),
      );
    if (message.type === 'ping') return this.reply({ type: 'pong', payload: {} });
    // Not reached while attaching: session-bound messages wait until the subscription is attached.
    if (state.kind !== 'attached' || state.to.via === 'proxy') return;
    // Confirmations, cancels and host registration act on the live session, which is the owner node's.
    if (state.to.via === 'stream')
      return this.reply(ownedElsewhereControl(state.to.owner, this.address.sessionId, message));
    this.reply(this.answer(state.to, state.caller, message));
  }

  /** The answer to a session-bound message on a socket served by the live session (undefined: none). */
  private answer(
    to: Extract<EventsSocketAttachment, { via: 'session' }>,
    caller: Caller,
    message: Exclude<WsClientMessage, { type: 'auth' | 'ping' }>,
  ): WsControl | undefined {
    const { ctx } = this.deps;
    const session = to.session;
    switch (message.type) {
      case 'host_register':
        if (to.hostConnectionId === undefined) {
          to.hostConnectionId = ctx.hostEnv.newId('conn');
          ctx.hostRegistry.attach(to.hostConnectionId, (frame) => this.socket.send(JSON.stringify(frame)), {
            tenantId: caller.tenantId,
            principal: caller.principal,
            sessionId: this.address.sessionId,
          });
        }
        return { type: 'host_registered', payload: { connection_id: to.hostConnectionId } };
      case 'hook_response':
      case 'command_response':
        return hostReplyControl(ctx.hostRegistry, to.hostConnectionId, message);
      case 'external_task_complete':
        return completeExternalTaskControl(session, caller, to.hostConnectionId !== undefined, message);
      case 'cancel':
        return cancelControl(session, message);
      case 'confirm':
        return confirmControl(session, caller, message);
      case 'answer':
        return answerControl(session, message, ctx, caller);
      case 'steer':
      case 'interrupt':
        return runControlControl(session, message, ctx.config.limits.maxInputBytes);
    }
  }

  /**
   * Answer the client. Once attached, answers share the subscription's window; while attaching they go
   * straight out (bounded by the socket's byte bound: 4008); before authentication a few refusals go out,
   * then 4001. A closed socket gets nothing.
   */
  private reply(control: WsControl | undefined): void {
    if (!control) return;
    const state = this.state;
    if (state.kind === 'attached') {
      if (state.to.via !== 'proxy') state.to.opened.subscription.sendControl(control);
      return;
    }
    if (state.kind === 'attaching') {
      const queued = this.socket.bufferedAmount;
      if (queued > this.deps.limits.maxUnackedBytes)
        this.close(WS_CLOSE.slowConsumer, `slow consumer: ${queued} bytes unsent before the subscription was attached`);
      else this.sendNow(control);
      return;
    }
    if (state.kind === 'unauthenticated') {
      state.refused += 1;
      if (state.refused > MAX_MESSAGES_BEFORE_AUTH)
        this.close(WS_CLOSE.unauthorized, 'too many messages before authentication');
      else this.sendNow(control);
    }
  }

  private sendNow(control: WsControl): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(controlFrameText(control));
  }

  /** A pong answers the subscription's ping: it acknowledges every frame written before it (or is the owner's, when proxied). */
  private onPong(data: Buffer): void {
    const state = this.state;
    if (state.kind !== 'attached') return;
    if (state.to.via === 'proxy') return state.to.proxy.pongFromClient(data);
    const token = Number(data.toString());
    if (Number.isSafeInteger(token)) state.to.opened.subscription.ack(token);
  }

  private onClose(code: number): void {
    if (this.state.kind === 'attached' && this.state.to.via === 'proxy') this.state.to.proxy.clientClosed(code);
    this.release();
  }
}
