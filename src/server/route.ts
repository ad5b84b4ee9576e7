import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { z } from 'zod';
import type { Scope } from '../config/api-token.js';
import { CodeError } from '../errors.js';
import { formatZodIssues, zodFieldIssues } from '../protocol/format-zod-issues.js';
import { addressedCaller } from '../runtime/live-sessions/session-address.js';
import { hasScope, type Caller } from '../runtime/ports/caller.js';
import { isSessionScoped, startsRun } from './openapi-registry.js';
import type { ServerContext } from './server-context.js';

/** A route: method, url, schemas (validation and OpenAPI) and the scope it needs (null: no auth). */
export interface RouteSpec<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  S extends Scope | null = Scope | null,
> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  description?: string;
  scope: S;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body's documented shape when the handler forwards the body (validated by `body` as a mere envelope)
   * to a validator whose faults are not 400s: the program route's tool invoker answers bad arguments with a tool result.
   */
  documentedBody?: z.ZodType;
  headers?: Record<string, string>;
  responses: Record<number, z.ZodType | null>;
  /** Media type of the success responses when not JSON (the handler sets the reply's content type); errors stay JSON. */
  produces?: string;
}

/** The caller a handler sees: the authenticated caller on routes with a scope, none on `scope: null` routes. */
export type RouteCaller<S extends Scope | null> = S extends Scope ? Caller : undefined;

/** What a handler receives: validated inputs and the caller (authenticated unless the route's scope is null). */
export interface RouteInput<P, Q, B, S extends Scope | null = Scope | null> {
  params: P;
  query: Q;
  body: B;
  caller: RouteCaller<S>;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** Turn zod issues into a VALIDATION_ERROR naming the first failing field (details.issues: the first 10). */
export function validationError(where: string, error: z.ZodError): CodeError {
  return new CodeError('VALIDATION_ERROR', formatZodIssues(error, { where }), {
    issues: zodFieldIssues(error, where, 10),
  });
}

function parse<T extends z.ZodType>(schema: T | undefined, value: unknown, where: string): z.infer<T> | undefined {
  if (!schema) return undefined;
  const result = schema.safeParse(value ?? (where === 'body' ? undefined : {}));
  if (!result.success) throw validationError(where, result.error);
  return result.data;
}

/**
 * True when a schema turns `{}` into `{}`: then an empty body needs no parse, whose cost grows with the
 * schema's keys, not the body's (SessionOptions has 80 optional keys; its parse of `{}` cost ~60 us of a
 * session creation in the runs workload). Any default, transform or refinement that changes or refuses `{}`
 * leaves the schema on the full parse.
 */
function parsesEmptyToEmpty(schema: z.ZodType | undefined): boolean {
  if (!schema) return false;
  const result = schema.safeParse({});
  return result.success && isEmptyPlainObject(result.data);
}

/** A plain object without own keys (what `{}` in a JSON body parses to). */
function isEmptyPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.getOwnPropertyNames(value).length === 0 && Object.getOwnPropertySymbols(value).length === 0;
}

/**
 * Run `ensureLocal`; when another node owns the session, forward the request there and stream its answer
 * (true: the reply is sent, the handler stops). SESSION_OWNED_ELSEWHERE stands only when the client asked
 * for it (A3S-Route: no-forward) or this node has no peers to forward to.
 */
export async function ensureLocalOrForward(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  ensureLocal: () => Promise<void>,
): Promise<boolean> {
  try {
    await ensureLocal();
    return false;
  } catch (error) {
    if (!(error instanceof CodeError) || error.code !== 'SESSION_OWNED_ELSEWHERE') throw error;
    const origin = ctx.forwarder.targetFor(request, error);
    if (origin === undefined) throw error;
    await ctx.forwarder.forward(request, reply, origin, error, request.body ?? undefined);
    return true;
  }
}

// The caller each request's onRequest hook authenticated, for its handler.
const callers = new WeakMap<FastifyRequest, Caller>();

/** Register a route with zod validation, bearer auth, scope check and OpenAPI documentation. */
export function addRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, S extends Scope | null>(
  app: FastifyInstance,
  ctx: ServerContext,
  spec: RouteSpec<P, Q, B, S>,
  handler: (input: RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>, S>) => Promise<unknown>,
): void {
  const { documentedBody, ...documented } = spec;
  ctx.openapi.add(documentedBody ? { ...documented, body: documentedBody } : documented);
  const sessionScoped = isSessionScoped(spec);
  const runStart = startsRun(spec);
  const scope = spec.scope;
  const emptyBodyIsEmpty = parsesEmptyToEmpty(spec.body);
  app.route({
    method: spec.method,
    url: spec.url,
    // Authentication and the scope check run before the body is read or parsed: an unauthenticated
    // caller gets 401 (403) whatever it sends, and never costs a JSON parse.
    ...(scope !== null
      ? {
          // A callback hook, not an async one: no promise per request on the hot path.
          onRequest: (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
            let caller: Caller;
            try {
              caller = ctx.authenticator.fromHeader(request.headers.authorization);
            } catch (error) {
              done(error as Error);
              return;
            }
            if (!hasScope(caller, scope)) {
              done(new CodeError('FORBIDDEN', `this route needs the "${scope}" scope`, { scope }));
              return;
            }
            callers.set(request, caller);
            done();
          },
        }
      : {}),
    handler: async (request, reply) => {
      let caller = scope !== null ? callers.get(request) : undefined;
      if (scope !== null && !caller)
        throw new CodeError('UNAUTHORIZED', 'missing Authorization: Bearer <token> header');
      const params = parse(spec.params, request.params, 'params');
      // A stored session that is not live here (passivated, or its owner node died) is hydrated first;
      // one another live node owns answers 421 (or SESSION_BUSY for a run request while it runs there).
      if (sessionScoped && caller) {
        // Session ids are per tenant: `:id` is the caller's tenant's, or (admins) the `tenantId` query's.
        caller = addressedCaller(caller, (request.query as { tenantId?: unknown } | undefined)?.tenantId);
        const id = (params as { id?: unknown } | undefined)?.id;
        if (
          typeof id === 'string' &&
          (await ensureLocalOrForward(ctx, request, reply, () => ctx.agent.ensureLocal(id, caller as Caller, runStart)))
        )
          return reply;
      }
      const raw = request.body ?? {};
      const body = spec.body
        ? emptyBodyIsEmpty && isEmptyPlainObject(raw)
          ? {}
          : parse(spec.body, raw, 'body')
        : undefined;
      const input = {
        params,
        query: parse(spec.query, request.query, 'query'),
        body,
        // Sound: caller is set exactly when spec.scope is not null, which is what RouteCaller<S> says.
        caller: caller as RouteCaller<S>,
        request,
        reply,
      } as RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>, S>;
      return handler(input);
    },
  });
}
