import { describe, expect, it } from 'vitest';
import {
  buildVerificationSummary,
  formatVerificationSummary,
  VerificationSummarySchema,
  type SummarizableReport,
} from '../../src/protocol/verification-summary.js';
import { summarizeVerifications } from '../../src/runtime/verification/verification-summary.js';

type Check = SummarizableReport['checks'][number];
const report = (
  subject: string,
  status: SummarizableReport['status'],
  checks: Check[],
  residual_risks: string[] = [],
): SummarizableReport => ({ subject, status, checks, residual_risks });
const req = (status: Check['status'], residual_risk?: string): Check => ({
  required: true,
  status,
  ...(residual_risk ? { residual_risk } : {}),
});
const opt = (status: Check['status']): Check => ({ required: false, status });

describe("the seed's VerificationSummary and formatVerificationSummary", () => {
  it('is skipped with zero counts and the exact text when there are no reports', () => {
    const summary = buildVerificationSummary([]);
    expect(summary).toEqual({
      status: 'skipped',
      report_count: 0,
      required_check_count: 0,
      pending_required_check_count: 0,
      failed_check_count: 0,
      residual_risk_count: 0,
    });
    expect(formatVerificationSummary(summary)).toBe('Verification skipped: no reports.');
    expect(VerificationSummarySchema.parse(summary)).toEqual(summary);
  });

  it('passes when every report passes', () => {
    const summary = buildVerificationSummary([
      report('docs smoke', 'passed', [req('passed')]),
      report('web', 'passed', [req('passed'), opt('passed')]),
    ]);
    expect(summary).toEqual({
      status: 'passed',
      report_count: 2,
      required_check_count: 2,
      pending_required_check_count: 0,
      failed_check_count: 0,
      residual_risk_count: 0,
    });
    expect(formatVerificationSummary(summary)).toBe('Verification passed: 2 reports, 2 required checks.');
    expect(formatVerificationSummary(buildVerificationSummary([report('one', 'passed', [req('passed')])]))).toBe(
      'Verification passed: 1 report, 1 required check.',
    );
  });

  it('prioritises failed checks, with sorted, deduplicated subjects and the residual risk count', () => {
    const summary = buildVerificationSummary([
      report('program:search', 'needs_review', [req('needs_review')]),
      report('program:test', 'failed', [
        req('failed', 'verification command exited with code 1, expected 0: npm test'),
        opt('failed'),
      ]),
      report('api', 'failed', [req('failed', 'exit 2')]),
    ]);
    expect(summary).toEqual({
      status: 'failed',
      report_count: 3,
      required_check_count: 3,
      pending_required_check_count: 1,
      failed_check_count: 3,
      residual_risk_count: 2,
      pending_subjects: ['api', 'program:search', 'program:test'],
      failed_subjects: ['api', 'program:test'],
    });
    expect(formatVerificationSummary(summary)).toBe(
      'Verification failed: 3 failed checks across subjects: api, program:test. 3 reports, 3 required checks. Residual risks: 2.',
    );
  });

  it('needs review for pending required checks, and for a passing report with residual risks', () => {
    const pending = buildVerificationSummary([report('program:search', 'needs_review', [req('needs_review')])]);
    expect(pending).toMatchObject({
      status: 'needs_review',
      pending_required_check_count: 1,
      pending_subjects: ['program:search'],
    });
    expect(formatVerificationSummary(pending)).toBe(
      'Verification needs review: 1 pending required check across subjects: program:search. 1 report, 1 required check.',
    );
    const risky = buildVerificationSummary([
      report('turn', 'passed', [req('passed', 'build did not cover integration tests')]),
    ]);
    expect(formatVerificationSummary(risky)).toBe(
      'Verification needs review: review required across subjects: turn. 1 report, 1 required check. Residual risks: 1.',
    );
    const reportRisk = buildVerificationSummary([report('turn', 'needs_review', [opt('passed')], ['no coverage'])]);
    expect(formatVerificationSummary(reportRisk)).toBe(
      'Verification needs review: review required across subjects: turn. 1 report, 0 required checks. Residual risks: 1.',
    );
  });

  it('lists at most five subjects, then "..."', () => {
    const reports = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((s) => report(s, 'failed', [opt('failed')]));
    expect(formatVerificationSummary(buildVerificationSummary(reports))).toBe(
      'Verification failed: 7 failed checks across subjects: a, b, c, d, e, .... 7 reports, 0 required checks.',
    );
    expect(
      formatVerificationSummary({
        status: 'failed',
        report_count: 1,
        required_check_count: 0,
        pending_required_check_count: 0,
        failed_check_count: 0,
        residual_risk_count: 0,
      }),
    ).toBe('Verification failed: failed report. 1 report, 0 required checks.');
    expect(
      formatVerificationSummary({
        status: 'skipped',
        report_count: 2,
        required_check_count: 0,
        pending_required_check_count: 0,
        failed_check_count: 0,
        residual_risk_count: 0,
      }),
    ).toBe('Verification skipped: 2 reports.');
  });

  it('summarizeVerifications adds the text and the AgentResult names of the same values', () => {
    const answer = summarizeVerifications([report('x', 'failed', [req('failed')])]);
    expect(answer).toMatchObject({
      status: 'failed',
      verificationStatus: 'failed',
      failedVerificationCount: 1,
      pendingVerificationCount: 0,
      verificationReportCount: 1,
    });
    expect(answer.text).toBe(answer.verificationSummaryText);
    expect(VerificationSummarySchema.parse(JSON.parse(answer.verificationSummaryJson))).toEqual(
      buildVerificationSummary([report('x', 'failed', [req('failed')])]),
    );
  });
});
