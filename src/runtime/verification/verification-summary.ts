import {
  buildVerificationSummary,
  formatVerificationSummary,
  type SummarizableReport,
  type VerificationSummaryResponse,
} from '../../protocol/verification-summary.js';

/**
 * Summarise reports (a session's, or one run's) as GET .../verifications/summary answers: the seed's
 * VerificationSummary, its formatVerificationSummary text, and the same values under the seed's
 * AgentResult names (`verificationStatus`, `pendingVerificationCount` = pending required checks,
 * `failedVerificationCount` = failed checks, `verificationReportCount`, `verificationSummaryJson`,
 * `verificationSummaryText`). Every report counts, as in the seed.
 */
export function summarizeVerifications(reports: readonly SummarizableReport[]): VerificationSummaryResponse {
  const summary = buildVerificationSummary(reports);
  const text = formatVerificationSummary(summary);
  return {
    ...summary,
    text,
    verificationStatus: summary.status,
    pendingVerificationCount: summary.pending_required_check_count,
    failedVerificationCount: summary.failed_check_count,
    verificationReportCount: summary.report_count,
    verificationSummaryJson: JSON.stringify(summary),
    verificationSummaryText: text,
  };
}
