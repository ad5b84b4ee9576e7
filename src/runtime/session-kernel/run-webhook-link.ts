import type { RunRecord } from '../../protocol/run-record.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import type { ResolvedRunWebhook, RunWebhooks, WebhookConfirmation } from '../ports/run-webhooks.js';
import type { SessionKey } from '../../stores/session-key.js';
import { sessionWebhookOf } from '../webhooks/check-run-webhook.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';

/** A starting run's link to its webhook: told the run ended, then dropped. */
export interface RunWebhookLink {
  /** The run ended (`record` is terminal, with its counts). */
  ended(record: RunRecord): void;
  /** Stop listening for the run's confirmation_required events. */
  stop(): void;
}

/** What linking a run to its webhook reads. */
export interface RunWebhookStart {
  readonly webhooks: RunWebhooks | undefined;
  readonly config: Pick<ResolvedSessionConfig, 'options' | 'outboundAllowPrivate'>;
  readonly events: SessionEventLog;
  readonly sessionKey: SessionKey;
  readonly tenantId: string;
  /** The record as a webhook body sends it (with its counts). */
  readonly withCounts: (record: RunRecord) => RunRecord;
}

/**
 * Link a starting run to its webhook (docs/webhooks.md): its own, else the session's default (a resume its origin's;
 * a child's run none). Undefined when the run has none to look for: the common run pays one call.
 */
export function linkRunWebhook(
  start: RunWebhookStart,
  record: RunRecord,
  request: {
    readonly webhook?: ResolvedRunWebhook;
    readonly resumeFrom?: { readonly run_id: string };
    readonly child: boolean;
  },
): RunWebhookLink | undefined {
  const { webhooks } = start;
  if (webhooks === undefined) return undefined;
  const webhook =
    request.webhook ?? (!request.resumeFrom && !request.child ? sessionWebhookOf(start.config) : undefined);
  const tap = webhooks.runStarted(start.sessionKey, start.tenantId, record, {
    ...(webhook !== undefined ? { webhook } : {}),
    ...(request.resumeFrom !== undefined ? { resumeFrom: request.resumeFrom } : {}),
  });
  if (tap === undefined) return undefined;
  const unlisten = tap.listens
    ? start.events.listen((event) => {
        if (event.type === 'confirmation_required' && event.metadata.run_id === record.runId)
          tap.confirmation(start.withCounts(record), event.payload as unknown as WebhookConfirmation);
      })
    : undefined;
  return { ended: (ended) => tap.ended(start.withCounts(ended)), stop: () => unlisten?.() };
}
