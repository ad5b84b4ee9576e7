import type { AgentEvent, Session } from '../client/index.js';
import type { AgentResult, RunRecord } from '../protocol/run-record.js';
import type { CliIo } from './cli-io.js';
import { EXIT } from './exit-codes.js';
import { askOnTerminal, printQuestionCommands } from './question-prompt.js';
import { runExitCode } from './run-exit-code.js';
import { summarizeArgs, ToolActivity } from './tool-activity.js';

/** How `run` and `resume` follow a run. */
export interface FollowOptions {
  /** Approve every confirmation as it comes (`--approve`) instead of exiting 3. */
  approve: boolean;
  /** Print the AgentResult as JSON instead of streaming the answer text (`--json`). */
  json: boolean;
  /** A run without a verification report is not done (`--wait-verification`). */
  requireReport: boolean;
  /**
   * The line that names the session and run on stderr, printed once Ctrl-C is handled: whoever reads it
   * (a user, a script waiting for it) may interrupt from then on.
   */
  announce?: string;
}

/** The events of one run, in order (an EventStream of the client). */
export interface RunEventSource extends AsyncIterable<AgentEvent> {
  close(): void;
}

/** The exit code of a process ended by a second Ctrl-C. */
export const EXIT_INTERRUPTED = 130;

/**
 * Follow run `runId` of `session` on `events` to its agent_end: answer text to stdout, tool activity to stderr,
 * confirmations approved (`approve`) or ended on with exit 3 (the run stays waiting, to be answered with
 * `a3s approve`), questions of the agent asked on the terminal or, when stdin is none, ended on with exit 3 (to
 * be answered with `a3s answer`); then read the run's record and answer the run's exit code (printing the
 * AgentResult with `json`).
 * A first Ctrl-C cancels the run (and waits for it to end), a second stops following at once (exit 130).
 */
export async function followRun(
  session: Session,
  runId: string,
  events: RunEventSource,
  options: FollowOptions,
  io: CliIo,
): Promise<number> {
  let midLine = false;
  const activity = new ToolActivity(io, () => {
    if (midLine && io.stderrIsTty) io.err('\n');
    midLine = false;
  });
  let interrupts = 0;
  const stopInterrupts = io.onInterrupt(() => {
    interrupts += 1;
    if (interrupts === 1) {
      activity.note(`[run] cancelling run ${runId} (Ctrl-C again to stop waiting)`);
      session.cancelRun(runId).catch(() => undefined);
    } else {
      events.close();
    }
  });
  if (options.announce !== undefined) io.err(options.announce);
  let ended = false;
  try {
    for await (const event of events) {
      if (interrupts > 1) break;
      const ofRun = event.metadata.run_id === undefined || event.metadata.run_id === runId;
      switch (event.type) {
        case 'text_delta':
          if (!ofRun || options.json) break;
          activity.clearLine();
          io.out(event.payload.text);
          if (event.payload.text.length > 0) midLine = !event.payload.text.endsWith('\n');
          break;
        case 'tool_execution_start':
          activity.started(event.payload.id, event.payload.name, event.payload.args);
          break;
        case 'tool_end':
          activity.ended(event.payload.id, event.payload.name, event.payload.exit_code, event.payload.duration_ms);
          break;
        case 'permission_denied':
          activity.note(`[denied] ${event.payload.tool_name}: ${event.payload.reason}`);
          break;
        case 'confirmation_required': {
          const toolId = event.payload.tool_id;
          const what = `${event.payload.tool_name} ${summarizeArgs(event.payload.args)}`.trim();
          if (!options.approve) {
            activity.note(`[confirm] ${what} needs confirmation (tool id ${toolId})`);
            activity.note(
              `a3s: confirmation needed for ${what} in session ${session.sessionId}, run ${runId}: answer with "a3s approve ${session.sessionId} ${toolId}" (or --reject), or rerun with --approve`,
            );
            return EXIT.confirmationNeeded;
          }
          try {
            await session.confirmToolUse(toolId, true, 'approved by a3s run --approve');
            activity.note(`[confirm] approved ${what}`);
          } catch (error) {
            activity.note(
              `[confirm] could not approve ${what}: ${error instanceof Error ? error.message : String(error)}`,
            );
          }
          break;
        }
        case 'user_question': {
          if (!ofRun) break;
          activity.clearLine();
          if (midLine && io.stderrIsTty) {
            io.err('\n');
            midLine = false;
          }
          if (io.stdinIsTty && (await askOnTerminal(session, event.payload, io, activity))) break;
          // Ctrl-C at the prompt: the run is being cancelled, its question with it; follow it to its end.
          if (interrupts > 0) break;
          printQuestionCommands(session, runId, event.payload, io);
          return EXIT.questionPending;
        }
        case 'confirmation_timeout':
          activity.note(
            `[confirm] ${event.payload.tool_name ?? event.payload.tool_id}: no answer in time (${event.payload.action_taken})`,
          );
          break;
        case 'error':
          if (ofRun) activity.note(`[error] ${event.payload.code}: ${event.payload.message}`);
          break;
        case 'replay_gap':
          activity.note(
            `[events] retention dropped events ${event.payload.requested_after}..${event.payload.first_available} of the session`,
          );
          break;
        case 'agent_end':
          if (ofRun) ended = true;
          break;
        default:
          break;
      }
      if (ended) break;
    }
  } finally {
    activity.stop();
    stopInterrupts();
    events.close();
  }
  if (interrupts > 1) return EXIT_INTERRUPTED;
  if (midLine) io.out('\n');
  const record = (await session.runSnapshot(runId)) as RunRecord;
  if (record.status !== 'completed' && record.status !== 'failed' && record.status !== 'cancelled') {
    io.err(
      `a3s: the event stream of run ${runId} ended while the run is ${record.status}; follow it with "a3s events ${session.sessionId} --follow"\n`,
    );
    return EXIT.failed;
  }
  const result: AgentResult | undefined = record.result;
  if (options.json) io.out(`${JSON.stringify(result ?? null, null, 2)}\n`);
  const code = runExitCode(record.status, result, options.requireReport);
  io.err(`${runSummary(record, result, options.requireReport)}\n`);
  return code;
}

/** The run's last stderr line: its status, its error, its verification. */
function runSummary(record: RunRecord, result: AgentResult | undefined, requireReport: boolean): string {
  const error = record.error ? `: ${record.error.code}: ${record.error.message}` : '';
  let verification = '';
  if (result) {
    verification = result.verificationSummaryText
      ? ` (${result.verificationSummaryText})`
      : ` (verification ${result.verificationStatus})`;
    if (requireReport && result.verificationStatus === 'skipped')
      verification += '; --wait-verification: the run produced no verification report';
  }
  return `[run] ${record.runId} ${record.status}${error}${verification}`;
}
