import type { ChatMessage } from '../../protocol/chat-message.js';

/**
 * A request that a run stop at its next safe point (before its next provider call: after a tool round, or
 * before its first turn), keeping what it did; `reason` becomes the cancelled run's error message once set.
 */
export interface SafePointStop {
  reason: string | undefined;
  /** The loop is at the safe point before turn `turn`: the steers to append there, as user messages, in order. */
  atSafePoint?(turn: number): ChatMessage[];
}
