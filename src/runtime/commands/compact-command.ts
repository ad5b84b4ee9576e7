import type { ChatMessage } from '../../protocol/chat-message.js';
import { compactTranscript, type CompactionDeps } from '../compaction/compact-transcript.js';
import { estimateMessageTokens } from '../compaction/estimate-tokens.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { BuiltinOutcome } from './builtin-commands.js';
import { CommandFailure } from './command-failure.js';

/**
 * `/compact` (and POST .../compact): compact the session transcript now, whatever the threshold, with the
 * automatic compaction's algorithm (its size is the utf8 bytes / 4 estimate). Fewer than two messages:
 * "Nothing to compact yet." (the transcript is left exactly as it was). A blocking hook, an empty summary or a failing summary call fail the command
 * run (the transcript stays as it was); a cancel is left to the command run.
 */
export async function runCompactCommand(
  messages: readonly ChatMessage[],
  deps: CompactionDeps,
  ctx: InvocationContext,
): Promise<BuiltinOutcome> {
  const outcome = await compactTranscript(messages, estimateMessageTokens(messages), 'manual', deps, ctx);
  if (outcome.kind === 'compacted') {
    return {
      text: `Compacted the conversation: ${outcome.beforeMessages} messages into ${outcome.afterMessages} (a summary and ${outcome.afterMessages - 1} recent messages).`,
      replace: outcome.messages,
      usage: outcome.usage,
    };
  }
  switch (outcome.reason) {
    case 'nothing_to_compact':
    case 'cancelled':
      // The transcript stays exactly as it was (no echo of the command either).
      return { text: outcome.message, replace: [...messages] };
    case 'hook_blocked':
      throw new CommandFailure('BLOCKED_BY_HOOK', `/compact: ${outcome.message}; the conversation was left as it is`);
    case 'budget_exhausted':
      throw new CommandFailure('BUDGET_EXHAUSTED', `/compact: ${outcome.message}; the conversation was left as it is`);
    default:
      throw new CommandFailure('COMMAND_FAILED', `/compact: ${outcome.message}; the conversation was left as it is`);
  }
}
