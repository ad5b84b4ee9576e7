import {
  VERIFICATION_OUTPUT_TAIL_BYTES,
  VERIFICATION_REPORT_SCHEMA,
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
  /** Artifact URIs found in the run's metadata (the check's `evidence_uris`). */
  evidenceUris?: readonly string[];
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

/** The last `maxBytes` UTF-8 bytes of `text`, prefixed with a marker naming how much was cut. */
export function outputTail(text: string, maxBytes = VERIFICATION_OUTPUT_TAIL_BYTES): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let start = bytes.length - maxBytes;
  // Skip UTF-8 continuation bytes so the tail starts on a character boundary.
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start += 1;
  return `[... ${start} bytes omitted]\n${bytes.subarray(start).toString('utf8')}`;
}

/** Every `artifact_uri` found anywhere in a tool result's metadata, sorted and deduplicated (the seed's evidence). */
export function artifactUris(metadata: unknown): string[] {
  const found: string[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (depth > 8 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) return value.forEach((item) => walk(item, depth + 1));
    const uri = (value as { artifact_uri?: unknown }).artifact_uri;
    if (typeof uri === 'string') found.push(uri);
    for (const item of Object.values(value)) walk(item, depth + 1);
  };
  walk(metadata, 0);
  return [...new Set(found)].sort();
}

function describeCommand(command: VerificationCommand): string {
  return command.description ?? `${command.kind} check ${command.id}`;
}

/** The fields of a check that come from its command (command checks suggest bash, as in the seed). */
function checkOf(command: VerificationCommand) {
  return {
    id: command.id,
    kind: command.kind,
    description: describeCommand(command),
    required: command.required,
    suggested_tools: ['bash'],
    command: command.command,
    expect_exit: command.expectExit,
  };
}

function skippedCheck(command: VerificationCommand): VerificationCheck {
  return {
    ...checkOf(command),
    status: 'skipped',
    residual_risk: 'verification command could not run: the verification was cancelled before it started',
    exit_code: null,
    timed_out: false,
    duration_ms: 0,
    output_tail: '',
  };
}

/** Turn one command's outcome into a check: passed iff it ran to the end and exited with `expectExit`. */
export function checkFromResult(
  command: VerificationCommand,
  result: VerificationCommandResult,
  durationMs: number,
  timeoutMs: number,
  extraRisks: readonly string[] = [],
): VerificationCheck {
  const passed = !result.timedOut && result.exitCode === command.expectExit;
  const risks: string[] = [];
  if (result.timedOut) risks.push(`verification command timed out after ${timeoutMs} ms: ${command.command}`);
  else if (!passed)
    risks.push(
      `verification command exited with code ${result.exitCode}, expected ${command.expectExit}: ${command.command}`,
    );
  risks.push(...extraRisks);
  if (result.truncated)
    risks.push(`output of check ${command.id} was truncated by the runner; its tail may not be the end of the output`);
  const evidence = result.evidenceUris ?? [];
  return {
    ...checkOf(command),
    status: passed ? 'passed' : 'failed',
    ...(evidence.length > 0 ? { evidence_uris: [...evidence] } : {}),
    ...(risks.length > 0 ? { residual_risk: risks.join('; ') } : {}),
    exit_code: result.exitCode,
    timed_out: result.timedOut,
    duration_ms: Math.max(0, Math.round(durationMs)),
    output_tail: outputTail(result.output),
  };
}

async function runCheck(command: VerificationCommand, deps: VerificationDeps): Promise<VerificationCheck> {
  const risks: string[] = [];
  let timeoutMs = command.timeoutMs;
  if (deps.maxTimeoutMs !== undefined && timeoutMs > deps.maxTimeoutMs) {
    risks.push(`timeout clamped from ${timeoutMs} ms to the runner's limit of ${deps.maxTimeoutMs} ms`);
    timeoutMs = deps.maxTimeoutMs;
  }
  const started = deps.now();
  const result = await deps.runCommand(command.command, timeoutMs);
  return checkFromResult(command, result, deps.now() - started, timeoutMs, risks);
}

/** Count a report's checks. */
export function countChecks(checks: readonly VerificationCheck[]): VerificationCounts {
  return {
    total: checks.length,
    passed: checks.filter((c) => c.status === 'passed').length,
    failed: checks.filter((c) => c.status === 'failed').length,
    skipped: checks.filter((c) => c.status === 'skipped').length,
    required_failed: checks.filter((c) => c.required && c.status === 'failed').length,
  };
}

/**
 * The seed's report verdict: any failed check -> failed; a required check that needs review or was
 * skipped, or any report-level residual risk -> needs_review; no checks -> skipped; otherwise passed.
 */
export function reportStatus(
  checks: readonly Pick<VerificationCheck, 'status' | 'required'>[],
  residualRisks: readonly string[] = [],
): VerificationStatus {
  if (checks.some((c) => c.status === 'failed')) return 'failed';
  if (checks.some((c) => c.required && (c.status === 'needs_review' || c.status === 'skipped'))) return 'needs_review';
  if (residualRisks.length > 0) return 'needs_review';
  return checks.length === 0 ? 'skipped' : 'passed';
}

/** What buildReport needs besides the checks. */
export interface ReportContext {
  newId(prefix: string): string;
  sessionId: string;
  runId?: string;
}

/** Assemble a report from checks already run: verdict and counts; `residualRisks` are the report's own. */
export function buildReport(
  subject: string,
  checks: VerificationCheck[],
  createdAtMs: number,
  durationMs: number,
  ctx: ReportContext,
  residualRisks: string[] = [],
): VerificationReport {
  return {
    schema: VERIFICATION_REPORT_SCHEMA,
    subject,
    status: reportStatus(checks, residualRisks),
    checks,
    residual_risks: residualRisks,
    id: ctx.newId('verif'),
    session_id: ctx.sessionId,
    run_id: ctx.runId ?? null,
    created_at_ms: createdAtMs,
    duration_ms: Math.max(0, Math.round(durationMs)),
    summary: countChecks(checks),
  };
}

/** Run a verification request's commands one after another and build its report (see reportStatus for the verdict). */
export async function runVerification(
  request: VerificationRequest,
  deps: VerificationDeps,
): Promise<VerificationReport> {
  const createdAt = deps.now();
  const checks: VerificationCheck[] = [];
  for (const command of request.commands) {
    checks.push(deps.signal?.aborted ? skippedCheck(command) : await runCheck(command, deps));
  }
  return buildReport(request.subject, checks, createdAt, deps.now() - createdAt, deps);
}
