import { z } from 'zod';
import { WsQuerySchema } from './ws-messages.js';

/** POST /v1/auth/ticket body: the session whose events route the ticket opens (EventSource cannot set headers). */
export const AuthTicketBodySchema = z
  .object({
    sessionId: z.string().min(1).max(200),
    /** The tenant whose session `sessionId` names (default the caller's; another tenant's needs the admin scope). */
    tenantId: z.string().min(1).max(200).optional(),
  })
  .strict();

/** POST /v1/auth/ticket answer: an opaque ticket for `?ticket=` and when it stops being accepted. */
export const AuthTicketResponseSchema = z
  .object({
    ticket: z.string(),
    /** ISO 8601 time after which the ticket is refused (an open stream outlives it). */
    expiresAt: z.string(),
    /** The same instant in epoch milliseconds. */
    expiresAtMs: z.number().int(),
  })
  .strict();

/** The answer of POST /v1/auth/ticket. */
export type AuthTicketResponse = z.infer<typeof AuthTicketResponseSchema>;

/** Query of GET /v1/sessions/:id/events: the WebSocket's, plus `ticket` (SSE only, for clients that cannot set headers). */
export const EventStreamQuerySchema = WsQuerySchema.extend({
  /** A ticket from POST /v1/auth/ticket for this session (SSE; instead of the Authorization header). */
  ticket: z.string().min(1).max(4096).optional(),
}).strict();
