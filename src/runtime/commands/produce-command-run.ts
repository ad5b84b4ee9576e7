import type { RunErrorCode } from '../../errors.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { RunRecord, Usage } from '../../protocol/run-record.js';
import { buildVerificationSummary } from '../../protocol/verification-summary.js';
import type { HostEnv } from '../ports/host-env.js';
import { toAgentResult } from '../session-kernel/agent-result.js';
import type { SessionEmit } from '../session-kernel/session-emitter.js';
import type { SessionRuns } from '../session-kernel/session-runs.js';
import type { SessionTranscript } from '../session-kernel/session-transcript.js';
import { CommandFailure } from './command-failure.js';

/** What a command run needs from its session. */
export interface CommandRunHost {
  readonly model: string;
  readonly hostEnv: HostEnv;
  readonly emit: SessionEmit;
  readonly runs: SessionRuns;
  readonly transcript: SessionTranscript;
  /** The save after a run ends; failures are reported, never thrown. */
  saveAfterRun(): Promise<void>;
}

/** What running the command gave: its text, whether the transcript is to be emptied or replaced, and provider usage. */
export interface CommandExecution {
  readonly text: string;
  readonly clear?: boolean;
  /** The transcript that replaces the session's, without the command's own input and answer (/compact). */
  readonly replace?: ChatMessage[];
  /** Provider usage of the command (the summary call of /compact); none for the others. */
  readonly usage?: Usage;
}

const ZERO: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

interface Ended {
  status: 'completed' | 'failed' | 'cancelled';
  text: string;
  clear: boolean;
  replace?: ChatMessage[];
  usage: Usage;
  error?: { code: RunErrorCode; message: string };
}

async function settle(execute: () => Promise<CommandExecution>, signal: AbortSignal): Promise<Ended> {
  const cancelled = (): Ended => ({
    status: 'cancelled',
    text: '',
    clear: false,
    usage: ZERO,
    error: { code: 'CANCELLED', message: 'the run was cancelled' },
  });
  try {
    const done = await execute();
    return signal.aborted
      ? cancelled()
      : {
          status: 'completed',
          text: done.text,
          clear: done.clear === true,
          usage: done.usage ?? ZERO,
          ...(done.replace ? { replace: done.replace } : {}),
        };
  } catch (error) {
    if (signal.aborted) return cancelled();
    if (error instanceof CommandFailure)
      return {
        status: 'failed',
        text: '',
        clear: false,
        usage: ZERO,
        error: { code: error.code, message: error.message },
      };
    return {
      status: 'failed',
      text: '',
      clear: false,
      usage: ZERO,
      error: { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) },
    };
  }
}

/**
 * Produce one admitted run whose input is a slash command, in place of the model: agent_start, executing,
 * the command, then transcript (the input and the text as an assistant message; /clear empties it, /compact
 * replaces it; a failed or cancelled command leaves it as it was), the result with the command's provider
 * usage (zero but for /compact's summary call), status, agent_end and the autosave.
 * Never throws: a failing command becomes a failed run.
 */
export async function produceCommandRun(
  host: CommandRunHost,
  record: RunRecord,
  input: string,
  execute: () => Promise<CommandExecution>,
  signal: AbortSignal,
): Promise<RunRecord> {
  const { emit, runs } = host;
  // Where a fork at this run cuts (as for a model run): the transcript as the command found it.
  record.transcriptStart = host.transcript.messages.length;
  record.transcriptEpoch = host.transcript.epoch;
  emit(record.runId, 'agent_start', { prompt: input, model: host.model, side_question: record.sideQuestion });
  runs.setStatus(record, 'executing');
  const ended = await settle(execute, signal);
  if (ended.status === 'completed' && !record.sideQuestion) {
    const messages: ChatMessage[] = ended.clear
      ? []
      : (ended.replace ?? [
          ...host.transcript.messages,
          { role: 'user', content: input },
          { role: 'assistant', content: ended.text },
        ]);
    host.transcript.commitRun(messages, ended.usage, host.hostEnv.now());
  }
  const { usage } = ended;
  // A command run has no verification reports.
  const verificationSummary = buildVerificationSummary([]);
  const result = toAgentResult(
    {
      status: ended.status,
      text: ended.text,
      toolCallsCount: 0,
      usage,
      added: [],
      ...(ended.error ? { error: ended.error } : {}),
    },
    verificationSummary,
  );
  record.result = result;
  if (ended.error) {
    record.error = ended.error;
    if (ended.status === 'failed') emit(record.runId, 'error', ended.error);
  }
  record.endedAtMs = host.hostEnv.now();
  runs.setStatus(record, ended.status);
  emit(record.runId, 'agent_end', {
    text: result.text,
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.totalTokens,
    },
    verification_summary: verificationSummary,
    status: ended.status,
    tool_calls_count: 0,
    verification_status: result.verificationStatus,
    pending_verification_count: result.pendingVerificationCount,
    failed_verification_count: result.failedVerificationCount,
    verification_report_count: result.verificationReportCount,
    verification_summary_text: result.verificationSummaryText,
    ...(ended.error ? { error: ended.error } : {}),
  });
  await host.saveAfterRun();
  return record;
}
