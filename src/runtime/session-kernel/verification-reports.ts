import type { VerificationPreset, VerificationReport } from '../../protocol/verification.js';
import type { HostEnv } from '../ports/host-env.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { ToolCallRequest } from '../invocation/tool-call-state.js';
import type { ToolResult } from '../tools/define-tool.js';
import { detectPresets, matchPresetCommand } from '../verification/detect-presets.js';
import { reportForPresetRun } from '../verification/preset-report.js';
import { artifactUris } from '../verification/run-verification.js';
import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import type { SessionEmit } from './session-emitter.js';
import type { SingleFlight } from './single-flight.js';

/** The bash tool's default and maximum timeouts (ms), as its schema declares them. */
export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Reports a session keeps (oldest dropped first). */
const MAX_VERIFICATION_REPORTS = 200;

/** What a session's verification reports need from the session. */
export interface VerificationReportsDeps {
  readonly sessionId: string;
  /** The session's pinned workspace (presets are read through a lease of it). */
  readonly workspace: WorkspaceAccess;
  readonly hostEnv: HostEnv;
  readonly emit: SessionEmit;
  /** The active run: preset reports attach only to calls of the active run. */
  readonly flight: SingleFlight;
}

/**
 * A session's verification reports (bounded, oldest dropped first), and the reports attached to a run when
 * the model's bash call runs one of the workspace's verification presets.
 */
export class VerificationReports {
  /** Preset reports being attached during the active run; the run awaits them before its result. */
  private pendingReports: Promise<void>[] = [];
  /** Verification presets of the workspace, detected on the first bash call of a run (cleared when the run ends). */
  private presets: Promise<VerificationPreset[]> | undefined;

  constructor(
    private readonly host: VerificationReportsDeps,
    private readonly reports: VerificationReport[] = [],
  ) {}

  /** Verification reports, oldest first. */
  list(): VerificationReport[] {
    return [...this.reports];
  }

  /** The reports attached to one run. */
  forRun(runId: string): VerificationReport[] {
    return this.reports.filter((r) => r.run_id === runId);
  }

  /** A model's bash call that covers a command of the workspace's verification presets attaches a report (subject `shell:<id>`) to the run. */
  attachPresetReport(
    call: ToolCallRequest,
    args: unknown,
    result: ToolResult,
    startedAtMs: number,
    ctx: InvocationContext,
  ): void {
    const activeRunId = this.host.flight.runId;
    if (
      call.origin === 'host_direct' ||
      call.name.toLowerCase() !== 'bash' ||
      activeRunId === undefined ||
      activeRunId !== ctx.runId
    )
      return;
    const command =
      typeof (args as { command?: unknown }).command === 'string' ? (args as { command: string }).command : '';
    const timeoutMs =
      typeof (args as { timeout?: unknown }).timeout === 'number'
        ? (args as { timeout: number }).timeout
        : BASH_DEFAULT_TIMEOUT_MS;
    this.presets ??= detectPresets(this.host.workspace).catch(() => []);
    const runId = ctx.runId;
    const pending = this.presets.then((presets) => {
      const preset = matchPresetCommand(command, presets);
      if (!preset) return;
      const now = this.host.hostEnv.now();
      this.add(
        reportForPresetRun(
          preset,
          {
            output: result.output,
            exitCode: result.exitCode,
            timedOut: result.metadata?.timed_out === true,
            truncated: false,
            evidenceUris: artifactUris(result.metadata),
            startedAtMs,
            durationMs: Math.max(0, now - startedAtMs),
            timeoutMs,
          },
          { newId: (prefix) => this.host.hostEnv.newId(prefix), sessionId: this.host.sessionId, runId },
        ),
      );
    });
    this.pendingReports.push(pending);
  }

  /** Wait for the ending run's preset reports and forget the detected presets (the next run detects them again). */
  async settleRun(): Promise<void> {
    await Promise.all(this.pendingReports.splice(0));
    this.presets = undefined;
  }

  /** Keep a report (the oldest beyond the bound go) and emit verification_completed. */
  add(report: VerificationReport): void {
    this.reports.push(report);
    if (this.reports.length > MAX_VERIFICATION_REPORTS)
      this.reports.splice(0, this.reports.length - MAX_VERIFICATION_REPORTS);
    this.host.emit(report.run_id ?? undefined, 'verification_completed', {
      report_id: report.id,
      subject: report.subject,
      status: report.status,
      failed_required: report.summary.required_failed,
    });
  }
}
