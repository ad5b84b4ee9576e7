import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import type { RuntimeContext } from '../context.js';
import { FORWARDED_HEADER } from '../cluster/forwarded-header.js';
import { CodeError } from '../errors.js';
import { ErrorBodySchema } from '../protocol/http.js';
import { WS_CLOSE } from '../protocol/ws-messages.js';
import { hasScope, type Caller } from '../runtime/ports/caller.js';
import { authenticateSocket, parseJsonFrame, type SocketCredentials } from '../server/socket-auth.js';
import type { SocketRegistry } from '../server/socket-registry.js';
import { createAcpAgent } from '../interop/acp/acp-agent.js';
import { AcpOwnerRelay } from '../interop/acp/acp-owner-relay.js';
import { websocketAcpStream } from '../interop/acp/websocket-acp-stream.js';

/** A client that cannot set headers must send `{"type":"auth","token":"..."}` as its first frame within this many ms. */
export const ACP_AUTH_TIMEOUT_MS = 5000;

/** Unsent bytes an ACP socket may hold before its peer counts as too slow (closed with 4008). */
export const ACP_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

const AuthFrameSchema = z.object({ type: z.literal('auth'), token: z.string().min(1).max(4096) }).strict();

/**
 * ACP (Agent Client Protocol) over a WebSocket: GET /acp speaks the SDK's agent side as JSON-RPC, one message
 * per text frame. Auth: the Authorization bearer header of the upgrade, or (clients that cannot set headers)
 * a first frame `{"type":"auth","token":"..."}` within 5 s; the token needs the `sessions` scope.
 */
export function registerAcpRoute(app: FastifyInstance, ctx: RuntimeContext, sockets: SocketRegistry): void {
  ctx.openapi.add({
    method: 'GET',
    url: '/acp',
    summary: 'WebSocket: ACP (Agent Client Protocol) JSON-RPC for editors',
    description:
      'Upgrade to WebSocket; each text frame is one JSON-RPC message of ACP v1 (initialize, session/new, session/load, session/list, session/prompt, session/cancel, session/set_mode; the server sends session/update and session/request_permission). ' +
      'Auth by the Authorization header, or a first frame {"type":"auth","token":"..."} within 5 s. Close codes: 1001 shutdown, 4001 unauthorized, 4003 forbidden (no sessions scope), 4008 slow consumer. ' +
      'A plain GET without the upgrade answers 426 UPGRADE_REQUIRED. The stdio bridge `a3s acp` connects editors that launch local agents.',
    scope: 'sessions',
    responses: { 101: null, 403: ErrorBodySchema, 426: ErrorBodySchema },
  });

  const onSocket = (socket: WebSocket, request: FastifyRequest) => {
    sockets.add(socket);
    const byHeader = ctx.authenticator.anonymous || request.headers.authorization !== undefined;
    // Called only after `close` below is defined (the timer fires later).
    const authTimer = byHeader
      ? undefined
      : setTimeout(
          () => close(WS_CLOSE.unauthorized, `no auth frame within ${ACP_AUTH_TIMEOUT_MS} ms`),
          ACP_AUTH_TIMEOUT_MS,
        );
    authTimer?.unref();
    const close = (code: number, reason: string) => {
      clearTimeout(authTimer);
      sockets.close(socket, code, reason);
    };
    const serve = (caller: Caller, authorization: string | undefined) => {
      if (!hasScope(caller, 'sessions')) {
        close(WS_CLOSE.forbidden, 'ACP needs the "sessions" scope');
        return;
      }
      const stream = websocketAcpStream(socket, { maxBufferedBytes: ACP_MAX_BUFFERED_BYTES }, () =>
        close(WS_CLOSE.slowConsumer, `slow consumer: more than ${ACP_MAX_BUFFERED_BYTES} bytes unread`),
      );
      // Sessions other nodes own are served there, over ACP connections opened with the editor's credentials.
      const relay = new AcpOwnerRelay({
        target: (error) => ctx.forwarder.targetFor(request, error),
        headers: () => ({
          ...(authorization !== undefined ? { authorization } : {}),
          [FORWARDED_HEADER]: ctx.forwarder.sign('GET', '/acp', request.ip),
        }),
      });
      const connection = createAcpAgent(ctx, caller, relay).connect(stream);
      socket.on('close', () => {
        connection.close();
        relay.close();
      });
      void connection.closed.then(() => close(WS_CLOSE.normal, 'ACP connection closed'));
    };
    const authenticate = (credentials: SocketCredentials) => {
      const authenticated = authenticateSocket(ctx.authenticator, credentials);
      if ('caller' in authenticated) return authenticated.caller;
      close(WS_CLOSE.unauthorized, authenticated.refused);
      return undefined;
    };
    socket.on('close', () => clearTimeout(authTimer));
    if (byHeader) {
      const caller = authenticate({ header: request.headers.authorization });
      if (caller) serve(caller, request.headers.authorization);
      return;
    }
    socket.once('message', (data) => {
      clearTimeout(authTimer);
      const parsed = AuthFrameSchema.safeParse(parseJsonFrame(data)?.value);
      if (!parsed.success) {
        close(
          WS_CLOSE.unauthorized,
          'authenticate first: send the Authorization header, or {"type":"auth","token":"..."} as the first frame',
        );
        return;
      }
      const caller = authenticate({ token: parsed.data.token });
      if (caller) serve(caller, `Bearer ${parsed.data.token}`);
    });
  };

  app.route({
    method: 'GET',
    url: '/acp',
    handler: async (_request, reply) => {
      reply.header('upgrade', 'websocket');
      throw new CodeError(
        'UPGRADE_REQUIRED',
        'GET /acp is a WebSocket endpoint (ACP JSON-RPC): send the request with "Connection: Upgrade" and "Upgrade: websocket", or use `a3s acp` as a stdio bridge',
      );
    },
    wsHandler: onSocket,
  });
}
