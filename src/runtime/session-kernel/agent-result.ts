import type { AgentResult } from '../../protocol/run-record.js';
import { formatVerificationSummary, type VerificationSummary } from '../../protocol/verification-summary.js';
import type { RunOutcome } from '../loop/run-loop.js';

/**
 * The AgentResult of a loop outcome with the run's verification summary (built once by the caller, which also
 * sends it in agent_end); the summary's JSON and text are only made when the run has reports (null otherwise).
 */
export function toAgentResult(outcome: RunOutcome, summary: VerificationSummary): AgentResult {
  const none = summary.report_count === 0;
  return {
    text: outcome.text,
    toolCallsCount: outcome.toolCallsCount,
    promptTokens: outcome.usage.promptTokens,
    completionTokens: outcome.usage.completionTokens,
    totalTokens: outcome.usage.totalTokens,
    verificationStatus: summary.status,
    pendingVerificationCount: summary.pending_required_check_count,
    failedVerificationCount: summary.failed_check_count,
    verificationReportCount: summary.report_count,
    verificationSummaryJson: none ? null : JSON.stringify(summary),
    verificationSummaryText: none ? null : formatVerificationSummary(summary),
  };
}
