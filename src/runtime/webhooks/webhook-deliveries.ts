import { createHash } from 'node:crypto';
import type { WebhooksConfig } from '../../config/webhook-config.js';
import type { RunRecord } from '../../protocol/run-record.js';
import {
  type RunWebhook,
  type StoredRunWebhook,
  type StoredWebhookDelivery,
  type WebhookBody,
  type WebhookDelivery,
  type WebhookEvent,
} from '../../protocol/webhooks.js';
import { sessionIdOf, type SessionKey } from '../../stores/session-key.js';
import { checkRunWebhook, webhookSecretsOf } from './check-run-webhook.js';
import type { OutboundResolver } from '../outbound/check-outbound-url.js';
import type { ChangeSetStore } from '../ports/change-set-store.js';
import type { ResolvedRunWebhook, RunWebhooks, RunWebhookTap, WebhookConfirmation } from '../ports/run-webhooks.js';
import type { WebhookStore } from '../ports/webhook-store.js';
import { sendWebhook, type WebhookAttempt, type WebhookAttemptOutcome } from './send-webhook.js';
import {
  signatureHeader,
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
} from './webhook-signature.js';

/** What the deliveries need. */
export interface WebhookDeliveriesDeps {
  readonly config: WebhooksConfig;
  readonly store: WebhookStore;
  /** This node's id: the owner of its claims. */
  readonly nodeId: string;
  readonly now: () => number;
  /** Change sets, for the digest in a run's body (absent: bodies carry none). */
  readonly changeSets?: ChangeSetStore;
  /** Told of a failure of the machinery itself (the store); never given user content. */
  readonly onError: (what: string, error: unknown) => void;
  /** Sends one attempt (default: sendWebhook); a seam for name resolution in tests. */
  readonly send?: (attempt: WebhookAttempt) => Promise<WebhookAttemptOutcome>;
  readonly resolve?: OutboundResolver;
  /** The secret redactor's rule (shared with hooks and traces): applied to every string of a body before it is stored. */
  readonly redact?: (text: string) => string;
}

const TERMINAL_EVENT: Partial<Record<RunRecord['status'], WebhookEvent>> = {
  completed: 'run_completed',
  failed: 'run_failed',
  cancelled: 'run_cancelled',
};

/** A delivery's stable id: the session, the run the webhook was given to, the event and what tells its occurrences apart. */
export function deliveryIdOf(
  session: SessionKey,
  originRunId: string,
  event: WebhookEvent,
  occurrence: string,
): string {
  const digest = createHash('sha256').update(`${session}\n${originRunId}\n${event}\n${occurrence}`).digest('hex');
  return `whd_${digest.slice(0, 32)}`;
}

/** The log entry of a stored delivery (its body, tenant and URL grant stay in the store). */
export function deliveryView(stored: StoredWebhookDelivery): WebhookDelivery {
  return {
    deliveryId: stored.deliveryId,
    event: stored.event,
    sessionId: stored.sessionId,
    runId: stored.runId,
    url: stored.url,
    status: stored.status,
    attempts: stored.attempts,
    createdAtMs: stored.createdAtMs,
    nextAttemptAtMs: stored.nextAttemptAtMs,
    lastAttemptAtMs: stored.lastAttemptAtMs,
    lastStatus: stored.lastStatus,
    lastError: stored.lastError,
    deliveredAtMs: stored.deliveredAtMs,
  };
}

/**
 * Run webhooks: a run's webhook is checked when it is given (the tenant's secret, the URL), stored with the run (so
 * a resume on any node delivers as the run would have), and each event it asks for becomes a delivery recorded in
 * the store before its first attempt. Attempts follow `retryDelaysMs` (from when the delivery was recorded), each
 * under a claim with a TTL in the store, so exactly one node attempts a delivery at a time and a node that dies
 * leaves its pending deliveries to the next node's scan. A 2xx delivers; the last failed attempt gives up (failed).
 */
export class WebhookDeliveries implements RunWebhooks {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<string>();
  private scanner: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: WebhookDeliveriesDeps) {}

  /** Start the scan for due deliveries no node attempts (a dead node's, and this node's own after a restart). */
  start(): void {
    if (this.scanner || this.stopped) return;
    this.scanner = setInterval(() => void this.scan(), this.deps.config.scanIntervalMs);
    this.scanner.unref();
    void this.scan();
  }

  /** Stop scanning and attempting (the store keeps what is pending: another node or the next start takes it). */
  stop(): void {
    this.stopped = true;
    if (this.scanner) clearInterval(this.scanner);
    this.scanner = undefined;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Check a webhook a caller gives (checkRunWebhook: the tenant's secret, the URL). */
  check(webhook: RunWebhook, tenantId: string, allowPrivate: boolean, field: string): Promise<ResolvedRunWebhook> {
    return checkRunWebhook(webhook, this.deps.config, tenantId, allowPrivate, field, this.deps.resolve);
  }

  /** The session's delivery log, newest first. */
  async list(session: SessionKey): Promise<WebhookDelivery[]> {
    const stored = await this.deps.store.listDeliveries(session);
    return stored
      .map(deliveryView)
      .sort((a, b) => b.createdAtMs - a.createdAtMs || a.deliveryId.localeCompare(b.deliveryId));
  }

  /** Forget a purged session's webhooks and deliveries. */
  async removeSession(session: SessionKey): Promise<void> {
    for (const [key, timer] of this.timers)
      if (key.startsWith(`${session}\n`)) {
        clearTimeout(timer);
        this.timers.delete(key);
      }
    await this.deps.store.deleteSession(session);
  }

  runStarted(
    session: SessionKey,
    tenantId: string,
    record: RunRecord,
    request: { readonly webhook?: ResolvedRunWebhook; readonly resumeFrom?: { readonly run_id: string } },
  ): RunWebhookTap | undefined {
    const { webhook, resumeFrom } = request;
    let hook: Promise<StoredRunWebhook | undefined>;
    if (webhook !== undefined) {
      const stored: StoredRunWebhook = {
        url: webhook.url,
        events: [...webhook.events],
        allowPrivate: webhook.allowPrivate,
        originRunId: record.runId,
      };
      hook = this.deps.store.putRunWebhook(session, record.runId, stored).then(
        () => stored,
        (error: unknown) => {
          this.deps.onError('storing a run webhook failed', error);
          return stored;
        },
      );
    } else if (resumeFrom !== undefined) {
      // A resumed run delivers as the run it resumes would have, with delivery ids derived from the same origin.
      hook = this.deps.store.getRunWebhook(session, resumeFrom.run_id).then(
        async (origin) => {
          // Kept for the new run too, so a resume of this run finds it; a failure to keep it loses nothing now.
          if (origin)
            await this.deps.store
              .putRunWebhook(session, record.runId, origin)
              .catch((error: unknown) => this.deps.onError('storing a resumed run webhook failed', error));
          return origin;
        },
        (error: unknown) => {
          this.deps.onError('reading a resumed run webhook failed', error);
          return undefined;
        },
      );
    } else return undefined;
    const listens = webhook === undefined || webhook.events.includes('confirmation_required');
    return {
      listens,
      confirmation: (run, confirmation) => {
        void hook.then((h) =>
          h?.events.includes('confirmation_required')
            ? this.record(session, tenantId, h, 'confirmation_required', run, confirmation)
            : undefined,
        );
      },
      ended: (run) => {
        const event = TERMINAL_EVENT[run.status];
        if (event === undefined) return;
        void hook.then((h) => (h?.events.includes(event) ? this.record(session, tenantId, h, event, run) : undefined));
      },
    };
  }

  /** Build the delivery of one event, record it (before any attempt), then attempt it when due. */
  private async record(
    session: SessionKey,
    tenantId: string,
    hook: StoredRunWebhook,
    event: WebhookEvent,
    run: RunRecord,
    confirmation?: WebhookConfirmation,
  ): Promise<void> {
    try {
      const occurrence = confirmation ? confirmation.tool_id : run.runId;
      const deliveryId = deliveryIdOf(session, hook.originRunId, event, occurrence);
      const changeSet =
        event === 'confirmation_required'
          ? undefined
          : await this.deps.changeSets?.get(session, run.runId).catch(() => undefined);
      const body: WebhookBody = {
        type: event,
        deliveryId,
        sessionId: sessionIdOf(session),
        runId: run.runId,
        originRunId: hook.originRunId,
        run,
        result: run.result ?? null,
        changeSet: changeSet
          ? { patchDigest: changeSet.patch_digest, patchBytes: changeSet.patch_bytes, files: changeSet.files.length }
          : null,
        ...(confirmation
          ? {
              confirmation: {
                toolId: confirmation.tool_id,
                toolName: confirmation.tool_name,
                timeoutMs: confirmation.timeout_ms,
              },
            }
          : {}),
      };
      const now = this.deps.now();
      const stored = await this.deps.store.createDelivery(session, {
        deliveryId,
        event,
        sessionId: sessionIdOf(session),
        runId: run.runId,
        url: hook.url,
        status: 'pending',
        attempts: 0,
        createdAtMs: now,
        nextAttemptAtMs: now + (this.deps.config.retryDelaysMs[0] ?? 0),
        lastAttemptAtMs: null,
        lastStatus: null,
        lastError: null,
        deliveredAtMs: null,
        tenantId,
        body: this.bodyText(body),
        allowPrivate: hook.allowPrivate,
      });
      if (stored.status === 'pending') this.schedule(session, stored);
    } catch (error) {
      this.deps.onError('recording a webhook delivery failed', error);
    }
  }

  /** The body's JSON with every string value through the redactor (keys and the JSON's shape untouched). */
  private bodyText(body: WebhookBody): string {
    const redact = this.deps.redact;
    if (!redact) return JSON.stringify(body);
    return JSON.stringify(body, (_key, value: unknown) => (typeof value === 'string' ? redact(value) : value));
  }

  private schedule(session: SessionKey, delivery: StoredWebhookDelivery): void {
    if (this.stopped) return;
    const key = `${session}\n${delivery.deliveryId}`;
    clearTimeout(this.timers.get(key));
    const delay = Math.max(0, (delivery.nextAttemptAtMs ?? 0) - this.deps.now());
    const timer = setTimeout(() => {
      this.timers.delete(key);
      void this.attempt(session, delivery.deliveryId);
    }, delay);
    timer.unref();
    this.timers.set(key, timer);
  }

  private async scan(): Promise<void> {
    if (this.stopped) return;
    try {
      const due = await this.deps.store.due(this.deps.now(), 100);
      for (const entry of due) {
        const key = `${entry.session}\n${entry.deliveryId}`;
        if (!this.inFlight.has(key)) void this.attempt(entry.session, entry.deliveryId);
      }
    } catch (error) {
      this.deps.onError('scanning for due webhook deliveries failed', error);
    }
  }

  /** One attempt under this node's claim: re-read, send, record the outcome, schedule the next one. */
  private async attempt(session: SessionKey, deliveryId: string): Promise<void> {
    const key = `${session}\n${deliveryId}`;
    if (this.stopped || this.inFlight.has(key)) return;
    this.inFlight.add(key);
    const { store, config, nodeId } = this.deps;
    let claimed = false;
    try {
      claimed = await store.claim(session, deliveryId, nodeId, config.claimTtlMs);
      if (!claimed) return;
      const delivery = await store.getDelivery(session, deliveryId);
      const now = this.deps.now();
      if (!delivery || delivery.status !== 'pending') return;
      if ((delivery.nextAttemptAtMs ?? 0) > now) {
        this.schedule(session, delivery);
        return;
      }
      const outcome = await this.send(delivery);
      const attempts = delivery.attempts + 1;
      const ended = this.deps.now();
      const next = config.retryDelaysMs[attempts];
      const updated: StoredWebhookDelivery = {
        ...delivery,
        attempts,
        lastAttemptAtMs: ended,
        lastStatus: outcome.status,
        lastError: outcome.error,
        status: outcome.ok ? 'delivered' : next === undefined ? 'failed' : 'pending',
        nextAttemptAtMs: outcome.ok || next === undefined ? null : Math.max(ended, delivery.createdAtMs + next),
        deliveredAtMs: outcome.ok ? ended : null,
      };
      await store.updateDelivery(session, updated);
      if (updated.status === 'pending') this.schedule(session, updated);
    } catch (error) {
      this.deps.onError('a webhook delivery attempt failed to record', error);
    } finally {
      this.inFlight.delete(key);
      if (claimed) await store.release(session, deliveryId, nodeId).catch(() => undefined);
    }
  }

  private send(delivery: StoredWebhookDelivery): Promise<WebhookAttemptOutcome> {
    const secrets = webhookSecretsOf(this.deps.config, delivery.tenantId);
    if (secrets === undefined)
      return Promise.resolve({
        ok: false,
        status: null,
        error: 'the tenant has no webhook secret now (config webhooks.secrets): not sent',
      });
    const timestamp = Math.floor(this.deps.now() / 1000);
    const attempt: WebhookAttempt = {
      url: delivery.url,
      allowPrivate: delivery.allowPrivate,
      body: delivery.body,
      timeoutMs: this.deps.config.attemptTimeoutMs,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'a3s-code-server-webhooks',
        [WEBHOOK_DELIVERY_HEADER]: delivery.deliveryId,
        [WEBHOOK_EVENT_HEADER]: delivery.event,
        [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, delivery.body),
      },
      ...(this.deps.resolve ? { resolve: this.deps.resolve } : {}),
    };
    return (this.deps.send ?? sendWebhook)(attempt);
  }
}
