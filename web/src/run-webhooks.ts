import type { WebhookDelivery } from '../../src/client/index.js';
import type { ConsoleContext } from './console-context.js';
import { el, replaceChildren } from './el.js';
import { errorText, formatTime } from './format.js';
import { statusChip } from './verification-rows.js';

/** How long after a run's end (or a confirmation) the log is read again for a delivery not recorded yet. */
const SETTLE_MS = 5_000;
/** The poll while something is pending or settling: at least 1 s apart, at most 30 s. */
const MIN_POLL_MS = 1_000;
const MAX_POLL_MS = 30_000;

/** A URL without its query or fragment (where a token may travel), for a tooltip. */
function where(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '';
  }
}

/** One delivery as a list item: event, status, delivery id, attempts, the last answer or error, and when. */
function deliveryItem(delivery: WebhookDelivery): HTMLElement {
  const attempts = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`;
  const when =
    delivery.status === 'delivered'
      ? `delivered ${formatTime(delivery.deliveredAtMs ?? undefined)}`
      : delivery.status === 'pending' && delivery.nextAttemptAtMs !== null
        ? `next attempt ${formatTime(delivery.nextAttemptAtMs)}`
        : '';
  return el(
    'li',
    {
      class: 'delivery',
      'data-delivery-id': delivery.deliveryId,
      'data-event': delivery.event,
      'data-status': delivery.status,
      title: where(delivery.url),
    },
    el('span', { class: 'delivery-event' }, delivery.event),
    ' ',
    statusChip(delivery.status),
    ' ',
    el('code', { class: 'delivery-id' }, delivery.deliveryId),
    el(
      'span',
      { class: 'delivery-facts muted' },
      ` · ${attempts}`,
      delivery.lastStatus !== null ? ` · HTTP ${delivery.lastStatus}` : '',
      when ? ` · ${when}` : '',
    ),
    delivery.lastError !== null ? el('span', { class: 'delivery-error run-error' }, delivery.lastError) : null,
  );
}

/**
 * The session's webhook deliveries (GET /v1/sessions/:id/webhooks/deliveries), by run: each run's list for its row
 * of the runs panel. A delivery is recorded just after its run ends (or asks a confirmation) and attempted on a
 * schedule, so the log is read again while one is pending (at its next attempt) and for a few seconds after a run
 * ended; `onChange` tells the runs panel to fill its rows again.
 */
export class RunWebhooks {
  private byRun = new Map<string, WebhookDelivery[]>();
  private error: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private settleUntil = 0;
  private loading: Promise<void> | undefined;
  private disposed = false;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly sessionId: string,
    private readonly onChange: () => void,
  ) {}

  /** Read the log (one read at a time), then plan the next read. */
  refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
      this.plan();
    });
    return this.loading;
  }

  /** A run ended or asked a confirmation: its delivery may be recorded in a moment, so keep reading for a while. */
  settle(): void {
    this.settleUntil = Date.now() + SETTLE_MS;
    this.plan();
  }

  /** Fill `slot` (a run row's) with the run's deliveries; empty and hidden when it has none. */
  fill(slot: HTMLElement, runId: string): void {
    const deliveries = this.byRun.get(runId) ?? [];
    slot.hidden = deliveries.length === 0;
    if (deliveries.length === 0) {
      replaceChildren(slot);
      return;
    }
    replaceChildren(
      slot,
      el('p', { class: 'role' }, 'Webhooks'),
      el('ul', { class: 'deliveries' }, ...deliveries.map((delivery) => deliveryItem(delivery))),
    );
  }

  /** Why the log could not be read, if it could not. */
  get failure(): string | undefined {
    return this.error;
  }

  /** Stop reading. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
  }

  private async load(): Promise<void> {
    let deliveries: WebhookDelivery[];
    try {
      deliveries = await this.ctx.client.webhookDeliveries(this.sessionId);
    } catch (error) {
      if (this.disposed || this.ctx.unauthorized(error)) return;
      this.error = `Webhook deliveries not loaded: ${errorText(error)}`;
      this.onChange();
      return;
    }
    if (this.disposed) return;
    const byRun = new Map<string, WebhookDelivery[]>();
    // The log is newest first; a run's list reads in the order its events happened.
    for (const delivery of [...deliveries].reverse()) {
      const list = byRun.get(delivery.runId) ?? [];
      list.push(delivery);
      byRun.set(delivery.runId, list);
    }
    this.byRun = byRun;
    this.error = undefined;
    this.onChange();
  }

  /** The next read: at the soonest pending attempt (or every second while settling), bounded. */
  private plan(): void {
    clearTimeout(this.timer);
    if (this.disposed || this.loading) return;
    const now = Date.now();
    const due: number[] = [];
    for (const list of this.byRun.values())
      for (const delivery of list)
        if (delivery.status === 'pending') due.push((delivery.nextAttemptAtMs ?? now) - now + 500);
    if (now < this.settleUntil) due.push(MIN_POLL_MS);
    if (due.length === 0) return;
    const delay = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Math.min(...due)));
    this.timer = setTimeout(() => void this.refresh(), delay);
  }
}
