import type { AgentResult } from '../../protocol/run-record.js';
import type { LoopOutcome } from '../loop/run-loop.js';

/** The AgentResult of a loop outcome; verification fields stay skipped until verification lands. */
export function toAgentResult(outcome: LoopOutcome): AgentResult {
  return {
    text: outcome.text,
    toolCallsCount: outcome.toolCallsCount,
    promptTokens: outcome.usage.promptTokens,
    completionTokens: outcome.usage.completionTokens,
    totalTokens: outcome.usage.totalTokens,
    verificationStatus: 'skipped',
    pendingVerificationCount: 0,
    failedVerificationCount: 0,
    verificationReportCount: 0,
    verificationSummaryJson: null,
    verificationSummaryText: null,
  };
}
