import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import {
  HookCreatedResponseSchema,
  HookListResponseSchema,
  HookParamsSchema,
  HookRegistrationSchema,
  HookRemovedResponseSchema,
} from '../protocol/hooks.js';
import type { Caller } from '../runtime/ports/caller.js';
import { assertOutboundUrl, privateOutboundAllowed } from '../runtime/outbound/assert-outbound-url.js';
import type { HookEngine } from '../runtime/policy/hooks/hook-engine.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/**
 * Hook routes: register, list and remove a session's hooks. `getHooks` resolves the session's engine for
 * the caller (and throws SESSION_NOT_FOUND for another tenant's session). A websocket hook names the
 * `connection_id` of the `host_registered` frame its events WebSocket received in answer to a
 * `{"type":"host_register"}` message; it must be a socket of the caller's tenant.
 */
export function registerHookRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  getHooks: (sessionId: string, caller: Caller) => HookEngine,
): void {
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/hooks',
      summary: 'Register a hook (webhook or WebSocket host) for this session',
      description:
        'Gating events (pre_tool_use, permission_request, pre_prompt, pre_compact, pre_planning) wait for the hook and fail closed: an error or timeout blocks (after maxRetries). ' +
        'Observing events never block. Webhooks are server-side POSTs to the configured URL; without the host_direct scope (or config outbound.allow_private_networks) ' +
        'a URL whose host is or resolves to a loopback, private, link-local or other non-global address is refused (400 naming endpoint.url), and checked again at every call. ' +
        'Redirects are not followed. Websocket hooks need endpoint.connectionId, ' +
        'the connection_id of the "host_registered" frame an events WebSocket of the same tenant received in answer to its {"type":"host_register"} message.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: HookRegistrationSchema,
      responses: { 201: HookCreatedResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller, reply }) => {
      const engine = getHooks(params.id, caller);
      const allowPrivateNetworks = privateOutboundAllowed(caller, ctx.config);
      if (body.endpoint.type === 'webhook')
        await assertOutboundUrl(body.endpoint.url, 'endpoint.url', allowPrivateNetworks);
      const hook = engine.register(body, { tenantId: caller.tenantId, allowPrivateNetworks });
      reply.status(201);
      return { hook };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/hooks',
      summary: 'Hooks of this session (config hooks included), in run order',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: HookListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ hooks: getHooks(params.id, caller).list() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id/hooks/:hookId',
      summary: 'Remove a session hook (config hooks cannot be removed)',
      scope: 'sessions',
      params: HookParamsSchema,
      responses: { 200: HookRemovedResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => {
      if (!getHooks(params.id, caller).remove(params.hookId)) {
        throw new CodeError(
          'NOT_FOUND',
          `hook ${params.hookId} not found in session ${params.id} (config hooks cannot be removed)`,
          { hookId: params.hookId },
        );
      }
      return { removed: true as const, hookId: params.hookId };
    },
  );
}
