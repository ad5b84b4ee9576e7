import type { FastifyInstance } from 'fastify';
import type { RuntimeContext } from '../context.js';
import { AuthTicketBodySchema, AuthTicketResponseSchema, type AuthTicketResponse } from '../protocol/auth-ticket.js';
import { ErrorBodySchema } from '../protocol/http.js';
import { addressedCaller } from '../runtime/live-sessions/session-address.js';
import { eventTicketsFor } from '../server/event-tickets.js';
import { addRoute } from '../server/route.js';
import { sessionKey } from '../stores/session-key.js';

/** POST /v1/auth/ticket {sessionId}: a short-lived ticket for that session's events route (EventSource cannot set headers). */
export function registerAuthTicketRoutes(app: FastifyInstance, ctx: RuntimeContext): void {
  const tickets = eventTicketsFor(ctx);
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/auth/ticket',
      summary: "Issue a ticket for one session's events route (SSE `?ticket=`, for EventSource)",
      description:
        'The ticket stands for the caller (principal, tenant, scopes) on GET /v1/sessions/:sessionId/events and nowhere else: ' +
        "any other route, or another session's events route, answers 401. It is accepted until expiresAt (limits.eventTicketTtlMs, default 60 s), " +
        'as often as the client reconnects; a stream opened with it stays open after it expires. The session is checked when the ticket is used, not here. ' +
        'A ticket is signed with the cluster secret (HMAC-SHA256), so every node of a cluster accepts it. Bearer tokens themselves never go in URLs.',
      scope: 'sessions',
      body: AuthTicketBodySchema,
      responses: { 200: AuthTicketResponseSchema, 400: ErrorBodySchema, 401: ErrorBodySchema, 403: ErrorBodySchema },
    },
    async ({ body, caller }): Promise<AuthTicketResponse> => {
      // Session ids are per tenant: the ticket names the caller's tenant's session, or (admins) the body's tenantId's.
      const who = addressedCaller(caller, body.tenantId, 'body');
      const { ticket, expiresAtMs } = tickets.issue(caller, sessionKey(who.tenantId, body.sessionId));
      return { ticket, expiresAt: new Date(expiresAtMs).toISOString(), expiresAtMs };
    },
  );
}
