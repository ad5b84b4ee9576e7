import type { FastifyError, FastifyInstance } from 'fastify';
import { CodeError, ERROR_CATALOGUE, type ErrorCode } from '../errors.js';

function body(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
  return { error: { code, message, details } };
}

/** Fastify framework errors we map to catalogue codes (bad JSON, too large, wrong media type). */
function mapFastifyError(error: FastifyError): { code: ErrorCode; message: string } | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'PAYLOAD_TOO_LARGE', message: 'request body exceeds limits.bodyLimitBytes' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'VALIDATION_ERROR', message: 'body: content-type must be application/json' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'VALIDATION_ERROR', message: 'body: empty JSON body' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'VALIDATION_ERROR', message: `body: invalid JSON (${error.message})` };
    default:
      if (error.statusCode === 400 && error instanceof SyntaxError) return { code: 'VALIDATION_ERROR', message: `body: invalid JSON (${error.message})` };
      return undefined;
  }
}

/** Install the one error handler: coded errors map to their status; anything else is a logged 500 without internals. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof CodeError) {
      if (error.status >= 500) request.log.error({ err: error }, 'request failed');
      return reply.status(error.status).send(body(error.code, error.message, error.details));
    }
    const mapped = mapFastifyError(error);
    if (mapped) return reply.status(ERROR_CATALOGUE[mapped.code].status).send(body(mapped.code, mapped.message));
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.status(error.statusCode).send(body('VALIDATION_ERROR', error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(body('INTERNAL_ERROR', 'internal server error; see the server log'));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(body('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`));
  });
}
