import type { EventEnvelope } from '../../protocol/event-envelope.js';

/**
 * A hole in the retained events: every event with `after < session_sequence < firstAvailable` was
 * dropped by retention (or predates a restored snapshot's trace).
 */
export interface SequenceGap {
  after: number;
  firstAvailable: number;
}

/** What a subscriber gets when it attaches: retained events after its cursor, and the first hole, if any. */
export interface ReplayResult {
  events: EventEnvelope[];
  gap: SequenceGap | undefined;
}
