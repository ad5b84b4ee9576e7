import type { VerificationPresetCommand, VerificationReport } from '../../protocol/verification.js';
import {
  buildReport,
  checkFromResult,
  type ReportContext,
  type VerificationCommandResult,
} from './run-verification.js';

/** A bash call that already ran: its outcome, when it started and how long it took. */
export interface CompletedCommand extends VerificationCommandResult {
  startedAtMs: number;
  durationMs: number;
  /** The timeout the call ran with (named in a timed-out check's residual risk). */
  timeoutMs: number;
}

/** The seed's subject of a report attached to a bash call that ran a preset command: `shell:<command id>`. */
export function presetSubject(command: Pick<VerificationPresetCommand, 'id'>): string {
  return `shell:${command.id}`;
}

/**
 * A one-check report for a bash call that covered a preset command, built from the call's outcome
 * without running anything again (the check keeps the preset command's `required` and `expect_exit`).
 */
export function reportForPresetRun(
  command: VerificationPresetCommand,
  completed: CompletedCommand,
  ctx: ReportContext,
): VerificationReport {
  const check = checkFromResult(
    {
      id: command.id,
      kind: command.kind,
      description: command.description,
      command: command.command,
      required: command.required,
      timeoutMs: completed.timeoutMs,
      expectExit: command.expect_exit,
    },
    completed,
    completed.durationMs,
    completed.timeoutMs,
  );
  return buildReport(presetSubject(command), [check], completed.startedAtMs, completed.durationMs, ctx);
}
