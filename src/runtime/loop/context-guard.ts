import type { ChatMessage } from '../../protocol/chat-message.js';
import type { Usage } from '../../protocol/run-record.js';
import { contextTokens, messageBytes } from '../compaction/estimate-tokens.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { CompactionAttempt, ContextReading } from './context-reading.js';

/** What the guard needs of the loop's services. */
export interface ContextGuardDeps {
  compact?(
    messages: readonly ChatMessage[],
    reading: ContextReading,
    ctx: InvocationContext,
    force: boolean,
  ): Promise<CompactionAttempt | undefined>;
}

/** The guard's verdict before a turn: the transcript to send (compacted or not), usage spent on it, or why the turn must not happen. */
export interface ContextVerdict {
  messages?: ChatMessage[];
  usage?: Usage;
  error?: { code: 'TRANSCRIPT_TOO_LARGE' | 'CONTEXT_LIMIT_EXCEEDED'; message: string };
}

/**
 * Before every turn: auto-compaction when due, forced when the transcript is past its bound
 * (limits.maxTranscriptBytes / maxTranscriptMessages); then no provider request goes out while the transcript
 * is still past that bound (TRANSCRIPT_TOO_LARGE) or its estimated context is past the model's window
 * (CONTEXT_LIMIT_EXCEEDED: the provider's reported usage plus the UTF-8 bytes / 4 estimate of newer messages,
 * or the estimate of all messages when nothing was reported).
 */
export async function guardContext(
  deps: ContextGuardDeps,
  ctx: InvocationContext,
  messages: ChatMessage[],
  reading: ContextReading,
): Promise<ContextVerdict> {
  const g = ctx.governance;
  const over = (list: readonly ChatMessage[]): boolean =>
    list.length > g.maxTranscriptMessages || messageBytes(list) > g.maxTranscriptBytes;
  let current = messages;
  let usage: Usage | undefined;
  let compacted = false;
  const forced = over(current);
  if (deps.compact) {
    const attempt = await deps.compact(current, reading, ctx, forced);
    if (attempt) usage = attempt.usage;
    if (attempt?.messages) {
      current = attempt.messages;
      compacted = true;
    }
  }
  const verdict: ContextVerdict = { ...(compacted ? { messages: current } : {}), ...(usage ? { usage } : {}) };
  if (forced && over(current)) {
    verdict.error = {
      code: 'TRANSCRIPT_TOO_LARGE',
      message: `the transcript (${current.length} messages, ${messageBytes(current)} bytes) is past limits.maxTranscriptMessages (${g.maxTranscriptMessages}) or limits.maxTranscriptBytes (${g.maxTranscriptBytes}) and ${deps.compact ? 'could not be compacted' : 'autoCompact is off'}; compact it (/compact, POST .../compact) or start a new session`,
    };
    return verdict;
  }
  // The compaction's measure: the provider's count where it reported one (tool specs included), else the
  // messages' UTF-8 bytes / 4 (tool specs are not estimated, as in the seed).
  const used = contextTokens(current, compacted ? undefined : reading);
  if (used > g.maxContextTokens) {
    verdict.error = {
      code: 'CONTEXT_LIMIT_EXCEEDED',
      message: `the next provider request (about ${used} tokens) is past the model's context window (maxContextTokens ${g.maxContextTokens}); ${deps.compact ? 'the compaction did not bring it under' : 'turn autoCompact on, or /compact'}`,
    };
  }
  return verdict;
}
