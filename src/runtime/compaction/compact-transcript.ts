import type { ChatMessage } from '../../protocol/chat-message.js';
import type { Usage } from '../../protocol/run-record.js';
import { GovernedCallError } from '../invocation/governed-call-error.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { LlmCompletion } from '../invocation/llm-invoker.js';
import type { GovernanceHooks } from '../policy/session-governance.js';
import { compactionPrompts } from './compaction-prompts.js';
import { BYTES_PER_TOKEN } from './estimate-tokens.js';
import { renderTranscript } from './render-transcript.js';
import { splitForCompaction } from './split-for-compaction.js';

/** The seed's cap on a summary, in tokens (asked of the model, then enforced by truncation). */
export const MAX_SUMMARY_TOKENS = 8000;
/** The kept recent messages must fit this share of the trigger watermark (threshold x maxContextTokens). */
export const KEEP_SHARE_OF_WATERMARK = 0.6;
/** Tokens reserved in the summary request for its own instructions. */
const REQUEST_OVERHEAD_TOKENS = 512;
/** The smallest transcript text a summary request carries, whatever the window. */
const MIN_REQUEST_CHARS = 2000;

/** What a compaction calls: the session's one LLM invoker (budget, usage, hooks, cancellation) and its hooks. */
export interface CompactionDeps {
  readonly llm: { complete(messages: ChatMessage[], ctx: InvocationContext): Promise<LlmCompletion> };
  /** The session's hooks (pre_compact gates, post_compact observes); undefined without any. */
  hooks(): GovernanceHooks | undefined;
}

/** Who asked for the compaction: the loop (the threshold was passed) or a client (`/compact`, POST .../compact). */
export type CompactionTrigger = 'auto' | 'manual';

/** Why a compaction left the transcript as it was. */
export type CompactionSkipReason =
  'nothing_to_compact' | 'hook_blocked' | 'empty_summary' | 'provider_error' | 'budget_exhausted' | 'cancelled';

/** What a compaction did. Counts are of the messages after the system message (what the session's history shows). */
export type CompactionOutcome =
  | {
      readonly kind: 'compacted';
      readonly messages: ChatMessage[];
      readonly beforeMessages: number;
      readonly afterMessages: number;
      readonly percentBefore: number;
      readonly summary: string;
      readonly usage: Usage;
    }
  | {
      readonly kind: 'skipped';
      readonly reason: CompactionSkipReason;
      readonly message: string;
      readonly usage: Usage;
    };

const NO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/** True for the summary message an earlier compaction put first. */
export function isSummaryMessage(message: ChatMessage | undefined): boolean {
  return (
    message?.role === 'user' &&
    typeof message.content === 'string' &&
    message.content.startsWith(compactionPrompts().summaryPrefix)
  );
}

/** The summary an earlier compaction put first, without its prefix; undefined for any other message. */
export function summaryOf(message: ChatMessage | undefined): string | undefined {
  return isSummaryMessage(message)
    ? message!.content!.slice(compactionPrompts().summaryPrefix.length).trim()
    : undefined;
}

/**
 * Compact a transcript now (the seed's algorithm, SEED-REFERENCE §11.5): keep the recent messages (whole
 * tool pairs, within 60% of the trigger watermark), summarise the older ones with the model through the
 * LLM invoker, and answer [system message, summary as a user message, ...kept]. `pre_compact` hooks may
 * refuse it; `context_compacted` is emitted and `post_compact` told when it happened. Never throws: a
 * refusal, an empty summary, a provider or budget failure or a cancel answer `skipped` with the reason.
 */
export async function compactTranscript(
  messages: readonly ChatMessage[],
  usedTokens: number,
  trigger: CompactionTrigger,
  deps: CompactionDeps,
  ctx: InvocationContext,
): Promise<CompactionOutcome> {
  const skipped = (reason: CompactionSkipReason, message: string, usage: Usage = NO_USAGE): CompactionOutcome => ({
    kind: 'skipped',
    reason,
    message,
    usage,
  });
  const system = messages[0]?.role === 'system' ? messages[0] : undefined;
  const body = system ? messages.slice(1) : [...messages];
  if (body.length < 2) return skipped('nothing_to_compact', 'Nothing to compact yet.');
  const g = ctx.governance;
  const watermark = g.autoCompactThreshold * g.maxContextTokens;
  const { older, kept } = splitForCompaction(body, Math.floor(KEEP_SHARE_OF_WATERMARK * watermark));
  // Nothing older than the kept part, or only the summary of the last compaction: a new one would change nothing.
  if (older.length === 0 || (older.length === 1 && isSummaryMessage(older[0])))
    return skipped('nothing_to_compact', 'Nothing to compact yet.');
  const percentBefore = Math.round((usedTokens / g.maxContextTokens) * 10_000) / 10_000;
  const match = { sessionId: ctx.sessionId };
  const hooks = deps.hooks();
  if (hooks?.wants('pre_compact')) {
    const gate = await hooks.gate(
      'pre_compact',
      {
        session_id: ctx.sessionId,
        run_id: ctx.runId,
        message_count: body.length,
        used_tokens: usedTokens,
        max_tokens: g.maxContextTokens,
        trigger,
      },
      match,
      ctx.signal,
    );
    if (ctx.signal.aborted) return skipped('cancelled', 'the run was cancelled');
    if (gate.action !== 'continue') {
      return skipped(
        'hook_blocked',
        `compaction was ${gate.action === 'skip' ? 'skipped' : 'blocked'} by pre_compact hook${gate.hookId ? ` ${gate.hookId}` : ''}${gate.reason ? `: ${gate.reason}` : ''}`,
      );
    }
  }
  const summaryTokens = Math.min(MAX_SUMMARY_TOKENS, Math.max(64, Math.floor(g.maxContextTokens * 0.2)));
  const inputChars = Math.max(
    MIN_REQUEST_CHARS,
    (g.maxContextTokens - summaryTokens - REQUEST_OVERHEAD_TOKENS) * BYTES_PER_TOKEN,
  );
  const prompts = compactionPrompts();
  const request = prompts.request
    .replace('{{maxWords}}', String(Math.floor(summaryTokens * 0.75)))
    .replace('{{transcript}}', () => renderTranscript(older, inputChars));
  let completion: LlmCompletion;
  try {
    completion = await deps.llm.complete(
      [
        { role: 'system', content: prompts.system },
        { role: 'user', content: request },
      ],
      ctx,
    );
  } catch (error) {
    if (ctx.signal.aborted) return skipped('cancelled', 'the run was cancelled');
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof GovernedCallError && error.code === 'BUDGET_EXHAUSTED')
      return skipped('budget_exhausted', `the summary call was refused: ${message}`);
    return skipped('provider_error', `the summary call failed: ${message}`);
  }
  if (ctx.signal.aborted) return skipped('cancelled', 'the run was cancelled', completion.usage);
  let summary = completion.text.trim();
  if (summary === '') return skipped('empty_summary', 'the model answered an empty summary', completion.usage);
  const maxChars = summaryTokens * BYTES_PER_TOKEN;
  if (summary.length > maxChars) summary = `${summary.slice(0, maxChars)}\n[summary truncated]`;
  const compacted: ChatMessage[] = [
    ...(system ? [system] : []),
    { role: 'user', content: `${prompts.summaryPrefix}\n\n${summary}` },
    ...kept,
  ];
  const afterMessages = 1 + kept.length;
  ctx.emit('context_compacted', {
    session_id: ctx.sessionId,
    before_messages: body.length,
    after_messages: afterMessages,
    percent_before: percentBefore,
    summary,
  });
  if (hooks?.wants('post_compact'))
    hooks.observe(
      'post_compact',
      {
        session_id: ctx.sessionId,
        run_id: ctx.runId,
        message_count_before: body.length,
        message_count_after: afterMessages,
        summary_generated: true,
        trigger,
      },
      match,
    );
  return {
    kind: 'compacted',
    messages: compacted,
    beforeMessages: body.length,
    afterMessages,
    percentBefore,
    summary,
    usage: completion.usage,
  };
}
