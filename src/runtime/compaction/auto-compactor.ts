import type { ChatMessage } from '../../protocol/chat-message.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { CompactionAttempt, ContextReading } from '../loop/context-reading.js';
import { compactTranscript, type CompactionDeps } from './compact-transcript.js';
import { contextTokens, estimateMessageTokens } from './estimate-tokens.js';

/** After an attempt that left the context over the threshold, the next waits until it grew by this share of the window. */
export const RETRY_GROWTH_SHARE = 0.1;

interface RunState {
  /** Transcript length at the last attempt: no new attempt without new messages. */
  length: number;
  /** Context size the next attempt needs (above the threshold when the last attempt could not get under it). */
  nextAtTokens: number;
  /** The last attempt compacted: the next check reads what the provider reported for the compacted prompt. */
  compacted: boolean;
}

/**
 * The loop's automatic compaction (LoopDeps.compact): before a turn whose context (provider-reported
 * usage plus the estimate of the newer messages) is at least autoCompactThreshold of maxContextTokens,
 * compact the working transcript. Per run it never tries twice without new messages, and after an
 * attempt that failed or left the context over the threshold it waits until the context grew by another
 * 10% of the window, so a refusing model or a kept part over the threshold cannot make every turn compact.
 * A forced compaction (the transcript past its bound) skips both rules.
 */
export class AutoCompactor {
  private readonly runs = new WeakMap<InvocationContext, RunState>();

  constructor(private readonly deps: CompactionDeps) {}

  /**
   * Answer the compacted transcript and the summary call's usage, or undefined when no compaction is due. A
   * compaction that was due but refused or failed answers no messages and emits `run_warning` (the run goes on).
   */
  async compact(
    messages: readonly ChatMessage[],
    reading: ContextReading,
    ctx: InvocationContext,
    force = false,
  ): Promise<CompactionAttempt | undefined> {
    const g = ctx.governance;
    const threshold = g.autoCompactThreshold * g.maxContextTokens;
    const used = contextTokens(messages, reading);
    const state = this.runs.get(ctx);
    const growth = RETRY_GROWTH_SHARE * g.maxContextTokens;
    if (state?.compacted) {
      state.compacted = false;
      // The provider's own count of the compacted prompt (tool specs and system prompt included) is still over
      // the threshold: compacting again now would not get under it either.
      if (reading.reportedTokens >= threshold) state.nextAtTokens = used + growth;
    }
    // Forced (the transcript is past limits.maxTranscriptBytes/Messages): compact whatever the threshold.
    if (!force && used < Math.max(threshold, state?.nextAtTokens ?? 0)) return undefined;
    if (!force && state && messages.length <= state.length) return undefined;
    const outcome = await compactTranscript(messages, used, 'auto', this.deps, ctx);
    if (outcome.kind === 'compacted') {
      const after = estimateMessageTokens(outcome.messages);
      this.runs.set(ctx, {
        length: outcome.messages.length,
        nextAtTokens: after >= threshold ? after + growth : threshold,
        compacted: true,
      });
      return { messages: outcome.messages, usage: outcome.usage };
    }
    this.runs.set(ctx, { length: messages.length, nextAtTokens: used + growth, compacted: false });
    if (outcome.reason !== 'nothing_to_compact' && outcome.reason !== 'cancelled')
      ctx.emit('run_warning', {
        source: 'compaction',
        message: `compaction not done (${outcome.reason}): ${outcome.message}`,
        fallback: 'the transcript as it was',
      });
    return { usage: outcome.usage };
  }
}
