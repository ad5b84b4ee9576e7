import { z } from 'zod';
import {
  VerificationStatusSchema,
  type VerificationCheck,
  type VerificationReport,
  type VerificationStatus,
} from './verification.js';

/** The seed's VerificationSummary (what `agent_end.verification_summary` carries); subjects sorted and deduplicated. */
export const VerificationSummarySchema = z
  .object({
    status: VerificationStatusSchema,
    report_count: z.number().int().nonnegative(),
    required_check_count: z.number().int().nonnegative(),
    pending_required_check_count: z.number().int().nonnegative(),
    failed_check_count: z.number().int().nonnegative(),
    residual_risk_count: z.number().int().nonnegative(),
    pending_subjects: z.array(z.string()).optional(),
    failed_subjects: z.array(z.string()).optional(),
  })
  .meta({ id: 'VerificationSummary' });

/** The seed's VerificationSummary. */
export type VerificationSummary = z.infer<typeof VerificationSummarySchema>;

/** What buildVerificationSummary reads of a report (a stored report, or the seed's bare one). */
export type SummarizableReport = Pick<VerificationReport, 'subject' | 'status' | 'residual_risks'> & {
  checks: readonly Pick<VerificationCheck, 'required' | 'status' | 'residual_risk'>[];
};

const sortedUnique = (items: readonly string[]): string[] => [...new Set(items)].sort();

/** The seed's `VerificationSummary::from_reports`: aggregate every given report (a session's, or one run's). */
export function buildVerificationSummary(reports: readonly SummarizableReport[]): VerificationSummary {
  let required = 0;
  let pendingRequired = 0;
  let failed = 0;
  let risks = 0;
  const pending: string[] = [];
  const failedSubjects: string[] = [];
  for (const report of reports) {
    if (report.status === 'needs_review') pending.push(report.subject);
    if (report.status === 'failed') failedSubjects.push(report.subject);
    risks += report.residual_risks?.length ?? 0;
    for (const check of report.checks) {
      if (check.required) {
        required += 1;
        if (check.status === 'needs_review' || check.status === 'skipped') {
          pendingRequired += 1;
          pending.push(report.subject);
        }
      }
      if (check.status === 'failed') {
        failed += 1;
        failedSubjects.push(report.subject);
      }
      if (check.residual_risk !== undefined) {
        risks += 1;
        pending.push(report.subject);
      }
    }
  }
  const status: VerificationStatus =
    failed > 0 || reports.some((r) => r.status === 'failed')
      ? 'failed'
      : pendingRequired > 0 || risks > 0 || reports.some((r) => r.status === 'needs_review')
        ? 'needs_review'
        : reports.length === 0
          ? 'skipped'
          : 'passed';
  const pendingSorted = sortedUnique(pending);
  const failedSorted = sortedUnique(failedSubjects);
  return {
    status,
    report_count: reports.length,
    required_check_count: required,
    pending_required_check_count: pendingRequired,
    failed_check_count: failed,
    residual_risk_count: risks,
    ...(pendingSorted.length > 0 ? { pending_subjects: pendingSorted } : {}),
    ...(failedSorted.length > 0 ? { failed_subjects: failedSorted } : {}),
  };
}

function plural(count: number, singular: string, many: string): string {
  return count === 1 ? `1 ${singular}` : `${count} ${many}`;
}

function subjectList(subjects: readonly string[] | undefined): string {
  const all = subjects ?? [];
  const visible = all.slice(0, 5);
  if (all.length > 5) visible.push('...');
  return visible.join(', ');
}

/** The seed's `formatVerificationSummary(summary)`: one line, word for word. */
export function formatVerificationSummary(summary: VerificationSummary): string {
  const reports = plural(summary.report_count, 'report', 'reports');
  const requiredChecks = plural(summary.required_check_count, 'required check', 'required checks');
  let text: string;
  if (summary.status === 'skipped') {
    text = summary.report_count === 0 ? 'Verification skipped: no reports.' : `Verification skipped: ${reports}.`;
  } else if (summary.status === 'passed') {
    text = `Verification passed: ${reports}, ${requiredChecks}.`;
  } else if (summary.status === 'failed') {
    const failed =
      summary.failed_check_count > 0
        ? plural(summary.failed_check_count, 'failed check', 'failed checks')
        : 'failed report';
    const subjects = subjectList(summary.failed_subjects);
    text = subjects
      ? `Verification failed: ${failed} across subjects: ${subjects}. ${reports}, ${requiredChecks}.`
      : `Verification failed: ${failed}. ${reports}, ${requiredChecks}.`;
  } else {
    const pending =
      summary.pending_required_check_count > 0
        ? plural(summary.pending_required_check_count, 'pending required check', 'pending required checks')
        : 'review required';
    const subjects = subjectList(summary.pending_subjects);
    text = subjects
      ? `Verification needs review: ${pending} across subjects: ${subjects}. ${reports}, ${requiredChecks}.`
      : `Verification needs review: ${pending}. ${reports}, ${requiredChecks}.`;
  }
  return summary.residual_risk_count > 0 ? `${text} Residual risks: ${summary.residual_risk_count}.` : text;
}

/**
 * Answer of GET /v1/sessions/:id/verifications/summary: the seed's VerificationSummary fields, its
 * `text` (formatVerificationSummary), and the same values under the seed's AgentResult names.
 */
export const VerificationSummaryResponseSchema = VerificationSummarySchema.extend({
  text: z.string(),
  verificationStatus: VerificationStatusSchema,
  pendingVerificationCount: z.number().int().nonnegative(),
  failedVerificationCount: z.number().int().nonnegative(),
  verificationReportCount: z.number().int().nonnegative(),
  /** JSON of the VerificationSummary (parse it with VerificationSummarySchema). */
  verificationSummaryJson: z.string(),
  verificationSummaryText: z.string(),
}).meta({ id: 'VerificationSummaryResponse' });

/** A summary answer. */
export type VerificationSummaryResponse = z.infer<typeof VerificationSummaryResponseSchema>;
