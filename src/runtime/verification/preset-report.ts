import type { VerificationPreset, VerificationReport } from '../../protocol/verification.js';
import { buildReport, checkFromResult, type ReportContext, type VerificationCommandResult } from './run-verification.js';

/** A bash call that already ran: its outcome, when it started and how long it took. */
export interface CompletedCommand extends VerificationCommandResult {
  startedAtMs: number;
  durationMs: number;
  /** The timeout the call ran with (named in a timed-out check's residual risk). */
  timeoutMs: number;
}

/** The subject of reports attached to bash calls that ran a preset; one subject per preset, so a re-run replaces the verdict. */
export function presetSubject(preset: VerificationPreset): string {
  return `preset:${preset.id}`;
}

/**
 * A one-check report for a bash call that ran a preset's command, built from the call's outcome
 * without running anything again (the check is required and expects exit 0).
 */
export function reportForPresetRun(preset: VerificationPreset, completed: CompletedCommand, ctx: ReportContext): VerificationReport {
  const check = checkFromResult(
    { id: preset.id, kind: preset.kind, description: preset.description, command: preset.command, required: true, timeoutMs: completed.timeoutMs, expectExit: 0 },
    completed,
    completed.durationMs,
    completed.timeoutMs,
  );
  return buildReport(presetSubject(preset), [check], completed.startedAtMs, completed.durationMs, ctx);
}
