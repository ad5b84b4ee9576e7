import { isDeepStrictEqual } from 'node:util';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { RevertState } from '../../protocol/revert.js';
import type { Usage } from '../../protocol/run-record.js';

/** A session's conversation state: the transcript, accumulated token usage and when a run last changed them. */
export class SessionTranscript {
  messages: ChatMessage[];
  usage: Usage;
  updatedAtMs: number;
  /**
   * Grows each time a run's committed transcript does not start with the one it replaced (a compaction, a run
   * with its own history): run records keep the epoch they started in, and a fork at a run of an older epoch is
   * refused, since its start no longer indexes these messages.
   */
  epoch: number;
  /**
   * The reverted runs (POST .../revert): their messages, cut from `messages` so the model no longer sees them, kept
   * for an unrevert until the next run drops them for good (`dropReverted`).
   */
  reverted: RevertState | undefined;

  constructor(
    createdAtMs: number,
    messages: ChatMessage[] = [],
    usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    epoch = 0,
    reverted?: RevertState,
  ) {
    this.messages = messages;
    this.usage = usage;
    this.updatedAtMs = createdAtMs;
    this.epoch = epoch;
    this.reverted = reverted;
  }

  /** A run starts after a revert: the reverted messages are gone for good (an unrevert is refused from now on). */
  dropReverted(): void {
    this.reverted = undefined;
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
    if (messages) {
      if (!startsWith(messages, this.messages)) this.epoch += 1;
      this.messages = messages;
    }
    this.usage = {
      promptTokens: this.usage.promptTokens + usage.promptTokens,
      completionTokens: this.usage.completionTokens + usage.completionTokens,
      totalTokens: this.usage.totalTokens + usage.totalTokens,
    };
    this.updatedAtMs = now;
  }
}

/** True when `messages` begins with every message of `prefix` (the same objects, or equal ones from a checkpoint). */
function startsWith(messages: readonly ChatMessage[], prefix: readonly ChatMessage[]): boolean {
  if (messages.length < prefix.length) return false;
  return prefix.every((message, i) => messages[i] === message || isDeepStrictEqual(messages[i], message));
}
