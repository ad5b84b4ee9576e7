import type { LoopCheckpoint } from '../../protocol/loop-checkpoint.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { WebhookEvent } from '../../protocol/webhooks.js';
import type { SessionKey } from '../../stores/session-key.js';

/** A run's webhook once checked (URL, tenant secret): where to POST, which events, and whether private addresses may be named. */
export interface ResolvedRunWebhook {
  readonly url: string;
  readonly events: readonly WebhookEvent[];
  readonly allowPrivate: boolean;
}

/** What a confirmation_required event tells a webhook. */
export interface WebhookConfirmation {
  readonly tool_id: string;
  readonly tool_name: string;
  readonly timeout_ms: number;
}

/** One run's link to its webhook, made when the run starts. */
export interface RunWebhookTap {
  /** True when the run's confirmation_required events should be passed to `confirmation`. */
  readonly listens: boolean;
  /** The run asked for a confirmation. */
  confirmation(record: RunRecord, confirmation: WebhookConfirmation): void;
  /** The run ended (its record is terminal). */
  ended(record: RunRecord): void;
}

/** The runs' side of run webhooks (docs/webhooks.md): told when a run starts; absent on servers without them. */
export interface RunWebhooks {
  /**
   * A run starts with `webhook` (checked by the route), or resumes from `resumeFrom` (its origin's webhook, if any,
   * is read from the store): answers the run's tap, or undefined when the run has no webhook to look for.
   */
  runStarted(
    session: SessionKey,
    tenantId: string,
    record: RunRecord,
    request: { readonly webhook?: ResolvedRunWebhook; readonly resumeFrom?: Pick<LoopCheckpoint, 'run_id'> },
  ): RunWebhookTap | undefined;
  /** Forget a purged session's webhooks and deliveries. */
  removeSession(session: SessionKey): Promise<void>;
}
