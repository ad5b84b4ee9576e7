import type { StoredRunWebhook, StoredWebhookDelivery } from '../../protocol/webhooks.js';
import type { SessionKey } from '../../stores/session-key.js';

/** A due delivery's address: its session and id. */
export interface DueWebhookDelivery {
  readonly session: SessionKey;
  readonly deliveryId: string;
}

/**
 * Where run webhooks and their deliveries live, beside the session (memory, a file per session under the data
 * directory, or a Redis hash under the session's hash tag): a delivery is recorded here before its first attempt,
 * so its id survives the node; a node's claim on a delivery (with a TTL) keeps two nodes from attempting it at once.
 */
export interface WebhookStore {
  /** "memory", "file" or "redis". */
  readonly kind: string;
  /** Keep the webhook of run `runId` (travels with the run: a resume reads it, on any node). */
  putRunWebhook(session: SessionKey, runId: string, webhook: StoredRunWebhook): Promise<void>;
  /** The webhook of run `runId`, if it had one. */
  getRunWebhook(session: SessionKey, runId: string): Promise<StoredRunWebhook | undefined>;
  /** Record a delivery unless one of its id exists already; answers the stored one (the first wins). */
  createDelivery(session: SessionKey, delivery: StoredWebhookDelivery): Promise<StoredWebhookDelivery>;
  /** Replace a recorded delivery (after an attempt). */
  updateDelivery(session: SessionKey, delivery: StoredWebhookDelivery): Promise<void>;
  /** One recorded delivery. */
  getDelivery(session: SessionKey, deliveryId: string): Promise<StoredWebhookDelivery | undefined>;
  /** Every recorded delivery of the session, in no particular order. */
  listDeliveries(session: SessionKey): Promise<StoredWebhookDelivery[]>;
  /** Pending deliveries of any session whose next attempt is due at `nowMs`, at most `max`. */
  due(nowMs: number, max: number): Promise<DueWebhookDelivery[]>;
  /** Take the claim on a delivery for `owner` for `ttlMs`; false while another owner holds it. */
  claim(session: SessionKey, deliveryId: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Give a claim back (only `owner`'s own). */
  release(session: SessionKey, deliveryId: string, owner: string): Promise<void>;
  /** Remove every webhook and delivery of the session (purge, retention). */
  deleteSession(session: SessionKey): Promise<void>;
}
