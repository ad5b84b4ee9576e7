import type { FastifyInstance } from 'fastify';
import { BudgetHostEndpointSchema, BudgetHostSetResponseSchema } from '../protocol/budget.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import { assertOutboundUrl, privateOutboundAllowed } from '../runtime/outbound/assert-outbound-url.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** Budget host routes: set or remove the external host a session's budget guard consults (fail closed). */
export function registerBudgetHostRoutes(app: FastifyInstance, ctx: ServerContext): void {
  addRoute(
    app,
    ctx,
    {
      method: 'PUT',
      url: '/v1/sessions/:id/budget-host',
      summary:
        'Set the external budget host of a session (a webhook, or a WebSocket host registered with host_register)',
      description:
        'The host is asked `budget_check` before every provider and tool call of the session, in addition to its built-in limits; a host that fails or does not answer within timeoutMs denies. ' +
        'Without the host_direct scope (or config outbound.allow_private_networks) a webhook url whose host is or resolves to a loopback, private, link-local or other non-global address is refused (400 naming url) and checked again at every call; redirects are not followed.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: BudgetHostEndpointSchema,
      responses: { 200: BudgetHostSetResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller }) => {
      const session = ctx.agent.getSession(params.id, caller);
      const allowPrivateNetworks = privateOutboundAllowed(caller, ctx.config);
      if (body.type === 'webhook') await assertOutboundUrl(body.url, 'url', allowPrivateNetworks);
      session.governance.setBudgetHost(body, allowPrivateNetworks);
      return { budgetHost: body.type };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id/budget-host',
      summary: 'Remove the external budget host of a session (its built-in limits stay)',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: BudgetHostSetResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => {
      ctx.agent.getSession(params.id, caller).governance.setBudgetHost(undefined);
      return { budgetHost: null };
    },
  );
}
