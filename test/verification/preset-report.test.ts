import { describe, expect, it } from 'vitest';
import { VerificationReportSchema, type VerificationPreset } from '../../src/protocol/verification.js';
import { presetSubject, reportForPresetRun } from '../../src/runtime/verification/preset-report.js';
import { summarizeVerifications } from '../../src/runtime/verification/verification-summary.js';

const preset: VerificationPreset = { id: 'npm-test', kind: 'test', description: 'package.json script "test" (npm)', command: 'npm test', source: 'package.json' };
const ctx = { newId: (prefix: string) => `${prefix}_1`, sessionId: 'sess_1', runId: 'run_1' };

describe('reportForPresetRun', () => {
  it('turns a bash call that ran a preset into a one-check report without re-running it', () => {
    const report = reportForPresetRun(preset, { output: 'not ok 1\n', exitCode: 1, timedOut: false, truncated: false, startedAtMs: 1000, durationMs: 250, timeoutMs: 120_000 }, ctx);
    expect(VerificationReportSchema.parse(report)).toEqual(report);
    expect(report).toMatchObject({ subject: presetSubject(preset), run_id: 'run_1', status: 'failed', created_at_ms: 1000, duration_ms: 250, residual_risks: [] });
    expect(report.checks).toEqual([
      { id: 'npm-test', kind: 'test', description: preset.description, command: 'npm test', required: true, expect_exit: 0, exit_code: 1, status: 'failed', duration_ms: 250, output_tail: 'not ok 1\n', residual_risks: [] },
    ]);
    expect(summarizeVerifications([report])).toMatchObject({ verificationStatus: 'failed', failedVerificationCount: 1, verificationReportCount: 1 });
  });

  it('records a timed-out preset run', () => {
    const report = reportForPresetRun(preset, { output: '', exitCode: 143, timedOut: true, truncated: true, startedAtMs: 0, durationMs: 5, timeoutMs: 5 }, ctx);
    expect(report.status).toBe('failed');
    expect(report.residual_risks).toEqual(['check npm-test timed out after 5 ms; its outcome is unknown', 'output of check npm-test was truncated by the runner; its tail may not be the end of the output']);
  });
});
