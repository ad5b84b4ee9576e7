import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { VerificationReport } from '../../src/protocol/verification.js';
import type { VerificationCommandResult, VerificationDeps } from '../../src/runtime/verification/run-verification.js';

/** A temporary directory (canonical path) with files written into it, and its cleanup. */
export interface TempWorkspace {
  root: string;
  write(files: Record<string, string>): void;
  cleanup(): void;
}

/** Make a temp workspace, optionally with files (relative path -> content). */
export function tempWorkspace(files: Record<string, string> = {}): TempWorkspace {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-verif-')));
  const write = (more: Record<string, string>): void => {
    for (const [path, content] of Object.entries(more)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
  };
  write(files);
  return { root, write, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * A real command runner: `bash -c` in `cwd` as the leader of its own process group, killed as a group
 * on timeout; output beyond `maxOutputChars` is dropped and reported as truncated (like the invoker's cap).
 */
export function bashRunner(
  cwd: string,
  maxOutputChars = 100 * 1024,
): (command: string, timeoutMs: number) => Promise<VerificationCommandResult> {
  return (command, timeoutMs) =>
    new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', command], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      let truncated = false;
      let timedOut = false;
      const append = (chunk: Buffer): void => {
        const text = chunk.toString('utf8');
        const room = maxOutputChars - output.length;
        if (text.length > room) truncated = true;
        output += text.slice(0, Math.max(0, room));
      };
      child.stdout.on('data', append);
      child.stderr.on('data', append);
      const timer = setTimeout(() => {
        timedOut = true;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is already gone.
        }
      }, timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ output, exitCode: code ?? (signal === 'SIGKILL' ? 137 : 1), timedOut, truncated });
      });
    });
}

/** Deterministic clock and ids for a verification run over a real runner. */
export function testDeps(cwd: string, extra: Partial<VerificationDeps> = {}): VerificationDeps {
  let id = 0;
  return {
    runCommand: bashRunner(cwd),
    now: () => Date.now(),
    newId: (prefix) => `${prefix}_${++id}`,
    sessionId: 'sess_1',
    ...extra,
  };
}

/** A hand-made report for summary tests: checks given as [id, kind, required, status, exit]. */
export function fakeReport(
  subject: string,
  createdAtMs: number,
  status: VerificationReport['status'],
  checks: Array<
    [
      string,
      VerificationReport['checks'][number]['kind'],
      boolean,
      VerificationReport['checks'][number]['status'],
      number | null,
      string?,
    ]
  >,
  residualRisks: string[] = [],
): VerificationReport {
  const built = checks.map(([checkId, kind, required, checkStatus, exit, command]) => ({
    id: checkId,
    kind,
    description: `${kind} ${checkId}`,
    command: command ?? `run ${checkId}`,
    required,
    expect_exit: 0,
    exit_code: exit,
    status: checkStatus,
    duration_ms: 1,
    output_tail: '',
    timed_out: false,
    suggested_tools: ['bash'],
  }));
  const failedLike = built.filter((c) => c.status === 'failed');
  return {
    schema: 'a3s.verification_report.v1',
    id: `verif_${subject}_${createdAtMs}`,
    session_id: 'sess_1',
    run_id: null,
    subject,
    status,
    created_at_ms: createdAtMs,
    duration_ms: 1,
    checks: built,
    residual_risks: residualRisks,
    summary: {
      total: built.length,
      passed: built.filter((c) => c.status === 'passed').length,
      failed: failedLike.length,
      skipped: built.filter((c) => c.status === 'skipped').length,
      required_failed: failedLike.filter((c) => c.required).length,
    },
  };
}
