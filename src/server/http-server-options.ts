import type { Server } from 'node:http';
import { LogController, type FastifyHttpOptions, type FastifyReply } from 'fastify';
import type { CodeConfig } from '../config/code-config.js';
import { ERROR_CATALOGUE } from '../errors.js';
import { handleClientError } from './client-error.js';
import type { ClientFaultLog } from './client-fault-log.js';
import { errorBody, mapFastifyError, requestFields } from './error-handler.js';

/** How often Node checks for requests whose headers are overdue: a fraction of the timeout, at most a second. */
export function connectionsCheckingInterval(headersTimeoutMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 4)));
}

/**
 * The Fastify (and Node http.Server) options for the configured limits: body size, router parameter length,
 * trust_proxy, the headers timeout (Node's, checked often enough to matter), the keep-alive idle timeout,
 * no whole-request timeout (the body timeout is ConnectionGuard's, measured from the headers, and a
 * `wait: true` run may legitimately take minutes) and the clientError handler that answers in our shape.
 */
export function httpServerOptions(config: CodeConfig, faults: ClientFaultLog): FastifyHttpOptions<Server> {
  const { limits } = config;
  return {
    bodyLimit: limits.bodyLimitBytes,
    // Request logs only when asked for, or at debug and trace: at info one line per request would drown the rest.
    logController: new LogController({
      disableRequestLogging: !(config.log.requests || config.logLevel === 'debug' || config.logLevel === 'trace'),
    }),
    // Session ids may be 128 characters and tool ids longer; Fastify's default (100) would 414 them.
    routerOptions: { maxParamLength: 512 },
    trustProxy: config.trustProxy,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingInterval(limits.headersTimeoutMs),
    },
    requestTimeout: 0,
    connectionTimeout: 0,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    clientErrorHandler: (error, socket) => handleClientError(error, socket, faults),
    // Errors the router finds before any route or hook (a bad percent-encoding, an over-long parameter).
    frameworkErrors: (error, request, reply) => {
      const { code, message } = mapFastifyError(error) ?? {
        code: 'BAD_REQUEST' as const,
        message: `malformed request (${error.message})`,
      };
      const status = ERROR_CATALOGUE[code].status;
      faults.log(
        `http:${status}:${code}`,
        'info',
        { ...requestFields(request), status, code },
        `client error: ${message}`,
      );
      void (reply as FastifyReply).status(status).send(errorBody(code, message));
    },
  };
}
