import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CodeError, ERROR_CATALOGUE, type ErrorCode } from '../errors.js';
import { clientAddressOf } from './client-address.js';
import type { ClientFaultLog } from './client-fault-log.js';

/** The one error shape: `{error: {code, message, details}}`. */
export function errorBody(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
  return { error: { code, message, details } };
}

/** A complete HTTP/1.1 answer in our error shape, for a socket no reply object owns (parser errors, timeouts); it closes the connection. */
export function rawErrorResponse(code: ErrorCode, message: string, details: Record<string, unknown> = {}): string {
  const status = ERROR_CATALOGUE[code].status;
  const text = JSON.stringify(errorBody(code, message, details));
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}

/** Fastify framework errors we map to catalogue codes (bad JSON, too large, wrong media type, bad URL). */
export function mapFastifyError(error: FastifyError): { code: ErrorCode; message: string } | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'PAYLOAD_TOO_LARGE', message: 'request body exceeds limits.bodyLimitBytes' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'VALIDATION_ERROR', message: 'body: content-type must be application/json' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'VALIDATION_ERROR', message: 'body: empty JSON body' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'VALIDATION_ERROR', message: `body: invalid JSON (${error.message})` };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'BAD_REQUEST', message: 'headers.content-length: does not match the body received' };
    case 'FST_ERR_BAD_URL':
      return { code: 'BAD_REQUEST', message: 'url: a path segment is not valid percent-encoded UTF-8' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { code: 'URI_TOO_LONG', message: 'url: a path parameter is longer than 512 characters' };
    default:
      if (error.statusCode === 400 && error instanceof SyntaxError)
        return { code: 'VALIDATION_ERROR', message: `body: invalid JSON (${error.message})` };
      return undefined;
  }
}

/** A route pattern (`/v1/sessions/:id`) as a regular expression over request paths. */
function routePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/** What the error handler needs beside the app: the routes (for 405 Allow) and the rate-limited client fault log. */
export interface ErrorHandlerOptions {
  /** Every registered route (method, url pattern); read when a request matches none. */
  routes?: () => readonly { method: string; url: string }[];
  faults?: ClientFaultLog;
}

/** Fields a client-fault log line carries about its request. */
export function requestFields(request: FastifyRequest): Record<string, unknown> {
  return { reqId: request.id, method: request.method, path: request.url.split('?')[0], ip: clientAddressOf(request) };
}

/**
 * Install the one error handler: coded errors map to their status; anything else is a logged 500 without
 * internals. Client mistakes (4xx) are logged at info, rate limited per code; only 5xx are logged at error.
 * A path that exists for other methods answers 405 METHOD_NOT_ALLOWED with Allow; any other 404 NOT_FOUND.
 */
export function installErrorHandler(app: FastifyInstance, options: ErrorHandlerOptions = {}): void {
  const { faults } = options;
  const clientMistake = (request: FastifyRequest, status: number, code: ErrorCode, message: string) => {
    faults?.log(
      `http:${status}:${code}`,
      'info',
      { ...requestFields(request), status, code },
      `client error: ${message}`,
    );
  };
  const send = (
    request: FastifyRequest,
    reply: FastifyReply,
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
  ) => {
    const status = ERROR_CATALOGUE[code].status;
    if (status < 500) clientMistake(request, status, code, message);
    // A quota that frees up with time says when (QUOTA_EXCEEDED: concurrent runs, runs per minute).
    const retryAfter = details?.retryAfterSeconds;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(Math.ceil(retryAfter)));
    return reply.status(status).send(errorBody(code, message, details));
  };
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof CodeError) {
      if (error.status >= 500) request.log.error({ err: error }, 'request failed');
      return send(request, reply, error.code, error.message, error.details);
    }
    const mapped = mapFastifyError(error);
    if (mapped) return send(request, reply, mapped.code, mapped.message);
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      clientMistake(request, error.statusCode, 'VALIDATION_ERROR', error.message);
      return reply.status(error.statusCode).send(errorBody('VALIDATION_ERROR', error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(errorBody('INTERNAL_ERROR', 'internal server error; see the server log'));
  });
  let patterns: { method: string; pattern: RegExp }[] | undefined;
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    patterns ??= (options.routes?.() ?? []).map((route) => ({
      method: route.method,
      pattern: routePattern(route.url),
    }));
    const allowed = new Set(patterns.filter((route) => route.pattern.test(path)).map((route) => route.method));
    if (allowed.has('GET')) allowed.add('HEAD');
    if (allowed.size > 0) {
      const allow = [...allowed].sort().join(', ');
      reply.header('allow', allow);
      return send(
        request,
        reply,
        'METHOD_NOT_ALLOWED',
        `${request.method} is not allowed on ${path}; allowed: ${allow}`,
        { method: request.method, allow: [...allowed].sort() },
      );
    }
    return send(request, reply, 'NOT_FOUND', `no route ${request.method} ${path}`);
  });
}
