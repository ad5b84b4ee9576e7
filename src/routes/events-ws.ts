import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { CodeError } from '../errors.js';
import { EventStreamQuerySchema } from '../protocol/auth-ticket.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import { WS_CLOSE, WsClientMessageSchema, WsQuerySchema, type WsClientMessage, type WsControl } from '../protocol/ws-messages.js';
import { addressedCaller } from '../runtime/agent/session-address.js';
import { hasScope, type Caller } from '../runtime/ports/caller.js';
import { openSessionSubscription, type OpenedSubscription } from '../server/session-subscription.js';
import { EventStreamServer, wantsEventStream } from '../server/event-stream-server.js';
import { eventTicketsFor } from '../server/event-tickets.js';
import type { SocketRegistry } from '../server/socket-registry.js';
import { routeEventSocket } from './ws-owner-proxy.js';
import type { ProxiedSocket } from '../server/socket-proxy.js';
import { completeExternalTaskControl, errorControl, ownedElsewhereControl } from '../server/ws-controls.js';
import { controlFrameText, EventSubscription, type SubscriptionTransport } from '../runtime/events/event-subscription.js';
import type { AgentSession } from '../runtime/session/agent-session.js';
import { clientAddressOf } from '../server/client-address.js';
import { clientFaultLogFor } from '../server/client-fault-log.js';
import type { ServerContext } from '../server/server-context.js';

/** A client that cannot set headers must send `{"type": "auth"}` within this many milliseconds. */
export const AUTH_TIMEOUT_MS = 5000;

/**
 * The least number of bytes a subscriber may have unacknowledged, beside limits.subscriberBufferEvents
 * frames; the byte bound is the larger of this and SUBSCRIBER_FRAME_BYTES per buffered event, so raising
 * the event bound raises it too. Whichever bound is reached first closes a live subscriber with 4008.
 */
export const SUBSCRIBER_BUFFER_BYTES = 8 * 1024 * 1024;

/** Bytes per event of limits.subscriberBufferEvents that the byte bound allows (see SUBSCRIBER_BUFFER_BYTES). */
export const SUBSCRIBER_FRAME_BYTES = 8 * 1024;

/** The byte bound of one subscriber for an event bound: max(8 MiB, events x 8 KiB). */
export function subscriberBufferBytes(subscriberBufferEvents: number): number {
  return Math.max(SUBSCRIBER_BUFFER_BYTES, subscriberBufferEvents * SUBSCRIBER_FRAME_BYTES);
}

/** A subscriber still catching up when its session closes gets this long to read the rest, then 4010 (shared with SSE). */
export { SESSION_CLOSED_DRAIN_MS } from '../server/session-subscription.js';

/** Refused messages before authentication; one more closes the socket with 4001. */
export const MAX_MESSAGES_BEFORE_AUTH = 8;

/**
 * Messages an authenticated socket may send while its subscription is still being attached (the session
 * looked up, or another node's stream joined); they are handled in order once it is. Pings (and invalid
 * messages) with nothing queued before them are answered at once and not counted. One more closes with 1008.
 */
export const MAX_MESSAGES_BEFORE_ATTACH = 8;

/**
 * GET /v1/sessions/:id/events (WebSocket): replay retained events after the `after` cursor, then follow
 * live events, in order, without gaps or duplicates. Auth by header or a first `auth` message within 5 s.
 * Each subscriber has a bounded window of unacknowledged frames (limits.subscriberBufferEvents) and bytes
 * (subscriberBufferBytes), measured end to end with pings; a live subscriber that falls behind is closed
 * with 4008. See EventSubscription.
 */
export function registerEventsWebSocket(app: FastifyInstance, ctx: ServerContext, sockets: SocketRegistry): void {
  ctx.openapi.add({
    method: 'GET',
    url: '/v1/sessions/:id/events',
    summary: 'WebSocket or SSE: replay from ?after=<session_sequence> (SSE: or Last-Event-ID), then live EventEnvelopeV1 frames',
    description:
      'Upgrade to WebSocket. Client messages: auth, ping, confirm, cancel, host_register, hook_response, command_response, external_task_complete. Control frames: replay_gap, pong, error, cancel_result, confirm_result, host_registered, external_task_complete_result; hook_request and command_request frames go to registered hosts. ' +
        'A registered host takes the lane queue\'s external tasks from the external_task_pending events of the stream and answers {"type":"external_task_complete","task_id","success","result"?,"error"?} (the rules of POST .../queue/external-tasks/:taskId; only the session\'s tenant; refusals are error frames EXTERNAL_TASK_NOT_FOUND / EXTERNAL_TASK_SETTLED with details). ' +
      'The server pings to measure how far the client has read; clients must answer pings. ' +
      'Close codes: 1001 shutdown (1012 in a cluster: the session moves to another node, reconnect through any node), 1008 invalid query (or more than 8 messages waiting while the subscription attaches), 4001 unauthorized, 4003 forbidden, 4004 not found, 4008 slow consumer, 4010 session closed. ' +
      'On a node that does not own the session the socket is proxied whole to the owner (closed with 1012 when the owner goes away: reconnect). Only with A3S-Route: no-forward (or a node without cluster.peer_urls) does the socket follow the session\'s events through the shared stream; then confirm, cancel, host_register, hook_response and external_task_complete are refused with an error frame, code SESSION_OWNED_ELSEWHERE, naming the owner node and its URL: send confirmations and cancels over REST to the owner. ' +
      'With "Accept: text/event-stream" and no upgrade the route serves Server-Sent Events: the same frames (`id: <session_sequence>`, `event: <type>`, `data: <envelope JSON>`; control frames such as replay_gap have no id), resumed from Last-Event-ID (else ?after=) with the same no-gap/no-duplicate guarantee, a `: ping` comment every limits.sseHeartbeatMs (15 s), the same bounded window (a reader too slow is ended after a `: close 4008 ...` comment and resumes from its last id; `: close <code> <reason>` comments carry the WebSocket close code of every deliberate end). ' +
        'SSE auth: the Authorization header, or ?ticket= from POST /v1/auth/ticket for this session (EventSource cannot set headers). Errors before the stream starts are JSON error answers (401, 403, 404 SESSION_NOT_FOUND, 410 SESSION_CLOSED, 400 naming query.* or headers.last-event-id). ' +
        'A plain GET without the upgrade or that Accept answers 426 UPGRADE_REQUIRED, whether or not the session exists. ' +
      'A handshake with a Host the server does not answer to, or a browser Origin not allowed, answers HTTP 403 (HOST_NOT_ALLOWED, ORIGIN_NOT_ALLOWED) before the upgrade.',
    scope: 'sessions',
    params: SessionParamsSchema,
    query: EventStreamQuerySchema,
    headers: { 'last-event-id': 'SSE: resume after this session_sequence (wins over ?after=)' },
    responses: { 101: null, 200: null, 400: ErrorBodySchema, 401: ErrorBodySchema, 403: ErrorBodySchema, 404: ErrorBodySchema, 410: ErrorBodySchema, 426: ErrorBodySchema },
    produces: 'text/event-stream',
  });
  const limits = { maxUnackedFrames: ctx.config.limits.subscriberBufferEvents, maxUnackedBytes: subscriberBufferBytes(ctx.config.limits.subscriberBufferEvents) };
  const sse = new EventStreamServer(ctx, { limits, tickets: eventTicketsFor(ctx), heartbeatMs: ctx.config.limits.sseHeartbeatMs });
  // Shutdown ends SSE streams as it closes sockets (readers resume with Last-Event-ID on another node).
  app.addHook('preClose', async () => sse.closeAll('server shutting down'));
  // Bad client messages are the client's mistake: logged at info, rate limited (the client gets an error frame).
  const faults = clientFaultLogFor(ctx.logger as FastifyBaseLogger);

  // The WebSocket subscription: one per upgraded connection.
  const onSocket = (socket: WebSocket, request: FastifyRequest) => {
    sockets.add(socket);
    const paramsResult = SessionParamsSchema.safeParse(request.params);
    const queryResult = WsQuerySchema.safeParse(request.query);
    if (!paramsResult.success || !queryResult.success) {
      const [where, error] = paramsResult.success ? ['query', queryResult.error] : ['params', paramsResult.error];
      const issue = error?.issues[0];
      sockets.close(socket, WS_CLOSE.policy, `${[where, ...(issue?.path.map(String) ?? [])].join('.')}: ${issue?.message ?? 'invalid'}`);
      return;
    }
    const sessionId = paramsResult.data.id;
    const after = queryResult.data.after;
    let caller: Caller | undefined;
    let session: AgentSession | undefined;
    let subscription: EventSubscription | undefined;
    let refusedBeforeAuth = 0;
    let authTimer: NodeJS.Timeout | undefined;
    let hostConnectionId: string | undefined;
    let streamStop: (() => void) | undefined;
    // Set when another live node owns the session and this socket follows its events through the shared stream.
    let followedOwner: CodeError | undefined;
    // Set once the subscription (local or following) is attached; until then an authenticated socket's messages queue.
    let attached = false;
    const queued: (() => void)[] = [];
    // The raw frames behind `queued`, passed on as they came if the socket is proxied to the session's owner.
    const queuedRaw: [RawData, boolean][] = [];
    // Set when another node owns the session: the socket is spliced to the owner's and nothing is handled here.
    let proxied: ProxiedSocket | undefined;
    // The credentials the socket authenticated with, as an Authorization header for the owner.
    let authorization: string | undefined;

    const release = () => {
      queued.length = 0;
      queuedRaw.length = 0;
      streamStop?.();
      if (hostConnectionId !== undefined) ctx.hostRegistry.detach(hostConnectionId);
      hostConnectionId = undefined;
      clearTimeout(authTimer);
      subscription?.stop();
    };
    const close = (code: number, reason: string) => {
      release();
      sockets.close(socket, code, reason);
    };
    const transport: SubscriptionTransport = {
      send: (text) => {
        if (socket.readyState === socket.OPEN) socket.send(text);
      },
      requestAck: (token) => {
        if (socket.readyState === socket.OPEN) socket.ping(String(token));
      },
      close: (code, reason) => close(code, reason),
      queuedBytes: () => socket.bufferedAmount,
    };
    const sendNow = (control: WsControl) => {
      if (socket.readyState === socket.OPEN) socket.send(controlFrameText(control));
    };
    // Answers share the subscription's window. Before it exists they go straight out: while it is being
    // attached (bounded by the socket's byte bound), or before authentication (a few refusals, then 4001).
    const reply = (control: WsControl) => {
      if (subscription) {
        subscription.sendControl(control);
        return;
      }
      if (caller) {
        if (socket.bufferedAmount > limits.maxUnackedBytes) close(WS_CLOSE.slowConsumer, `slow consumer: ${socket.bufferedAmount} bytes unsent before the subscription was attached`);
        else sendNow(control);
        return;
      }
      refusedBeforeAuth += 1;
      if (refusedBeforeAuth > MAX_MESSAGES_BEFORE_AUTH) close(WS_CLOSE.unauthorized, 'too many messages before authentication');
      else sendNow(control);
    };

    const attach = async (authenticated: Caller) => {
      if (!hasScope(authenticated, 'sessions')) {
        close(WS_CLOSE.forbidden, 'this subscription needs the "sessions" scope');
        return;
      }
      // Session ids are per tenant: `:id` is the caller's tenant's, or (admins) the `tenantId` query's.
      let who: Caller;
      try {
        who = addressedCaller(authenticated, queryResult.data.tenantId);
      } catch (error) {
        close(WS_CLOSE.forbidden, error instanceof Error ? error.message : 'forbidden');
        return;
      }
      const route = await routeEventSocket(ctx, socket, request, who, sessionId, authorization);
      if (route.kind === 'closed') return release();
      if (route.kind === 'proxied') {
        proxied = route.proxy;
        attached = true;
        queued.length = 0;
        for (const [data, isBinary] of queuedRaw.splice(0)) proxied.fromClient(data, isBinary);
        return;
      }
      let opened: OpenedSubscription;
      try {
        opened = await openSessionSubscription(ctx, who, sessionId, after, transport, limits);
      } catch (error) {
        const code = error instanceof CodeError && error.code === 'SESSION_CLOSED' ? WS_CLOSE.sessionClosed : WS_CLOSE.notFound;
        close(code, error instanceof CodeError ? error.message : 'session not found');
        return;
      }
      // A socket that closed while the session was looked up (or the stream joined) has already been released.
      if (socket.readyState !== socket.OPEN) {
        opened.stop();
        return;
      }
      subscription = opened.subscription;
      session = opened.session;
      followedOwner = opened.followedOwner;
      streamStop = () => opened.stop();
      opened.start();
      handleQueued();
    };
    const authenticate = (token: string | undefined, header: boolean) => {
      clearTimeout(authTimer);
      authorization = header ? token : token === undefined ? undefined : `Bearer ${token}`;
      try {
        caller = header ? ctx.authenticator.fromHeader(token) : ctx.authenticator.fromToken(token ?? '');
      } catch (error) {
        close(WS_CLOSE.unauthorized, error instanceof CodeError ? error.message : 'unauthorized');
        return;
      }
      void attach(caller).catch(() => close(WS_CLOSE.goingAway, 'subscription failed'));
    };

    /** The subscription is attached: handle what the client sent meanwhile, in order. */
    const handleQueued = () => {
      attached = true;
      queuedRaw.length = 0;
      for (const action of queued.splice(0)) {
        if (socket.readyState !== socket.OPEN) return;
        action();
      }
    };
    /**
     * Run a message's handling now, or, on an authenticated socket whose subscription is not attached yet,
     * once it is (in arrival order). `immediate` handling (a ping, an auth, an invalid message) needs no
     * subscription: it runs now when nothing is queued before it.
     */
    const dispatch = (action: () => void, immediate: boolean, raw?: [RawData, boolean]) => {
      if (socket.readyState !== socket.OPEN) return;
      if (!caller || attached || (immediate && queued.length === 0)) {
        action();
        return;
      }
      if (queued.length >= MAX_MESSAGES_BEFORE_ATTACH) {
        close(WS_CLOSE.policy, `more than ${MAX_MESSAGES_BEFORE_ATTACH} messages before the subscription was attached; wait for its first frame`);
        return;
      }
      queued.push(action);
      if (raw) queuedRaw.push(raw);
    };

    const handle = (message: WsClientMessage) => {
      if (message.type === 'auth') {
        // Already authenticated (by header, or anonymously): nothing to do.
        if (!caller) authenticate(message.token, false);
        return;
      }
      if (!caller) {
        reply(errorControl('UNAUTHORIZED', `${message.type}: authenticate first with {"type":"auth","token":"..."}`));
        return;
      }
      if (message.type === 'ping') {
        reply({ type: 'pong', payload: {} });
        return;
      }
      // Confirmations, cancels and host registration act on the live session, which is the owner node's.
      if (followedOwner) {
        reply(ownedElsewhereControl(followedOwner, sessionId, message));
        return;
      }
      // Not reached: session-bound messages wait in the queue until the subscription is attached.
      if (!session) return;
      if (message.type === 'host_register') {
        if (hostConnectionId === undefined) {
          hostConnectionId = ctx.hostEnv.newId('conn');
          ctx.hostRegistry.attach(hostConnectionId, (frame) => socket.send(JSON.stringify(frame)), { tenantId: caller.tenantId, principal: caller.principal, sessionId });
        }
        reply({ type: 'host_registered', payload: { connection_id: hostConnectionId } });
      } else if (message.type === 'hook_response' || message.type === 'command_response') {
        if (hostConnectionId === undefined || !ctx.hostRegistry.deliver(hostConnectionId, message)) {
          reply(errorControl('VALIDATION_ERROR', `message.request_id: no pending ${message.type === 'hook_response' ? 'hook' : 'command'} request with this id on this connection`, 'message.request_id'));
        }
      } else if (message.type === 'external_task_complete') {
        reply(completeExternalTaskControl(session, caller, hostConnectionId !== undefined, message));
      } else if (message.type === 'cancel') {
        try {
          reply({ type: 'cancel_result', payload: { run_id: message.runId, cancelled: session.runs.cancelRun(message.runId) } });
        } catch (error) {
          reply(errorControl(error instanceof CodeError ? error.code : 'INTERNAL_ERROR', error instanceof CodeError ? error.message : 'cancel failed', 'runId'));
        }
      } else {
        try {
          session.governance.answerConfirmation(message.toolId, { approved: message.approved, ...(message.reason !== undefined ? { reason: message.reason } : {}), ...(message.argsDigest !== undefined ? { argsDigest: message.argsDigest } : {}), ...(message.always === true ? { always: true, mayPassFloor: hasScope(caller, 'host_direct') } : {}) });
          reply({ type: 'confirm_result', payload: { tool_id: message.toolId, approved: message.approved } });
        } catch (error) {
          reply(errorControl(error instanceof CodeError ? error.code : 'INTERNAL_ERROR', error instanceof CodeError ? error.message : 'confirm failed', 'toolId'));
        }
      }
    };

    socket.on('message', (data, isBinary) => {
      if (proxied) return proxied.fromClient(data, isBinary);
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        faults.log('ws:invalid-message', 'info', { ip: clientAddressOf(request), sessionId }, 'WebSocket client sent a message that is not JSON');
        dispatch(() => reply(errorControl('VALIDATION_ERROR', 'message: invalid JSON', 'message')), true);
        return;
      }
      const result = WsClientMessageSchema.safeParse(parsed);
      if (!result.success) {
        const issue = result.error.issues[0];
        const field = ['message', ...(issue?.path.map(String) ?? [])].join('.');
        faults.log('ws:invalid-message', 'info', { ip: clientAddressOf(request), sessionId, field }, `WebSocket client sent an invalid message (${field})`);
        dispatch(() => reply(errorControl('VALIDATION_ERROR', `${field}: ${issue?.message ?? 'invalid'}`, field)), true);
        return;
      }
      const message = result.data;
      dispatch(() => handle(message), message.type === 'ping' || message.type === 'auth', message.type === 'auth' ? undefined : [data, isBinary]);
    });
    socket.on('pong', (data) => {
      if (proxied) return proxied.pongFromClient(data);
      const token = Number(data.toString());
      if (Number.isSafeInteger(token)) subscription?.ack(token);
    });
    socket.on('close', (code) => {
      proxied?.clientClosed(code);
      release();
    });

    if (ctx.authenticator.anonymous || request.headers.authorization !== undefined) authenticate(request.headers.authorization, true);
    else {
      authTimer = setTimeout(() => close(WS_CLOSE.unauthorized, `no auth message within ${AUTH_TIMEOUT_MS} ms`), AUTH_TIMEOUT_MS);
      authTimer.unref();
    }
  };

  app.route({
    method: 'GET',
    url: '/v1/sessions/:id/events',
    // Without the upgrade there is nothing to serve; the answer is the same for every session id and caller,
    // so it reveals nothing (the WebSocket path authenticates and checks the session).
    handler: async (request, reply) => {
      if (wantsEventStream(request)) return sse.serve(request, reply);
      reply.header('upgrade', 'websocket');
      throw new CodeError('UPGRADE_REQUIRED', 'GET /v1/sessions/:id/events is a WebSocket endpoint (or SSE): send the request with "Connection: Upgrade" and "Upgrade: websocket", or with "Accept: text/event-stream"');
    },
    wsHandler: onSocket,
  });
}
