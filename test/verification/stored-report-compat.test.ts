import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { StoredVerificationReportSchema, VerificationReportSchema } from '../../src/protocol/verification.js';
import { buildVerificationSummary } from '../../src/protocol/verification-summary.js';
import { parseSnapshot } from '../../src/stores/parse-snapshot.js';
import { readFrozenSnapshot } from '../support/frozen-snapshots.js';

// Written once by the server before reports took the seed's shapes; never regenerate it.
const OLD_REPORT: unknown = JSON.parse(
  readFileSync(new URL('./fixtures/report-written-before-seed-shapes.json', import.meta.url), 'utf8'),
);

describe('verification reports stored by earlier versions stay loadable', () => {
  it("migrates an old report to the seed's check shape on read (timed_out -> failed, residual_risks -> residual_risk)", () => {
    const report = StoredVerificationReportSchema.parse(OLD_REPORT);
    expect(VerificationReportSchema.parse(report)).toEqual(report);
    expect(report.checks[0]).toMatchObject({
      id: 'unit',
      status: 'failed',
      timed_out: false,
      suggested_tools: ['bash'],
    });
    expect(report.checks[0].residual_risk).toBeUndefined();
    expect(report.checks[1]).toMatchObject({
      id: 'slow',
      status: 'failed',
      timed_out: true,
      residual_risk:
        'check slow timed out after 100 ms; its outcome is unknown; optional check slow timed out; it does not fail the report',
    });
    expect(report.residual_risks).toEqual([]);
    expect(buildVerificationSummary([report])).toMatchObject({
      status: 'failed',
      failed_check_count: 2,
      residual_risk_count: 1,
    });
  });

  it('loads a whole snapshot holding an old report', () => {
    // A frozen snapshot an earlier server wrote, holding the old report.
    const stored = readFrozenSnapshot('v1-2026-12-02/default/artifacts-tasks.json');
    stored.verification_reports = [OLD_REPORT];
    const parsed = parseSnapshot(stored, 'a file written before the seed shapes');
    expect(parsed.verification_reports[0].checks.map((c) => c.status)).toEqual(['failed', 'failed']);
    // A current report passes through unchanged.
    const current = parsed.verification_reports[0];
    expect(StoredVerificationReportSchema.parse(current)).toEqual(current);
  });
});
