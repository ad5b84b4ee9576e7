import {
  VERIFICATION_REPORT_SCHEMA,
  type ExternalVerificationReport,
  type VerificationReport,
  type VerificationRequest,
} from '../../protocol/verification.js';
import type { HostEnv } from '../ports/host-env.js';
import { artifactUris, countChecks, runVerification } from '../verification/run-verification.js';
import type { HostDirectCalls } from './host-direct-calls.js';
import type { SessionArtifacts } from './session-artifacts.js';
import type { SessionEmit } from './session-emitter.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import type { SessionSaves } from './session-saves.js';
import { BASH_MAX_TIMEOUT_MS, type VerificationReports } from './verification-reports.js';

/** What host-requested verifications need from the session. */
export interface SessionVerificationsDeps {
  readonly sessionId: string;
  readonly hostEnv: HostEnv;
  readonly emit: SessionEmit;
  readonly lifecycle: SessionLifecycle;
  readonly reports: VerificationReports;
  /** Verification commands run through bash on the host-direct path. */
  readonly directCalls: HostDirectCalls;
  /** A cut output's tail matters for a verdict: it is read from its artifact. */
  readonly artifacts: SessionArtifacts;
  /** An autoSave session is saved after each verification. */
  readonly persistence: SessionSaves;
}

/** A session's verifications: its reports, and verification runs the host asks for (POST .../verifications). */
export class SessionVerifications {
  constructor(private readonly deps: SessionVerificationsDeps) {}

  /** Verification reports, oldest first. */
  list(): VerificationReport[] {
    return this.deps.reports.list();
  }

  /** Run verification commands through bash on the host-direct path (no run lease), keep the report and, with autoSave, save. */
  async run(request: VerificationRequest): Promise<VerificationReport> {
    const { deps } = this;
    deps.lifecycle.assertOpen();
    deps.emit(undefined, 'verification_started', { subject: request.subject, commands: request.commands.length });
    const report = await runVerification(request, {
      sessionId: deps.sessionId,
      now: () => deps.hostEnv.now(),
      newId: (prefix) => deps.hostEnv.newId(prefix),
      maxTimeoutMs: BASH_MAX_TIMEOUT_MS,
      runCommand: async (command, timeoutMs) => {
        const outcome = await deps.directCalls.invoke('bash', { command, timeout: timeoutMs }, 'host_direct');
        // The tail of the output matters for a verdict: read it from the artifact when the result was cut.
        const full = outcome.artifactId ? deps.artifacts.get(outcome.artifactId)?.content : undefined;
        return {
          output: full ?? outcome.output,
          exitCode: outcome.exitCode,
          timedOut: outcome.metadata?.timed_out === true,
          truncated: full === undefined && outcome.truncated,
          evidenceUris: artifactUris(outcome.metadata),
        };
      },
    });
    deps.reports.add(report);
    await deps.persistence.saveIfAutoSave();
    return report;
  }

  /**
   * Keep reports the host produced elsewhere (the seed's recordVerificationReports): each as given (its status is
   * the host's verdict), with an id, this session, no run, now, and its check counts; then, with autoSave, save.
   */
  async record(external: readonly ExternalVerificationReport[]): Promise<VerificationReport[]> {
    const { deps } = this;
    deps.lifecycle.assertOpen();
    const now = deps.hostEnv.now();
    const kept = external.map((report): VerificationReport => {
      const checks = report.checks.map((check) => ({
        ...check,
        command: check.command ?? '',
        expect_exit: check.expect_exit ?? 0,
        exit_code: check.exit_code ?? null,
        timed_out: check.timed_out ?? false,
        duration_ms: check.duration_ms ?? 0,
        output_tail: check.output_tail ?? '',
      }));
      return {
        ...report,
        schema: VERIFICATION_REPORT_SCHEMA,
        checks,
        id: deps.hostEnv.newId('verif'),
        session_id: deps.sessionId,
        run_id: null,
        created_at_ms: now,
        duration_ms: 0,
        summary: countChecks(checks),
      };
    });
    for (const report of kept) deps.reports.add(report);
    await deps.persistence.saveIfAutoSave();
    return kept;
  }
}
