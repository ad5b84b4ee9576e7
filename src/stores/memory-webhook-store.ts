import type { StoredRunWebhook, StoredWebhookDelivery } from '../protocol/webhooks.js';
import type { DueWebhookDelivery, WebhookStore } from '../runtime/ports/webhook-store.js';
import type { SessionKey } from './session-key.js';

interface SessionWebhooks {
  runs: Map<string, StoredRunWebhook>;
  deliveries: Map<string, StoredWebhookDelivery>;
}

/** Claims of one process: owner and expiry by `<session>\n<delivery id>`. */
export class LocalClaims {
  private readonly claims = new Map<string, { owner: string; untilMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Take the claim unless another owner holds one that has not expired. */
  claim(key: string, owner: string, ttlMs: number): boolean {
    const held = this.claims.get(key);
    const now = this.now();
    if (held && held.owner !== owner && held.untilMs > now) return false;
    this.claims.set(key, { owner, untilMs: now + ttlMs });
    return true;
  }

  /** Drop `owner`'s claim. */
  release(key: string, owner: string): void {
    if (this.claims.get(key)?.owner === owner) this.claims.delete(key);
  }

  /** Drop every claim whose key starts with `prefix` (a purged session's). */
  dropPrefix(prefix: string): void {
    for (const key of this.claims.keys()) if (key.startsWith(prefix)) this.claims.delete(key);
  }
}

/** The due pending deliveries among `deliveries` of `session`. */
export function dueOf(
  session: SessionKey,
  deliveries: Iterable<StoredWebhookDelivery>,
  nowMs: number,
  out: DueWebhookDelivery[],
  max: number,
): void {
  for (const delivery of deliveries) {
    if (out.length >= max) return;
    if (delivery.status === 'pending' && (delivery.nextAttemptAtMs ?? 0) <= nowMs)
      out.push({ session, deliveryId: delivery.deliveryId });
  }
}

/** WebhookStore in this process's memory (storage_backend "memory"): gone with the process. */
export class MemoryWebhookStore implements WebhookStore {
  readonly kind = 'memory';
  private readonly sessions = new Map<SessionKey, SessionWebhooks>();
  private readonly claims = new LocalClaims();

  private of(session: SessionKey): SessionWebhooks {
    let entry = this.sessions.get(session);
    if (!entry) {
      entry = { runs: new Map(), deliveries: new Map() };
      this.sessions.set(session, entry);
    }
    return entry;
  }

  async putRunWebhook(session: SessionKey, runId: string, webhook: StoredRunWebhook): Promise<void> {
    this.of(session).runs.set(runId, { ...webhook });
  }

  async getRunWebhook(session: SessionKey, runId: string): Promise<StoredRunWebhook | undefined> {
    const found = this.sessions.get(session)?.runs.get(runId);
    return found ? { ...found } : undefined;
  }

  async createDelivery(session: SessionKey, delivery: StoredWebhookDelivery): Promise<StoredWebhookDelivery> {
    const deliveries = this.of(session).deliveries;
    const existing = deliveries.get(delivery.deliveryId);
    if (existing) return { ...existing };
    deliveries.set(delivery.deliveryId, { ...delivery });
    return { ...delivery };
  }

  async updateDelivery(session: SessionKey, delivery: StoredWebhookDelivery): Promise<void> {
    // A purged session's delivery is not brought back by an attempt that was under way.
    this.sessions.get(session)?.deliveries.set(delivery.deliveryId, { ...delivery });
  }

  async getDelivery(session: SessionKey, deliveryId: string): Promise<StoredWebhookDelivery | undefined> {
    const found = this.sessions.get(session)?.deliveries.get(deliveryId);
    return found ? { ...found } : undefined;
  }

  async listDeliveries(session: SessionKey): Promise<StoredWebhookDelivery[]> {
    return [...(this.sessions.get(session)?.deliveries.values() ?? [])].map((d) => ({ ...d }));
  }

  async due(nowMs: number, max: number): Promise<DueWebhookDelivery[]> {
    const out: DueWebhookDelivery[] = [];
    for (const [session, entry] of this.sessions) dueOf(session, entry.deliveries.values(), nowMs, out, max);
    return out;
  }

  async claim(session: SessionKey, deliveryId: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.claims.claim(`${session}\n${deliveryId}`, owner, ttlMs);
  }

  async release(session: SessionKey, deliveryId: string, owner: string): Promise<void> {
    this.claims.release(`${session}\n${deliveryId}`, owner);
  }

  async deleteSession(session: SessionKey): Promise<void> {
    this.sessions.delete(session);
    this.claims.dropPrefix(`${session}\n`);
  }
}
