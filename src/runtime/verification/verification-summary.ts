import type {
  VerificationCheck,
  VerificationReport,
  VerificationStatus,
  VerificationSummary,
  VerificationSummaryJson,
} from '../../protocol/verification.js';

/** The counts of a summary, without its JSON and text (what verificationText reads). */
export type VerificationSummaryCounts = Pick<VerificationSummary, 'verificationStatus' | 'pendingVerificationCount' | 'failedVerificationCount' | 'verificationReportCount'>;

/** How bad a verdict is; the overall status is the worst of the subjects' latest verdicts. */
const SEVERITY: Record<VerificationStatus, number> = { skipped: 0, passed: 1, needs_review: 2, failed: 3 };
/** Failures and risks listed in the text before "and N more". */
const TEXT_ITEMS = 3;
/** Commands longer than this are shortened in the text. */
const TEXT_COMMAND_CHARS = 80;

const failedLike = (c: VerificationCheck): boolean => c.status === 'failed' || c.status === 'timed_out';

/**
 * The newest report of every subject, in order of first appearance: a later `created_at_ms` wins,
 * and on a tie the report later in the list wins (sessions append reports in creation order).
 */
export function latestReportsBySubject(reports: readonly VerificationReport[]): VerificationReport[] {
  const latest = new Map<string, VerificationReport>();
  for (const report of reports) {
    const current = latest.get(report.subject);
    if (!current || report.created_at_ms >= current.created_at_ms) latest.set(report.subject, report);
  }
  return [...latest.values()];
}

/** The worst of some verdicts (skipped when there are none). */
export function worstStatus(statuses: readonly VerificationStatus[]): VerificationStatus {
  return statuses.reduce<VerificationStatus>((worst, s) => (SEVERITY[s] > SEVERITY[worst] ? s : worst), 'skipped');
}

function compactJson(latest: readonly VerificationReport[], counts: VerificationSummaryCounts): VerificationSummaryJson {
  return {
    schema: 'a3s.verification_summary.v1',
    status: counts.verificationStatus,
    report_count: counts.verificationReportCount,
    pending_count: counts.pendingVerificationCount,
    failed_count: counts.failedVerificationCount,
    subjects: latest.map((r) => ({
      subject: r.subject,
      report_id: r.id,
      run_id: r.run_id,
      status: r.status,
      created_at_ms: r.created_at_ms,
      summary: r.summary,
      failed_checks: r.checks.filter(failedLike).map((c) => ({ id: c.id, kind: c.kind, command: c.command, required: c.required, status: c.status, exit_code: c.exit_code, expect_exit: c.expect_exit })),
    })),
    residual_risks: [...new Set(latest.flatMap((r) => r.residual_risks))],
  };
}

/**
 * Summarise a session's reports (oldest first) with the AgentResult field names. Only the latest
 * report of each subject counts, so re-running a subject replaces its verdict:
 * - verificationStatus: the worst latest verdict (failed > needs_review > passed > skipped; no reports -> skipped);
 * - pendingVerificationCount: required checks of the latest reports that never ran (skipped by a cancellation);
 * - failedVerificationCount: required checks of the latest reports that failed or timed out;
 * - verificationReportCount: every report, superseded ones included.
 */
export function summarizeVerifications(reports: readonly VerificationReport[]): VerificationSummary {
  const latest = latestReportsBySubject(reports);
  const counts: VerificationSummaryCounts = {
    verificationStatus: worstStatus(latest.map((r) => r.status)),
    pendingVerificationCount: latest.reduce((n, r) => n + r.checks.filter((c) => c.required && c.status === 'skipped').length, 0),
    failedVerificationCount: latest.reduce((n, r) => n + r.summary.required_failed, 0),
    verificationReportCount: reports.length,
  };
  return {
    ...counts,
    verificationSummaryJson: JSON.stringify(compactJson(latest, counts)),
    verificationSummaryText: verificationText(counts, reports),
  };
}

function shortCommand(command: string): string {
  const flat = command.replace(/\s+/g, ' ').trim();
  return flat.length > TEXT_COMMAND_CHARS ? `${flat.slice(0, TEXT_COMMAND_CHARS - 3)}...` : flat;
}

function describeFailure(check: VerificationCheck): string {
  const what = check.status === 'timed_out' ? 'timed out' : `exited ${check.exit_code ?? 'without a status'}${check.expect_exit === 0 ? '' : ` (expected ${check.expect_exit})`}`;
  return `${check.id}: ${shortCommand(check.command)} ${what}`;
}

function listed(items: readonly string[], separator: string): string {
  const shown = items.slice(0, TEXT_ITEMS).join(separator);
  return items.length > TEXT_ITEMS ? `${shown}${separator}and ${items.length - TEXT_ITEMS} more` : shown;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * One human paragraph for a summary, e.g. "Verification failed: 1 of 3 required checks failed
 * (test: npm test exited 1)." followed by the subjects and residual risks; reads the same latest
 * reports as summarizeVerifications.
 */
export function verificationText(summary: VerificationSummaryCounts, reports: readonly VerificationReport[]): string {
  if (reports.length === 0) return 'Verification skipped: no verification reports.';
  const latest = latestReportsBySubject(reports);
  const checks = latest.flatMap((r) => r.checks);
  const required = checks.filter((c) => c.required);
  const requiredFailed = required.filter(failedLike);
  const optionalFailed = checks.filter((c) => !c.required && failedLike(c));
  const ran = checks.filter((c) => c.status !== 'skipped');
  const subjects = latest.map((r) => `"${r.subject}" ${r.status}`);
  const parts: string[] = [];
  switch (summary.verificationStatus) {
    case 'failed':
      parts.push(`Verification failed: ${requiredFailed.length} of ${plural(required.length, 'required check')} failed (${listed(requiredFailed.map(describeFailure), '; ')}).`);
      break;
    case 'needs_review':
      parts.push(
        optionalFailed.length > 0
          ? `Verification needs review: every required check that ran passed, but ${plural(optionalFailed.length, 'optional check')} failed (${listed(optionalFailed.map(describeFailure), '; ')}).`
          : 'Verification needs review: every check that ran passed, but some required checks did not run.',
      );
      break;
    case 'passed':
      parts.push(`Verification passed: ${ran.length} of ${plural(checks.length, 'check')} passed.`);
      break;
    case 'skipped':
      parts.push('Verification skipped: no checks ran.');
      break;
  }
  if (summary.pendingVerificationCount > 0) parts.push(`${plural(summary.pendingVerificationCount, 'required check')} did not run.`);
  parts.push(`Subjects: ${listed(subjects, ', ')} (${plural(summary.verificationReportCount, 'report')} in total).`);
  const risks = [...new Set(latest.flatMap((r) => r.residual_risks))];
  if (risks.length > 0) parts.push(`Residual risks: ${listed(risks, '; ')}.`);
  return parts.join(' ');
}
