import { z } from 'zod';

/** The attempts of a run webhook delivery, as delays from when it was recorded: 0 s, 10 s, 1 min, 5 min, 30 min, 2 h. */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [0, 10_000, 60_000, 300_000, 1_800_000, 7_200_000];

/**
 * Run webhooks (docs/webhooks.md): `secrets` per tenant id (one, or two while rotating: every delivery is signed
 * with each), the attempt schedule, each attempt's timeout, and how long a node's claim on a delivery lasts.
 */
export const WebhooksConfigSchema = z
  .object({
    /** Webhook signing secrets keyed by tenant id: the newest first; a second one is sent too while receivers rotate. */
    secrets: z
      .record(
        z.string().min(1),
        z
          .array(z.string().min(16, 'webhooks.secrets entries must be at least 16 characters'))
          .min(1, 'webhooks.secrets: give one secret, or two while rotating')
          .max(2, 'webhooks.secrets: at most two secrets per tenant (the new one and the one being retired)'),
      )
      .default({}),
    /** Delay of each attempt after the delivery was recorded (the first is normally 0); the last failure gives up. */
    retryDelaysMs: z
      .array(z.number().int().nonnegative().max(86_400_000))
      .min(1)
      .max(20)
      .refine(
        (list) => list.every((ms, i) => i === 0 || ms >= list[i - 1]!),
        'webhooks.retry_delays_ms must not decrease',
      )
      .default([...DEFAULT_WEBHOOK_RETRY_DELAYS_MS]),
    /** The longest one attempt waits for the receiver's answer. */
    attemptTimeoutMs: z.number().int().min(100).max(60_000).default(10_000),
    /** How long a node's claim on a delivery it is attempting lasts (another node takes a delivery whose claim lapsed). */
    claimTtlMs: z.number().int().min(1000).max(600_000).default(20_000),
    /** How often a node looks for due deliveries no node holds (its own timers start the ones it recorded). */
    scanIntervalMs: z.number().int().min(100).max(600_000).default(5_000),
  })
  .strict()
  .refine((c) => c.claimTtlMs > c.attemptTimeoutMs, {
    message: 'webhooks.claim_ttl_ms must be longer than webhooks.attempt_timeout_ms',
    path: ['claimTtlMs'],
  });

/** The webhook settings. */
export type WebhooksConfig = z.infer<typeof WebhooksConfigSchema>;
