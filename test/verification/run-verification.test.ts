import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  VerificationReportSchema,
  VerificationRequestSchema,
  type VerificationRequestInput,
} from '../../src/protocol/verification.js';
import {
  artifactUris,
  outputTail,
  reportStatus,
  runVerification,
} from '../../src/runtime/verification/run-verification.js';
import { bashRunner, tempWorkspace, testDeps, type TempWorkspace } from './verification-fixtures.js';

let ws: TempWorkspace;
beforeEach(() => {
  ws = tempWorkspace({ 'hello.txt': 'hello\n' });
});
afterEach(() => ws.cleanup());

async function verify(input: VerificationRequestInput, extra: Parameters<typeof testDeps>[1] = {}) {
  const report = await runVerification(VerificationRequestSchema.parse(input), testDeps(ws.root, extra));
  // Every report the runtime builds is a valid wire report.
  expect(VerificationReportSchema.parse(report)).toEqual(report);
  return report;
}

describe('runVerification', () => {
  it('fails when a required check exits non-zero, and keeps running the later checks', async () => {
    const report = await verify({
      subject: 'auth refactor',
      commands: [
        { id: 'unit', kind: 'test', command: 'echo running tests; exit 1', required: true },
        { id: 'build', kind: 'build', command: 'cat hello.txt' },
      ],
    });
    expect(report).toMatchObject({
      schema: 'a3s.verification_report.v1',
      id: 'verif_1',
      session_id: 'sess_1',
      run_id: null,
      subject: 'auth refactor',
      status: 'failed',
    });
    expect(report.checks.map((c) => [c.id, c.status, c.exit_code])).toEqual([
      ['unit', 'failed', 1],
      ['build', 'passed', 0],
    ]);
    expect(report.checks[0]).toMatchObject({
      kind: 'test',
      required: true,
      expect_exit: 0,
      description: 'test check unit',
      output_tail: 'running tests\n',
      suggested_tools: ['bash'],
      timed_out: false,
    });
    expect(report.checks[0].residual_risk).toBe(
      'verification command exited with code 1, expected 0: echo running tests; exit 1',
    );
    expect(report.checks[1].residual_risk).toBeUndefined();
    expect(report.checks[1].output_tail).toBe('hello\n');
    expect(report.summary).toEqual({ total: 2, passed: 1, failed: 1, skipped: 0, required_failed: 1 });
    expect(report.residual_risks).toEqual([]);
  });

  it('passes when every check meets its expected exit status', async () => {
    const report = await verify(
      {
        subject: 'release',
        commands: [
          { id: 'test', kind: 'test', description: 'Run the tests', command: 'test -f hello.txt' },
          { id: 'lint', kind: 'lint', command: 'true' },
        ],
      },
      { runId: 'run_7' },
    );
    expect(report.status).toBe('passed');
    expect(report.run_id).toBe('run_7');
    expect(report.checks[0].description).toBe('Run the tests');
    expect(report.summary).toEqual({ total: 2, passed: 2, failed: 0, skipped: 0, required_failed: 0 });
    expect(report.residual_risks).toEqual([]);
    expect(report.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("fails when an optional check fails too (the seed's rule: any failed check fails the report)", async () => {
    const report = await verify({
      subject: 'docs',
      commands: [
        { id: 'test', kind: 'test', command: 'exit 0' },
        { id: 'format', kind: 'format', command: 'echo diff >&2; exit 3', required: false },
      ],
    });
    expect(report.status).toBe('failed');
    expect(report.checks[1]).toMatchObject({ status: 'failed', exit_code: 3, required: false, output_tail: 'diff\n' });
    expect(report.checks[1].residual_risk).toBe(
      'verification command exited with code 3, expected 0: echo diff >&2; exit 3',
    );
    expect(report.residual_risks).toEqual([]);
    expect(report.summary).toEqual({ total: 2, passed: 1, failed: 1, skipped: 0, required_failed: 0 });
  });

  it('passes a check whose exit status matches expectExit, and fails one exiting 0 when 2 is expected', async () => {
    const report = await verify({
      subject: 'negative test',
      commands: [
        { id: 'rejects-bad-input', kind: 'test', command: 'exit 2', expectExit: 2 },
        { id: 'also-expects-2', kind: 'test', command: 'exit 0', expectExit: 2, required: false },
      ],
    });
    expect(report.checks.map((c) => [c.status, c.exit_code, c.expect_exit])).toEqual([
      ['passed', 2, 2],
      ['failed', 0, 2],
    ]);
    expect(report.status).toBe('failed');
  });

  it('fails a command that outlives its timeout, marking it timed_out', async () => {
    const started = Date.now();
    const report = await verify({
      subject: 'slow',
      commands: [{ id: 'hang', kind: 'test', command: 'echo started; sleep 30', timeout_ms: 300, required: true }],
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(report.status).toBe('failed');
    expect(report.checks[0]).toMatchObject({ status: 'failed', timed_out: true, output_tail: 'started\n' });
    expect(report.checks[0].residual_risk).toBe('verification command timed out after 300 ms: echo started; sleep 30');
    expect(report.summary.required_failed).toBe(1);
  });

  it('clamps a timeout above the runner limit and records it', async () => {
    const seen: number[] = [];
    const runner = bashRunner(ws.root);
    const report = await verify(
      { subject: 'clamp', commands: [{ id: 'test', kind: 'test', command: 'true', timeoutMs: 3_600_000 }] },
      {
        maxTimeoutMs: 600_000,
        runCommand: (command, timeoutMs) => {
          seen.push(timeoutMs);
          return runner(command, timeoutMs);
        },
      },
    );
    expect(seen).toEqual([600_000]);
    expect(report.status).toBe('passed');
    expect(report.checks[0].residual_risk).toBe("timeout clamped from 3600000 ms to the runner's limit of 600000 ms");
  });

  it('names truncated output as the check residual risk (no report-level "no test" risk)', async () => {
    const report = await verify(
      {
        subject: 'build only',
        commands: [{ id: 'build', kind: 'build', command: 'for i in $(seq 1 2000); do echo "line $i"; done' }],
      },
      { runCommand: bashRunner(ws.root, 1000) },
    );
    expect(report.status).toBe('passed');
    expect(report.residual_risks).toEqual([]);
    expect(report.checks[0].residual_risk).toBe(
      'output of check build was truncated by the runner; its tail may not be the end of the output',
    );
    expect(report.checks[0].output_tail.length).toBeLessThanOrEqual(1000);
  });

  it('keeps only the last ~4 KiB of long output, cut on a character boundary', async () => {
    const report = await verify({
      subject: 'noisy',
      commands: [{ id: 'test', kind: 'test', command: 'for i in $(seq 1 3000); do echo "row $i é"; done' }],
    });
    const tail = report.checks[0].output_tail;
    expect(tail).toMatch(/^\[\.\.\. \d+ bytes omitted\]\n/);
    expect(tail.endsWith('row 3000 é\n')).toBe(true);
    expect(Buffer.byteLength(tail.slice(tail.indexOf('\n') + 1))).toBeLessThanOrEqual(4096);
    expect(tail).not.toContain('\uFFFD');
    expect(outputTail('é'.repeat(10), 5)).toBe('[... 16 bytes omitted]\néé');
  });

  it('skips the checks that have not started once the signal is aborted', async () => {
    const controller = new AbortController();
    const runner = bashRunner(ws.root);
    const report = await verify(
      {
        subject: 'cancelled',
        commands: [
          { id: 'first', kind: 'build', command: 'true' },
          { id: 'second', kind: 'test', command: 'true', required: true },
        ],
      },
      {
        signal: controller.signal,
        runCommand: async (command, timeoutMs) => {
          const result = await runner(command, timeoutMs);
          controller.abort();
          return result;
        },
      },
    );
    expect(report.checks.map((c) => c.status)).toEqual(['passed', 'skipped']);
    expect(report.checks[1]).toMatchObject({ exit_code: null, duration_ms: 0, output_tail: '' });
    expect(report.status).toBe('needs_review');
    expect(report.checks[1].residual_risk).toBe(
      'verification command could not run: the verification was cancelled before it started',
    );
  });

  it("applies the seed's report rules and collects evidence URIs from metadata", () => {
    expect(reportStatus([])).toBe('skipped');
    expect(reportStatus([{ status: 'passed', required: true }])).toBe('passed');
    expect(reportStatus([{ status: 'passed', required: true }], ['integration tests not run'])).toBe('needs_review');
    expect(
      reportStatus([
        { status: 'skipped', required: false },
        { status: 'passed', required: true },
      ]),
    ).toBe('passed');
    expect(
      reportStatus([
        { status: 'needs_review', required: true },
        { status: 'failed', required: false },
      ]),
    ).toBe('failed');
    expect(
      artifactUris({
        artifact: { artifact_uri: 'a3s://tool-output/bash/b' },
        nested: [{ artifact_uri: 'a3s://tool-output/bash/a' }, { artifact_uri: 'a3s://tool-output/bash/b' }],
      }),
    ).toEqual(['a3s://tool-output/bash/a', 'a3s://tool-output/bash/b']);
  });

  it('needs review when a required check never ran (cancelled before it started)', async () => {
    const controller = new AbortController();
    controller.abort();
    const report = await verify(
      { subject: 'nothing', commands: [{ id: 'test', kind: 'test', command: 'true', required: true }] },
      { signal: controller.signal },
    );
    expect(report.status).toBe('needs_review');
    expect(report.summary).toEqual({ total: 1, passed: 0, failed: 0, skipped: 1, required_failed: 0 });
  });

  it('propagates a runner fault (e.g. a closed session) instead of inventing a verdict', async () => {
    await expect(
      verify(
        { subject: 'x', commands: [{ id: 'test', command: 'true' }] },
        { runCommand: () => Promise.reject(new Error('session closed')) },
      ),
    ).rejects.toThrow('session closed');
  });
});
