import type { LoopCheckpoint } from '../../protocol/loop-checkpoint.js';
import type { PlanProgress } from '../../protocol/planning.js';
import type { LoopState } from './run-loop.js';

/** The wire checkpoint of a loop state. */
export function toCheckpoint(
  state: LoopState,
  meta: {
    runId: string;
    sessionId: string;
    input: string;
    sideQuestion: boolean;
    now: number;
    plan?: PlanProgress;
    traceParent?: string;
  },
): LoopCheckpoint {
  return {
    schema_version: 1,
    run_id: meta.runId,
    session_id: meta.sessionId,
    turn: state.turn,
    input: meta.input,
    side_question: meta.sideQuestion,
    messages: state.messages,
    total_usage: {
      prompt_tokens: state.usage.promptTokens,
      completion_tokens: state.usage.completionTokens,
      total_tokens: state.usage.totalTokens,
    },
    tool_calls_count: state.toolCallsCount,
    verification_reports: [],
    convergence: {
      tool_rounds: state.toolRounds,
      parse_failures: state.parseFailures,
      continuations: state.continuations,
      last_call_key: state.lastCallKey,
      same_call_count: state.sameCallCount,
    },
    checkpoint_ms: meta.now,
    ...(meta.plan ? { plan: meta.plan } : {}),
    ...(meta.traceParent !== undefined ? { trace_parent: meta.traceParent } : {}),
  };
}

/** The loop state a checkpoint resumes from. */
export function fromCheckpoint(checkpoint: LoopCheckpoint): LoopState {
  return {
    turn: checkpoint.turn,
    messages: checkpoint.messages,
    usage: {
      promptTokens: checkpoint.total_usage.prompt_tokens,
      completionTokens: checkpoint.total_usage.completion_tokens,
      totalTokens: checkpoint.total_usage.total_tokens,
    },
    toolCallsCount: checkpoint.tool_calls_count,
    toolRounds: checkpoint.convergence.tool_rounds,
    parseFailures: checkpoint.convergence.parse_failures,
    continuations: checkpoint.convergence.continuations,
    lastCallKey: checkpoint.convergence.last_call_key,
    sameCallCount: checkpoint.convergence.same_call_count,
  };
}
