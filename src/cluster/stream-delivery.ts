import type { EventEnvelope } from '../protocol/event-envelope.js';
import { decodeStreamEntry, sequenceOfStreamId } from './stream-entry.js';

/** One follow() of a session stream: its cursor, its callback and how it ends. */
export interface StreamFollow {
  key: string;
  /** session_sequence of the last event delivered (or the starting cursor). */
  after: number;
  onEvent: (event: EventEnvelope) => void;
  /** End the follow (resolve, or reject with `error`); idempotent. */
  settle: (error?: unknown) => void;
}

/**
 * Hand each entry read from stream `key` after `readAfter` to the follows whose cursor it passes, in
 * order and once each. A follow whose cursor is below `readAfter` (it joined during the read) gets none of
 * it: the entries between its cursor and the read's would be skipped, so the next read starts at its cursor.
 * An invalid entry ends the follows waiting for it with the error (skipping it would be a silent gap).
 */
export function deliverStreamEntries(
  key: string,
  entries: ReadonlyArray<[id: string, fields: string[]]>,
  readAfter: number,
  follows: Iterable<StreamFollow>,
  isLive: (follow: StreamFollow) => boolean,
): void {
  const candidates = [...follows].filter((follow) => follow.key === key && follow.after >= readAfter);
  for (const [id, fields] of entries) {
    const sequence = sequenceOfStreamId(id);
    const waiting = candidates.filter((follow) => follow.after < sequence && isLive(follow));
    if (waiting.length === 0) continue;
    let event: EventEnvelope;
    try {
      event = decodeStreamEntry(key, id, fields);
    } catch (error) {
      for (const follow of waiting) follow.settle(error);
      continue;
    }
    for (const follow of waiting) {
      follow.after = sequence;
      try {
        follow.onEvent(event);
      } catch (error) {
        follow.settle(error);
      }
    }
  }
}
