import { z } from 'zod';

/** Payload of a host-injected `budget_threshold_hit` (the seed's fields; a tenant- or cluster-level budget crossed a threshold). */
export const BudgetThresholdHitPayloadSchema = z
  .object({
    resource: z
      .string()
      .min(1)
      .max(200)
      .describe('llm_tokens, tool_calls, wall_time, usd_cost, or a host-defined resource'),
    kind: z.enum(['soft', 'hard']),
    consumed: z.number().nonnegative(),
    limit: z.number().nonnegative(),
    message: z.string().max(10_000).optional(),
    scope: z.string().min(1).max(200).optional(),
  })
  .strict();

/** Payload of `passivation_requested`: the owner saves, releases the lease and drops the session by the deadline. */
export const PassivationRequestedPayloadSchema = z
  .object({
    reason: z.string().min(1).max(200).describe('idle_reaper, node_drain, migration, manual, or a host-defined reason'),
    deadline_ms: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Epoch ms by which the session is passivated; an active run may finish until then (omitted: now)'),
  })
  .strict();

/** Payload of `peer_invocation`: another session (possibly another tenant's) invoked this one. */
export const PeerInvocationPayloadSchema = z
  .object({
    from_session_id: z.string().min(1).max(200),
    from_tenant_id: z.string().min(1).max(200).optional(),
    correlation_id: z.string().min(1).max(200).optional(),
  })
  .strict();

/** A cluster event the host injects into a session (POST /v1/sessions/:id/cluster-events), tagged by `type`. */
export const ClusterEventSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('budget_threshold_hit'), payload: BudgetThresholdHitPayloadSchema }).strict(),
    z.object({ type: z.literal('passivation_requested'), payload: PassivationRequestedPayloadSchema }).strict(),
    z.object({ type: z.literal('peer_invocation'), payload: PeerInvocationPayloadSchema }).strict(),
  ])
  .meta({ id: 'ClusterEvent' });

/** A parsed host-injected cluster event. */
export type ClusterEvent = z.infer<typeof ClusterEventSchema>;

/** The wire type of a cluster event. */
export type ClusterEventType = ClusterEvent['type'];

/** Answer of POST /v1/sessions/:id/cluster-events: the event was injected, and whether the session was passivated. */
export const ClusterEventInjectedResponseSchema = z
  .object({ injected: z.literal(true), type: z.string(), passivated: z.boolean() })
  .meta({ id: 'ClusterEventInjectedResponse' });
