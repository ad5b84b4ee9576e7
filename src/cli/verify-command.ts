import { resolve } from 'node:path';
import type { Session } from '../client/index.js';
import type { VerificationReport } from '../protocol/verification.js';
import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, integerFlag, parseFlags, stringFlag, stringList, type FlagSpec } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The flags of `a3s verify` (besides the global ones). */
export const VERIFY_FLAGS = {
  subject: { type: 'string' },
  cmd: { type: 'string', multiple: true },
  session: { type: 'string' },
  workspace: { type: 'string' },
  'timeout-ms': { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies FlagSpec;

/** The exit code of a verification report: passed and skipped 0, failed 1, needs_review 4. */
export function reportExitCode(report: Pick<VerificationReport, 'status'>): number {
  if (report.status === 'failed') return EXIT.failed;
  if (report.status === 'needs_review') return EXIT.needsReview;
  return EXIT.ok;
}

/** `a3s verify --subject S --cmd C [--cmd C ...]`: a verification report of the commands, its status as the exit code. */
export async function verifyCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('verify', args, VERIFY_FLAGS);
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${positionals[0]}" (commands go in --cmd)`, 'verify');
  const subject = stringFlag(values, 'subject');
  if (subject === undefined || subject.trim().length === 0) throw new UsageError('missing --subject', 'verify');
  const commands = stringList(values, 'cmd');
  if (commands.length === 0) throw new UsageError('missing --cmd (at least one command)', 'verify');
  const emptyAt = commands.findIndex((c) => c.trim().length === 0);
  if (emptyAt >= 0) throw new UsageError(`--cmd number ${emptyAt + 1} is empty`, 'verify');
  const timeoutMs = integerFlag('verify', values, 'timeout-ms', 1);
  const sessionId = stringFlag(values, 'session');
  const workspace = stringFlag(values, 'workspace');
  if (sessionId !== undefined && workspace !== undefined)
    throw new UsageError('--session and --workspace exclude each other (the session has its workspace)', 'verify');
  const client = connect(resolveCliConfig(values, io));
  const session: Session =
    sessionId !== undefined
      ? await client.resumeSession(sessionId)
      : await client.session(workspace !== undefined ? resolve(io.cwd, workspace) : undefined, {});
  let report: VerificationReport;
  try {
    report = (await session.verifyCommands({
      subject,
      commands: commands.map((command, i) => ({
        id: `cmd-${i + 1}`,
        kind: 'command',
        command,
        required: true,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      })),
    })) as VerificationReport;
  } finally {
    // A session opened only for this verification is closed afterwards (a closed session stays stored, its report too).
    if (sessionId === undefined) await session.close().catch(() => undefined);
  }
  if (booleanFlag(values, 'json')) io.out(`${JSON.stringify(report, null, 2)}\n`);
  else printReport(report, io);
  return reportExitCode(report);
}

function printReport(report: VerificationReport, io: CliIo): void {
  for (const check of report.checks) {
    const ran =
      check.exit_code === null
        ? 'did not run'
        : `exit ${check.exit_code}${check.timed_out ? ', timed out' : ''}, ${check.duration_ms} ms`;
    io.out(`${check.status.padEnd(12)} ${check.id}  ${check.command}  (${ran})\n`);
    if (check.status !== 'passed' && check.output_tail.length > 0) {
      io.err(`--- ${check.id} output (end) ---\n${check.output_tail}${check.output_tail.endsWith('\n') ? '' : '\n'}`);
    }
    if (check.residual_risk) io.err(`${check.id}: ${check.residual_risk}\n`);
  }
  const { total, passed, failed, skipped } = report.summary;
  io.out(
    `${report.subject}: ${report.status} (${passed}/${total} passed, ${failed} failed, ${skipped} skipped; report ${report.id} in session ${report.session_id})\n`,
  );
}
