import type { ChatMessage } from '../../protocol/chat-message.js';
import { estimateMessageTokens } from './estimate-tokens.js';

/** The seed's bound on the recent messages a compaction keeps. */
export const MAX_KEPT_MESSAGES = 20;

/** A transcript (without its system message) cut into the part to summarise and the recent part kept verbatim. */
export interface CompactionSplit {
  readonly older: ChatMessage[];
  readonly kept: ChatMessage[];
}

/**
 * Cut the transcript: keep the last min(20, max(1, n/2)) messages, moving the cut earlier while it would
 * start the kept part with a tool result (so a result never leaves the assistant message holding its call),
 * then drop whole turns (a message and the tool results after it) from the front of the kept part, into the
 * summarised part, until the kept part fits `keepBudgetTokens`.
 */
export function splitForCompaction(messages: readonly ChatMessage[], keepBudgetTokens: number): CompactionSplit {
  const n = messages.length;
  let cut = n - Math.min(MAX_KEPT_MESSAGES, Math.max(1, Math.floor(n / 2)));
  while (cut > 0 && messages[cut]?.role === 'tool') cut -= 1;
  let kept = messages.slice(cut);
  while (kept.length > 0 && estimateMessageTokens(kept) > keepBudgetTokens) {
    let next = 1;
    while (next < kept.length && kept[next]?.role === 'tool') next += 1;
    cut += next;
    kept = kept.slice(next);
  }
  return { older: messages.slice(0, cut), kept };
}
