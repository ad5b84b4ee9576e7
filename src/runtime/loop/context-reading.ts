import type { ChatMessage } from '../../protocol/chat-message.js';
import type { Usage } from '../../protocol/run-record.js';

/** How full the context was when the provider last reported its usage, for the compaction check. */
export interface ContextReading {
  /** Tokens the provider reported for its last turn (prompt + completion); 0 when it reported none. */
  reportedTokens: number;
  /** Messages of the working transcript that reported count covers (the rest are estimated). */
  reportedMessages: number;
}

/** What an automatic compaction did before a turn. */
export interface CompactionAttempt {
  /** The compacted working transcript; absent when the compaction was refused or failed. */
  messages?: ChatMessage[];
  /** Usage of the summary call. */
  usage: Usage;
}
