import { tenantPartOf, type SessionKey } from './session-key.js';

/** What one session keeps in Redis, each under `<prefix>{<tenant>/<session id>}:<part>`. */
export type RedisSessionPart = 'snapshot' | 'lease' | 'epoch' | 'events' | 'active-run' | 'home';

/**
 * A key of one session: `<prefix>{<tenant>/<session id>}:<part>`. Every key of a session shares the hash
 * tag `{<tenant>/<session id>}` (both parts encoded, so neither holds a brace), so each script that touches
 * a session's keys stays in one Redis Cluster slot.
 */
export function redisSessionKey(prefix: string, session: SessionKey, part: RedisSessionPart): string {
  return `${prefix}{${session}}:${part}`;
}

/** The hash of one run's loop checkpoint: `<prefix>{<tenant>/<session id>}:checkpoint:<run id>`. */
export function redisCheckpointKey(prefix: string, session: SessionKey, runId: string): string {
  return `${prefix}{${session}}:checkpoint:${runId}`;
}

/** The hash of a session's attachment references (field: attachment id): `<prefix>{<tenant>/<session id>}:attachments`. */
export function redisAttachmentsKey(prefix: string, session: SessionKey): string {
  return `${prefix}{${session}}:attachments`;
}

/** The hash of a session's change sets (field: run id, value: the change set's JSON): `<prefix>{<tenant>/<session id>}:changes`. */
export function redisChangeSetsKey(prefix: string, session: SessionKey): string {
  return `${prefix}{${session}}:changes`;
}

/** The hash of a session's run webhooks (`run:<run id>`) and deliveries (`delivery:<id>`): `<prefix>{<tenant>/<session id>}:webhooks`. */
export function redisWebhooksKey(prefix: string, session: SessionKey): string {
  return `${prefix}{${session}}:webhooks`;
}

/** A node's claim on one webhook delivery (a value with a TTL): `<prefix>{<tenant>/<session id>}:webhook-claim:<id>`. */
export function redisWebhookClaimKey(prefix: string, session: SessionKey, deliveryId: string): string {
  return `${prefix}{${session}}:webhook-claim:${deliveryId}`;
}

/** The sorted set of pending webhook deliveries of every session (member `<session key> <id>`, score: when due): `<prefix>webhooks:due`. */
export function redisWebhooksDueKey(prefix: string): string {
  return `${prefix}webhooks:due`;
}

/** The bytes of one attachment: `<prefix>{<tenant>/<session id>}:attachment:<attachment id>`. */
export function redisAttachmentKey(prefix: string, session: SessionKey, attachmentId: string): string {
  return `${prefix}{${session}}:attachment:${attachmentId}`;
}

/** The set of a tenant's stored session ids (encoded): `<prefix>tenant:{<tenant>}:sessions`. */
export function redisTenantSessionsKey(prefix: string, tenantPart: string): string {
  return `${prefix}tenant:{${tenantPart}}:sessions`;
}

/** The tenant index key of the tenant of `session`. */
export function redisTenantSessionsKeyOf(prefix: string, session: SessionKey): string {
  return redisTenantSessionsKey(prefix, tenantPartOf(session));
}

/** The set of encoded tenant ids that have stored sessions: `<prefix>tenants`. */
export function redisTenantsKey(prefix: string): string {
  return `${prefix}tenants`;
}

/** Keys of the layout before session ids were per tenant (read for migration only, never written). */
export const LEGACY_REDIS_KEYS = {
  /** The hash of a session's snapshot. */
  snapshot: (prefix: string, sessionId: string) => `${prefix}session:${sessionId}`,
  /** The global set of session ids. */
  index: (prefix: string) => `${prefix}sessions`,
  /** The stream of a session's events. */
  events: (prefix: string, sessionId: string) => `${prefix}events:${sessionId}`,
  /** The lease epoch of a session. */
  epoch: (prefix: string, sessionId: string) => `${prefix}epoch:${sessionId}`,
  /** The hash of a run's checkpoint. */
  checkpoint: (prefix: string, runId: string) => `${prefix}checkpoint:${runId}`,
} as const;
