import type { ChatMessage } from '../../protocol/chat-message.js';
import type { Usage } from '../../protocol/run-record.js';

/** A session's conversation state: the transcript, accumulated token usage and when a run last changed them. */
export class SessionTranscript {
  messages: ChatMessage[];
  usage: Usage;
  updatedAtMs: number;

  constructor(
    createdAtMs: number,
    messages: ChatMessage[] = [],
    usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
  ) {
    this.messages = messages;
    this.usage = usage;
    this.updatedAtMs = createdAtMs;
  }

  /** A copy of the transcript. */
  history(): ChatMessage[] {
    return [...this.messages];
  }

  /** Accumulated token usage (a copy). */
  totalUsage(): Usage {
    return { ...this.usage };
  }

  /** Apply a finished run: `messages` (undefined for a side question) become the transcript and its usage is added. */
  commitRun(messages: ChatMessage[] | undefined, usage: Usage, now: number): void {
    if (messages) this.messages = messages;
    this.usage = {
      promptTokens: this.usage.promptTokens + usage.promptTokens,
      completionTokens: this.usage.completionTokens + usage.completionTokens,
      totalTokens: this.usage.totalTokens + usage.totalTokens,
    };
    this.updatedAtMs = now;
  }
}
