import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { CodeError } from '../errors.js';
import type { Caller } from '../runtime/ports/caller.js';
import { forwardedRequestHeaders } from './request-forwarder.js';
import type { ServerContext } from './server-context.js';
import { proxySocket, SERVICE_RESTART, type ProxiedSocket } from './socket-proxy.js';

/** What becomes of an authenticated event socket: served here, or spliced to the owner. */
export type SocketRoute = { kind: 'local' } | { kind: 'proxied'; proxy: ProxiedSocket } | { kind: 'closed' };

/**
 * Route an authenticated event socket: when another node owns the session and forwarding applies, the
 * socket is proxied whole to the owner (authenticated there with `authorization`, the client's credentials)
 * so confirmations, hooks, host registration and external tasks work as on the owner; `local` means this
 * node serves it (it owns the session now, or the client asked not to be forwarded and follows the shared
 * stream). An owner that cannot take it closes the socket with 1012: the client reconnects.
 */
export async function routeEventSocket(
  ctx: ServerContext,
  socket: WebSocket,
  request: FastifyRequest,
  who: Caller,
  sessionId: string,
  authorization: string | undefined,
): Promise<SocketRoute> {
  let origin: string | undefined;
  try {
    await ctx.agent.ensureLocal(sessionId, who, false);
    return { kind: 'local' };
  } catch (error) {
    if (!(error instanceof CodeError) || error.code !== 'SESSION_OWNED_ELSEWHERE') return { kind: 'local' }; // the subscription answers it
    try {
      origin = ctx.forwarder.targetFor(request, error);
    } catch (unreachable) {
      socket.close(SERVICE_RESTART, (unreachable as Error).message.slice(0, 120));
      return { kind: 'closed' };
    }
    if (origin === undefined) return { kind: 'local' };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(forwardedRequestHeaders(request.headers)))
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  if (authorization !== undefined) headers.authorization = authorization;
  headers['a3s-forwarded'] = ctx.forwarder.sign('GET', request.url, request.ip);
  const url = `${origin.replace(/^http/, 'ws')}${request.url}`;
  return { kind: 'proxied', proxy: proxySocket(socket, url, headers, 64 * 1024) };
}
