import {
  VERIFICATION_OUTPUT_TAIL_BYTES,
  type VerificationCheck,
  type VerificationCommand,
  type VerificationCounts,
  type VerificationReport,
  type VerificationRequest,
  type VerificationStatus,
} from '../../protocol/verification.js';

/** What running one command yields; the session maps a host-direct bash outcome onto it. */
export interface VerificationCommandResult {
  /** Combined stdout/stderr as the command runner kept it. */
  output: string;
  exitCode: number;
  timedOut: boolean;
  /** True when the runner cut the output (the tail may then not be the real end of the output). */
  truncated: boolean;
}

/** Everything runVerification needs from its host: a command runner, the clock and ids. */
export interface VerificationDeps {
  /** Run one shell command in the session workspace; resolves with its outcome (rejects only on a fault such as a closed session). */
  runCommand(command: string, timeoutMs: number): Promise<VerificationCommandResult>;
  now(): number;
  newId(prefix: string): string;
  sessionId: string;
  runId?: string;
  /** The runner's own timeout ceiling (e.g. the bash tool's 600000): longer timeouts are clamped, with a residual risk. */
  maxTimeoutMs?: number;
  /** When aborted, checks that have not started yet are skipped. */
  signal?: AbortSignal;
}

/** Residual risk added to a report when no check of kind `test` ran. */
export const NO_TEST_RISK = 'no test command ran';

/** The last `maxBytes` UTF-8 bytes of `text`, prefixed with a marker naming how much was cut. */
export function outputTail(text: string, maxBytes = VERIFICATION_OUTPUT_TAIL_BYTES): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let start = bytes.length - maxBytes;
  // Skip UTF-8 continuation bytes so the tail starts on a character boundary.
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start += 1;
  return `[... ${start} bytes omitted]\n${bytes.subarray(start).toString('utf8')}`;
}

function describeCommand(command: VerificationCommand): string {
  return command.description ?? `${command.kind} check ${command.id}`;
}

/** The fields of a check that come from its command. */
function checkOf(command: VerificationCommand) {
  return { id: command.id, kind: command.kind, description: describeCommand(command), command: command.command, required: command.required, expect_exit: command.expectExit };
}

function skippedCheck(command: VerificationCommand): VerificationCheck {
  return {
    ...checkOf(command),
    exit_code: null,
    status: 'skipped',
    duration_ms: 0,
    output_tail: '',
    residual_risks: [`check ${command.id} was skipped: the verification was cancelled before it started`],
  };
}

/** Turn one command's outcome into a check (status, residual risks, output tail). */
export function checkFromResult(command: VerificationCommand, result: VerificationCommandResult, durationMs: number, timeoutMs: number, extraRisks: readonly string[] = []): VerificationCheck {
  const risks = [...extraRisks];
  let status: VerificationCheck['status'];
  if (result.timedOut) status = 'timed_out';
  else if (result.exitCode === command.expectExit) status = 'passed';
  else status = 'failed';

  if (status === 'timed_out') risks.push(`check ${command.id} timed out after ${timeoutMs} ms; its outcome is unknown`);
  if (!command.required && status === 'failed') risks.push(`optional check ${command.id} failed (exit ${result.exitCode}, expected ${command.expectExit}); it does not fail the report`);
  if (!command.required && status === 'timed_out') risks.push(`optional check ${command.id} timed out; it does not fail the report`);
  if (result.truncated) risks.push(`output of check ${command.id} was truncated by the runner; its tail may not be the end of the output`);
  return {
    ...checkOf(command),
    exit_code: result.exitCode,
    status,
    duration_ms: Math.max(0, Math.round(durationMs)),
    output_tail: outputTail(result.output),
    residual_risks: risks,
  };
}

async function runCheck(command: VerificationCommand, deps: VerificationDeps): Promise<VerificationCheck> {
  const risks: string[] = [];
  let timeoutMs = command.timeoutMs;
  if (deps.maxTimeoutMs !== undefined && timeoutMs > deps.maxTimeoutMs) {
    risks.push(`check ${command.id}: timeout clamped from ${timeoutMs} ms to the runner's limit of ${deps.maxTimeoutMs} ms`);
    timeoutMs = deps.maxTimeoutMs;
  }
  const started = deps.now();
  const result = await deps.runCommand(command.command, timeoutMs);
  return checkFromResult(command, result, deps.now() - started, timeoutMs, risks);
}

/** Count a report's checks; `failed` includes timed-out checks. */
export function countChecks(checks: readonly VerificationCheck[]): VerificationCounts {
  const failedLike = (c: VerificationCheck): boolean => c.status === 'failed' || c.status === 'timed_out';
  return {
    total: checks.length,
    passed: checks.filter((c) => c.status === 'passed').length,
    failed: checks.filter(failedLike).length,
    skipped: checks.filter((c) => c.status === 'skipped').length,
    required_failed: checks.filter((c) => c.required && failedLike(c)).length,
  };
}

/**
 * The verdict of a set of checks: any required check failed or timed out -> failed; no check ran ->
 * skipped; an optional check failed/timed out, or a required check was skipped -> needs_review;
 * otherwise passed.
 */
export function reportStatus(checks: readonly VerificationCheck[]): VerificationStatus {
  const failedLike = (c: VerificationCheck): boolean => c.status === 'failed' || c.status === 'timed_out';
  if (checks.some((c) => c.required && failedLike(c))) return 'failed';
  if (checks.every((c) => c.status === 'skipped')) return 'skipped';
  if (checks.some((c) => failedLike(c) || (c.required && c.status === 'skipped'))) return 'needs_review';
  return 'passed';
}

/** What buildReport needs besides the checks. */
export interface ReportContext {
  newId(prefix: string): string;
  sessionId: string;
  runId?: string;
}

/** Assemble a report from checks already run: verdict, counts, and residual risks (checks' first, then "no test command ran"). */
export function buildReport(subject: string, checks: VerificationCheck[], createdAtMs: number, durationMs: number, ctx: ReportContext): VerificationReport {
  const residualRisks = checks.flatMap((c) => c.residual_risks);
  if (!checks.some((c) => c.kind === 'test' && c.status !== 'skipped')) residualRisks.push(NO_TEST_RISK);
  return {
    schema: 'a3s.verification_report.v1',
    id: ctx.newId('verif'),
    session_id: ctx.sessionId,
    run_id: ctx.runId ?? null,
    subject,
    status: reportStatus(checks),
    created_at_ms: createdAtMs,
    duration_ms: Math.max(0, Math.round(durationMs)),
    checks,
    residual_risks: residualRisks,
    summary: countChecks(checks),
  };
}

/** Run a verification request's commands one after another and build its report (see reportStatus for the verdict). */
export async function runVerification(request: VerificationRequest, deps: VerificationDeps): Promise<VerificationReport> {
  const createdAt = deps.now();
  const checks: VerificationCheck[] = [];
  for (const command of request.commands) {
    checks.push(deps.signal?.aborted ? skippedCheck(command) : await runCheck(command, deps));
  }
  return buildReport(request.subject, checks, createdAt, deps.now() - createdAt, deps);
}
