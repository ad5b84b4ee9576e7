import { describe, expect, it } from 'vitest';
import { AgentResultSchema } from '../../src/protocol/run-record.js';
import { VerificationSummaryJsonSchema, VerificationSummarySchema } from '../../src/protocol/verification.js';
import { latestReportsBySubject, summarizeVerifications, verificationText, worstStatus } from '../../src/runtime/verification/verification-summary.js';
import { fakeReport } from './verification-fixtures.js';

describe('summarizeVerifications', () => {
  it('is skipped with zero counts when there are no reports', () => {
    const summary = summarizeVerifications([]);
    expect(summary).toMatchObject({ verificationStatus: 'skipped', pendingVerificationCount: 0, failedVerificationCount: 0, verificationReportCount: 0 });
    expect(summary.verificationSummaryText).toBe('Verification skipped: no verification reports.');
    expect(VerificationSummaryJsonSchema.parse(JSON.parse(summary.verificationSummaryJson))).toMatchObject({ status: 'skipped', subjects: [] });
  });

  it('takes the worst latest verdict of each subject, counts failed required checks and every report', () => {
    const reports = [
      fakeReport('api', 1000, 'failed', [['unit', 'test', true, 'failed', 1, 'npm test']]),
      fakeReport('api', 2000, 'passed', [['unit', 'test', true, 'passed', 0, 'npm test']]),
      fakeReport(
        'web',
        1500,
        'failed',
        [
          ['test', 'test', true, 'failed', 1, 'npm   test'],
          ['build', 'build', true, 'timed_out', 143, 'npm run build'],
          ['lint', 'lint', true, 'passed', 0, 'npm run lint'],
          ['fmt', 'format', false, 'failed', 1, 'npm run format:check'],
        ],
        ['check build timed out after 300000 ms; its outcome is unknown'],
      ),
      fakeReport('docs', 1200, 'needs_review', [['spell', 'custom', false, 'failed', 1]], ['no test command ran']),
    ];
    const summary = summarizeVerifications(reports);
    expect(VerificationSummarySchema.parse(summary)).toEqual(summary);
    expect(summary).toMatchObject({ verificationStatus: 'failed', pendingVerificationCount: 0, failedVerificationCount: 2, verificationReportCount: 4 });
    // The summary spreads straight into an AgentResult.
    expect(AgentResultSchema.safeParse({ text: '', toolCallsCount: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, ...summary }).success).toBe(true);

    const json = VerificationSummaryJsonSchema.parse(JSON.parse(summary.verificationSummaryJson));
    expect(json.subjects.map((s) => [s.subject, s.status, s.report_id])).toEqual([
      ['api', 'passed', 'verif_api_2000'],
      ['web', 'failed', 'verif_web_1500'],
      ['docs', 'needs_review', 'verif_docs_1200'],
    ]);
    expect(json.subjects[1].failed_checks.map((c) => [c.id, c.status, c.required])).toEqual([
      ['test', 'failed', true],
      ['build', 'timed_out', true],
      ['fmt', 'failed', false],
    ]);
    expect(json).toMatchObject({ report_count: 4, failed_count: 2, pending_count: 0 });

    expect(summary.verificationSummaryText).toBe(
      'Verification failed: 2 of 4 required checks failed (test: npm test exited 1; build: npm run build timed out). ' +
        'Subjects: "api" passed, "web" failed, "docs" needs_review (4 reports in total). ' +
        'Residual risks: check build timed out after 300000 ms; its outcome is unknown; no test command ran.',
    );
  });

  it('lets a newer report of a subject replace a failure', () => {
    const summary = summarizeVerifications([fakeReport('api', 1, 'failed', [['t', 'test', true, 'failed', 1]]), fakeReport('api', 2, 'passed', [['t', 'test', true, 'passed', 0]])]);
    expect(summary).toMatchObject({ verificationStatus: 'passed', failedVerificationCount: 0, verificationReportCount: 2 });
    expect(summary.verificationSummaryText).toBe('Verification passed: 1 of 1 check passed. Subjects: "api" passed (2 reports in total).');
  });

  it('describes needs_review from optional failures and from required checks that never ran', () => {
    const optional = summarizeVerifications([fakeReport('a', 1, 'needs_review', [['t', 'test', true, 'passed', 0], ['fmt', 'format', false, 'failed', 1, 'prettier --check .']])]);
    expect(optional.verificationStatus).toBe('needs_review');
    expect(optional.verificationSummaryText).toMatch(/^Verification needs review: every required check that ran passed, but 1 optional check failed \(fmt: prettier --check \. exited 1\)\./);

    const cancelled = summarizeVerifications([fakeReport('a', 1, 'needs_review', [['b', 'build', true, 'passed', 0], ['t', 'test', true, 'skipped', null]])]);
    expect(cancelled).toMatchObject({ verificationStatus: 'needs_review', pendingVerificationCount: 1 });
    expect(cancelled.verificationSummaryText).toContain('some required checks did not run. 1 required check did not run.');
  });

  it('lists at most three failures in the text', () => {
    const checks = ['a', 'b', 'c', 'd', 'e'].map((id): [string, 'test', boolean, 'failed', number] => [id, 'test', true, 'failed', 1]);
    const summary = summarizeVerifications([fakeReport('s', 1, 'failed', checks)]);
    expect(summary.verificationSummaryText).toContain('5 of 5 required checks failed (a: run a exited 1; b: run b exited 1; c: run c exited 1; and 2 more)');
  });

  it('verificationText reads the counts it is given', () => {
    const reports = [fakeReport('s', 1, 'skipped', [['t', 'test', true, 'skipped', null]])];
    expect(verificationText({ verificationStatus: 'skipped', pendingVerificationCount: 0, failedVerificationCount: 0, verificationReportCount: 1 }, reports)).toBe(
      'Verification skipped: no checks ran. Subjects: "s" skipped (1 report in total).',
    );
  });

  it('orders verdicts failed > needs_review > passed > skipped and breaks time ties by list order', () => {
    expect(worstStatus([])).toBe('skipped');
    expect(worstStatus(['passed', 'skipped'])).toBe('passed');
    expect(worstStatus(['passed', 'needs_review', 'skipped'])).toBe('needs_review');
    expect(worstStatus(['needs_review', 'failed', 'passed'])).toBe('failed');
    const first = fakeReport('s', 5, 'failed', []);
    const second = { ...fakeReport('s', 5, 'passed', []), id: 'second' };
    expect(latestReportsBySubject([first, second]).map((r) => r.id)).toEqual(['second']);
  });
});
