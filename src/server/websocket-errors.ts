import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { clientAddressOf } from './client-address.js';
import type { ClientFaultLog } from './client-fault-log.js';

/** True for what a WebSocket client did wrong (a protocol violation `ws` found, a reset) rather than a fault of ours. */
export function isClientSocketError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    (code.startsWith('WS_ERR_') || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT')
  );
}

/**
 * The `errorHandler` of @fastify/websocket (whose default logs every socket error at error level): a bad
 * frame or a reset is the client's, logged at warn and rate limited; anything else (a handler that threw)
 * is ours and logged at error. Either way the socket is terminated, as the plugin's default does.
 */
export function websocketErrorHandler(faults: ClientFaultLog) {
  return (error: Error, socket: WebSocket, request: FastifyRequest): void => {
    if (isClientSocketError(error)) {
      const code = (error as { code?: string }).code;
      faults.log(
        `ws:${code}`,
        'warn',
        { reqId: request.id, ip: clientAddressOf(request), path: request.url.split('?')[0], err: code },
        `WebSocket client error: ${error.message}`,
      );
    } else {
      request.log.error({ err: error }, 'WebSocket handler failed');
    }
    socket.terminate();
  };
}
