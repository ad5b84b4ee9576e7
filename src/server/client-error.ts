import type { Socket } from 'node:net';
import type { ErrorCode } from '../errors.js';
import type { ClientFaultLog } from './client-fault-log.js';
import { rawErrorResponse } from './error-handler.js';
import { plainAddress } from './client-address.js';

/** An error Node's HTTP parser (or its request timeout) reports through the server's `clientError` event. */
export interface ParserError extends Error {
  code?: string;
  reason?: string;
}

/** The catalogue code and message for a Node parser error (`HPE_*`, `ERR_HTTP_REQUEST_TIMEOUT`). */
export function classifyClientError(error: ParserError): { code: ErrorCode; message: string } {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        code: 'REQUEST_TIMEOUT',
        message: 'the request line and headers did not arrive within limits.headersTimeoutMs',
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'HEADERS_TOO_LARGE',
        message: 'the request line and headers exceed 16 KiB (a URL or a header is too long)',
      };
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { code: 'BAD_REQUEST', message: `body: malformed request framing (${error.reason ?? error.code})` };
    case 'HPE_INVALID_METHOD':
      return { code: 'BAD_REQUEST', message: 'the request method is not valid HTTP' };
    default:
      return {
        code: 'BAD_REQUEST',
        message: `malformed HTTP request (${error.reason ?? error.code ?? 'parse error'})`,
      };
  }
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused (bad header bytes, overflow, framing) or
 * whose headers timed out gets an answer in our error shape when nothing has been written to the socket yet,
 * then the socket is closed. Resets and already-closed sockets are logged (rate limited) and left alone.
 */
export function handleClientError(error: ParserError, socket: Socket, faults: ClientFaultLog): void {
  const address = plainAddress(socket.remoteAddress);
  if (error.code === 'ECONNRESET' || socket.destroyed) {
    faults.log('http:aborted', 'info', { ip: address, err: error.code }, 'client closed the connection mid-request');
    if (!socket.destroyed) socket.destroy();
    return;
  }
  const { code, message } = classifyClientError(error);
  faults.log(
    `http:client-error:${error.code ?? 'unknown'}`,
    code === 'REQUEST_TIMEOUT' ? 'warn' : 'info',
    { ip: address, err: error.code, code },
    `client error: ${message}`,
  );
  // A response already under way on this socket (its headers sent) cannot be followed by a second one.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    socket.end(rawErrorResponse(code, message, { reason: error.code ?? null }));
    setTimeout(() => socket.destroy(), 1000).unref();
  } else {
    socket.destroy();
  }
}
