import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import { EventStreamQuerySchema } from '../protocol/auth-ticket.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import { EventEnvelopeSchema } from '../protocol/event-envelope.js';
import { EventStreamServer, wantsEventStream } from '../server/event-stream-server.js';
import { eventTicketsFor } from '../server/event-tickets.js';
import { serveEventsSocket } from '../server/events-socket-session.js';
import type { SocketRegistry } from '../server/socket-registry.js';
import { clientFaultLogFor } from '../server/client-fault-log.js';
import type { ServerContext } from '../server/server-context.js';

/** The socket's bounds (auth timeout, messages before auth and before attach), where its state machine keeps them. */
export {
  AUTH_TIMEOUT_MS,
  MAX_MESSAGES_BEFORE_ATTACH,
  MAX_MESSAGES_BEFORE_AUTH,
} from '../server/events-socket-session.js';

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
    summary:
      'WebSocket or SSE: replay from ?after=<session_sequence> (SSE: or Last-Event-ID), then live EventEnvelopeV1 frames',
    description:
      'Upgrade to WebSocket. Client messages: auth, ping, confirm, cancel, host_register, hook_response, command_response, external_task_complete. Control frames: replay_gap, pong, error, cancel_result, confirm_result, host_registered, external_task_complete_result; hook_request and command_request frames go to registered hosts. ' +
      'A registered host takes the lane queue\'s external tasks from the external_task_pending events of the stream and answers {"type":"external_task_complete","task_id","success","result"?,"error"?} (the rules of POST .../queue/external-tasks/:taskId; only the session\'s tenant; refusals are error frames EXTERNAL_TASK_NOT_FOUND / EXTERNAL_TASK_SETTLED with details). ' +
      'The server pings to measure how far the client has read; clients must answer pings. ' +
      'Close codes: 1001 shutdown (1012 in a cluster: the session moves to another node, reconnect through any node), 1008 invalid query (or more than 8 messages waiting while the subscription attaches), 4001 unauthorized, 4003 forbidden, 4004 not found, 4008 slow consumer, 4010 session closed. ' +
      "On a node that does not own the session the socket is proxied whole to the owner (closed with 1012 when the owner goes away: reconnect). Only with A3S-Route: no-forward (or a node without cluster.peer_urls) does the socket follow the session's events through the shared stream; then confirm, cancel, host_register, hook_response and external_task_complete are refused with an error frame, code SESSION_OWNED_ELSEWHERE, naming the owner node and its URL: send confirmations and cancels over REST to the owner. " +
      'With "Accept: text/event-stream" and no upgrade the route serves Server-Sent Events: the same frames (`id: <session_sequence>`, `event: <type>`, `data: <envelope JSON>`; control frames such as replay_gap have no id), resumed from Last-Event-ID (else ?after=) with the same no-gap/no-duplicate guarantee, a `: ping` comment every limits.sseHeartbeatMs (15 s), the same bounded window (a reader too slow is ended after a `: close 4008 ...` comment and resumes from its last id; `: close <code> <reason>` comments carry the WebSocket close code of every deliberate end). ' +
      'SSE auth: the Authorization header, or ?ticket= from POST /v1/auth/ticket for this session (EventSource cannot set headers). Errors before the stream starts are JSON error answers (401, 403, 404 SESSION_NOT_FOUND, 410 SESSION_CLOSED, 400 naming query.* or headers.last-event-id). ' +
      'A plain GET without the upgrade or that Accept answers 426 UPGRADE_REQUIRED, whether or not the session exists. ' +
      'A handshake with a Host the server does not answer to, or a browser Origin not allowed, answers HTTP 403 (HOST_NOT_ALLOWED, ORIGIN_NOT_ALLOWED) before the upgrade.',
    scope: 'sessions',
    params: SessionParamsSchema,
    query: EventStreamQuerySchema,
    headers: { 'last-event-id': 'SSE: resume after this session_sequence (wins over ?after=)' },
    responses: {
      101: null,
      // SSE: each frame's `data:` is one EventEnvelopeV1 (x-event-types lists every type's payload).
      200: EventEnvelopeSchema,
      400: ErrorBodySchema,
      401: ErrorBodySchema,
      403: ErrorBodySchema,
      404: ErrorBodySchema,
      410: ErrorBodySchema,
      426: ErrorBodySchema,
    },
    produces: 'text/event-stream',
  });
  const limits = {
    maxUnackedFrames: ctx.config.limits.subscriberBufferEvents,
    maxUnackedBytes: subscriberBufferBytes(ctx.config.limits.subscriberBufferEvents),
  };
  const sse = new EventStreamServer(ctx, {
    limits,
    tickets: eventTicketsFor(ctx),
    heartbeatMs: ctx.config.limits.sseHeartbeatMs,
  });
  // Shutdown ends SSE streams as it closes sockets (readers resume with Last-Event-ID on another node).
  app.addHook('preClose', async () => sse.closeAll('server shutting down'));
  // Bad client messages are the client's mistake: logged at info, rate limited (the client gets an error frame).
  const faults = clientFaultLogFor(ctx.logger as FastifyBaseLogger);

  app.route({
    method: 'GET',
    url: '/v1/sessions/:id/events',
    // Without the upgrade there is nothing to serve; the answer is the same for every session id and caller,
    // so it reveals nothing (the WebSocket path authenticates and checks the session).
    handler: async (request, reply) => {
      if (wantsEventStream(request)) return sse.serve(request, reply);
      reply.header('upgrade', 'websocket');
      throw new CodeError(
        'UPGRADE_REQUIRED',
        'GET /v1/sessions/:id/events is a WebSocket endpoint (or SSE): send the request with "Connection: Upgrade" and "Upgrade: websocket", or with "Accept: text/event-stream"',
      );
    },
    // One EventsSocketSession (a state machine: unauthenticated -> attaching -> attached -> closed) per connection.
    wsHandler: (socket, request) => serveEventsSocket({ ctx, sockets, limits, faults }, socket, request),
  });
}
