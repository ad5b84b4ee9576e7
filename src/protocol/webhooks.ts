import { z } from 'zod';
import { AgentResultSchema, RunRecordSchema } from './run-record.js';

/** What a run webhook can be told of: the run's end (one of three) and each confirmation it asks for. */
export const WEBHOOK_EVENTS = ['run_completed', 'run_failed', 'run_cancelled', 'confirmation_required'] as const;

/** One webhook event name. */
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The events a webhook without `events` is sent: the run's end, whichever it is. */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEvent[] = ['run_completed', 'run_failed', 'run_cancelled'];

/**
 * A run's webhook (`webhook` of POST .../runs, or the session default `webhook` of POST /v1/sessions): where the
 * server POSTs the run record when one of `events` happens, signed with the tenant's webhook secret (docs/webhooks.md).
 */
export const RunWebhookSchema = z
  .object({
    url: z.string().min(1).max(2048).describe('An absolute http:// or https:// URL without user information.'),
    events: z
      .array(z.enum(WEBHOOK_EVENTS))
      .min(1)
      .max(WEBHOOK_EVENTS.length)
      .refine((list) => new Set(list).size === list.length, 'events must not repeat')
      .optional()
      .describe('Default: run_completed, run_failed and run_cancelled.'),
  })
  .strict()
  .meta({ id: 'RunWebhook' });

/** A run's webhook as the caller gave it. */
export type RunWebhook = z.infer<typeof RunWebhookSchema>;

/** A delivery's state: waiting for its next attempt, answered 2xx, or given up after the last attempt. */
export const WebhookDeliveryStatusSchema = z.enum(['pending', 'delivered', 'failed']);

/** One entry of the delivery log (GET /v1/sessions/:id/webhooks/deliveries). */
export const WebhookDeliverySchema = z
  .object({
    /** Stable across retries, nodes and a resumed run (A3S-Delivery-Id): a receiver drops repeats by it. */
    deliveryId: z.string(),
    event: z.enum(WEBHOOK_EVENTS),
    sessionId: z.string(),
    runId: z.string(),
    url: z.string(),
    status: WebhookDeliveryStatusSchema,
    attempts: z.number().int().nonnegative(),
    createdAtMs: z.number().int().nonnegative(),
    /** When the next attempt is due (pending only). */
    nextAttemptAtMs: z.number().int().nonnegative().nullable(),
    lastAttemptAtMs: z.number().int().nonnegative().nullable(),
    /** The HTTP status of the last answer, null when none came (timeout, refused, network). */
    lastStatus: z.number().int().nullable(),
    /** Why the last attempt failed (never the receiver's answer body), null after a success. */
    lastError: z.string().nullable(),
    deliveredAtMs: z.number().int().nonnegative().nullable(),
  })
  .strict()
  .meta({ id: 'WebhookDelivery' });

/** One delivery log entry. */
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

/** A delivery as the store keeps it: the log entry, the exact body every attempt sends, and its URL check. */
export const StoredWebhookDeliverySchema = WebhookDeliverySchema.extend({
  tenantId: z.string(),
  /** The JSON body (the same bytes on every attempt, so its signature input differs only by the time). */
  body: z.string(),
  /** The URL may name private addresses (decided when the webhook was given, from the caller's scopes). */
  allowPrivate: z.boolean(),
}).strict();

/** A stored delivery. */
export type StoredWebhookDelivery = z.infer<typeof StoredWebhookDeliverySchema>;

/** A run's webhook as stored beside the session, so a resumed run (on any node) delivers as its origin would. */
export const StoredRunWebhookSchema = z
  .object({
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    allowPrivate: z.boolean(),
    /** The run the webhook was given to: delivery ids are derived from it, so a resumed run keeps them. */
    originRunId: z.string(),
  })
  .strict();

/** A stored run webhook. */
export type StoredRunWebhook = z.infer<typeof StoredRunWebhookSchema>;

/** The body a webhook receives (JSON): the event, the run record with its AgentResult, and what the event adds. */
export const WebhookBodySchema = z
  .object({
    type: z.enum(WEBHOOK_EVENTS),
    deliveryId: z.string(),
    sessionId: z.string(),
    runId: z.string(),
    /** The run this webhook was given to (differs from runId for a resumed run). */
    originRunId: z.string(),
    run: RunRecordSchema,
    result: AgentResultSchema.nullable(),
    /** The run's change set digest and size, when it has one (docs/changes.md). */
    changeSet: z.object({ patchDigest: z.string(), patchBytes: z.number().int(), files: z.number().int() }).nullable(),
    /** confirmation_required only: the call that waits. */
    confirmation: z.object({ toolId: z.string(), toolName: z.string(), timeoutMs: z.number().int() }).optional(),
  })
  .strict()
  .meta({ id: 'WebhookBody' });

/** A webhook body. */
export type WebhookBody = z.infer<typeof WebhookBodySchema>;

/** Answer of GET /v1/sessions/:id/webhooks/deliveries: newest first. */
export const WebhookDeliveriesResponseSchema = z
  .object({ deliveries: z.array(WebhookDeliverySchema) })
  .meta({ id: 'WebhookDeliveries' });

/** The delivery log. */
export type WebhookDeliveriesResponse = z.infer<typeof WebhookDeliveriesResponseSchema>;
