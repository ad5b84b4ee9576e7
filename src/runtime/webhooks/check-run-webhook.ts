import type { WebhooksConfig } from '../../config/webhook-config.js';
import { CodeError } from '../../errors.js';
import { DEFAULT_WEBHOOK_EVENTS, type RunWebhook } from '../../protocol/webhooks.js';
import { assertOutboundUrl } from '../outbound/assert-outbound-url.js';
import type { OutboundResolver } from '../outbound/check-outbound-url.js';
import type { ResolvedRunWebhook } from '../ports/run-webhooks.js';

/** The signing secrets of a tenant (the newest first), or undefined when the operator set none. */
export function webhookSecretsOf(
  config: Pick<WebhooksConfig, 'secrets'>,
  tenantId: string,
): readonly string[] | undefined {
  return Object.hasOwn(config.secrets, tenantId) ? config.secrets[tenantId] : undefined;
}

/**
 * Check a webhook a caller gives (a run's, or a session's default): the tenant must have a secret (400
 * WEBHOOK_SECRET_MISSING naming `field`) and the URL must pass the outbound check (400 VALIDATION_ERROR naming
 * `<field>.url`: private, loopback and link-local addresses only with `allowPrivate`).
 */
export async function checkRunWebhook(
  webhook: RunWebhook,
  config: Pick<WebhooksConfig, 'secrets'>,
  tenantId: string,
  allowPrivate: boolean,
  field: string,
  resolve?: OutboundResolver,
): Promise<ResolvedRunWebhook> {
  if (webhookSecretsOf(config, tenantId) === undefined)
    throw new CodeError(
      'WEBHOOK_SECRET_MISSING',
      `${field}: the operator set no webhook secret for this tenant (config webhooks.secrets), so its webhooks cannot be signed`,
      { field },
    );
  await assertOutboundUrl(webhook.url, `${field}.url`, allowPrivate, resolve);
  return { url: webhook.url, events: webhook.events ?? DEFAULT_WEBHOOK_EVENTS, allowPrivate };
}

/**
 * The session default webhook (SessionOptions.webhook, checked when the session was created) as a run's, with the
 * creator's grant for private addresses; undefined when the session has none.
 */
export function sessionWebhookOf(config: {
  readonly options: { readonly webhook?: RunWebhook | undefined };
  readonly outboundAllowPrivate: boolean;
}): ResolvedRunWebhook | undefined {
  const webhook = config.options.webhook;
  if (webhook === undefined) return undefined;
  return {
    url: webhook.url,
    events: webhook.events ?? DEFAULT_WEBHOOK_EVENTS,
    allowPrivate: config.outboundAllowPrivate,
  };
}
