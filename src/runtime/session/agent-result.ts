import type { AgentResult } from '../../protocol/run-record.js';
import type { VerificationReport } from '../../protocol/verification.js';
import type { RunOutcome } from '../loop/run-loop.js';
import { summarizeVerifications } from '../verification/verification-summary.js';

/** The AgentResult of a loop outcome with the verification summary of the run's reports (null JSON/text when it has none). */
export function toAgentResult(outcome: RunOutcome, reports: readonly VerificationReport[]): AgentResult {
  const summary = summarizeVerifications(reports);
  const none = reports.length === 0;
  return {
    text: outcome.text,
    toolCallsCount: outcome.toolCallsCount,
    promptTokens: outcome.usage.promptTokens,
    completionTokens: outcome.usage.completionTokens,
    totalTokens: outcome.usage.totalTokens,
    verificationStatus: summary.verificationStatus,
    pendingVerificationCount: summary.pendingVerificationCount,
    failedVerificationCount: summary.failedVerificationCount,
    verificationReportCount: summary.verificationReportCount,
    verificationSummaryJson: none ? null : summary.verificationSummaryJson,
    verificationSummaryText: none ? null : summary.verificationSummaryText,
  };
}

