import type { EventEnvelope } from '../../protocol/event-envelope.js';

/** A page of one run's events. */
export interface RunEventPage {
  events: EventEnvelope[];
  retentionGap: { firstAvailableSequence: number } | undefined;
  nextAfter: number | undefined;
  /** The first per-run sequence still retained (null when none is). */
  firstAvailableSequence: number | null;
  /** One past the run's newest sequence: how many events it has emitted, dropped ones included. */
  latestSequenceExclusive: number;
  /** True when events after this page are retained. */
  hasMore: boolean;
}
