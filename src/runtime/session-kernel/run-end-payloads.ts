import type { AgentEndPayload } from '../../protocol/runtime-event.js';
import type { AgentResult, RunRecord } from '../../protocol/run-record.js';
import type { VerificationSummary } from '../../protocol/verification-summary.js';
import type { RunOutcome } from '../loop/run-loop.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';

/** The agent_end payload of a run that ended: its AgentResult in the seed's wire form, the provider's meta. */
export function agentEndPayload(
  config: Pick<ResolvedSessionConfig, 'model'>,
  outcome: RunOutcome,
  result: AgentResult,
  verificationSummary: VerificationSummary,
): AgentEndPayload {
  return {
    text: result.text,
    usage: {
      prompt_tokens: result.promptTokens,
      completion_tokens: result.completionTokens,
      total_tokens: result.totalTokens,
    },
    verification_summary: verificationSummary,
    ...(outcome.meta
      ? { meta: { provider: config.model.providerName, request_model: config.model.modelName, ...outcome.meta } }
      : {}),
    status: outcome.status,
    tool_calls_count: result.toolCallsCount,
    verification_status: result.verificationStatus,
    pending_verification_count: result.pendingVerificationCount,
    failed_verification_count: result.failedVerificationCount,
    verification_report_count: result.verificationReportCount,
    verification_summary_text: result.verificationSummaryText,
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/** The payload of post_response and on_success: the seed's fields (response_text, tool_calls_count, usage, duration_ms). */
export function runResultPayload(
  config: Pick<ResolvedSessionConfig, 'sessionId' | 'labels'>,
  record: RunRecord,
  result: AgentResult,
  status: RunOutcome['status'],
  now: number,
): Record<string, unknown> {
  return {
    session_id: config.sessionId,
    run_id: record.runId,
    response_text: result.text,
    tool_calls_count: result.toolCallsCount,
    usage: {
      prompt_tokens: result.promptTokens,
      completion_tokens: result.completionTokens,
      total_tokens: result.totalTokens,
    },
    duration_ms: Math.max(0, (record.endedAtMs ?? now) - record.createdAtMs),
    status,
    verification_status: result.verificationStatus,
    labels: config.labels,
  };
}

/** A run that failed before (or instead of) its loop: no text, no usage, the error. */
export function failedOutcome(code: NonNullable<RunOutcome['error']>['code'], message: string): RunOutcome {
  return {
    status: 'failed',
    text: '',
    toolCallsCount: 0,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    added: [],
    error: { code, message },
  };
}
