import type { ChatMessage, ToolCall } from '../../protocol/chat-message.js';
import type { Usage } from '../../protocol/run-record.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { LlmInvoker } from '../invocation/llm-invoker.js';
import type { ToolInvoker } from '../invocation/tool-invoker.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { CONTINUATION_PROMPT } from '../prompt/system-prompt.js';
import { streamTurn, type TurnResult } from './stream-turn.js';

/** Services the loop drives. */
export interface LoopDeps {
  llm: LlmInvoker;
  tools: ToolInvoker;
  registry: ToolRegistry;
}

/** Why a run ended other than normally. */
export interface LoopError {
  code: string;
  message: string;
}

/** What the loop returns: final text, counters, and the messages it added after the input. */
export interface LoopOutcome {
  status: 'completed' | 'failed' | 'cancelled';
  text: string;
  toolCallsCount: number;
  usage: Usage;
  added: ChatMessage[];
  error?: LoopError;
}

/**
 * The agent loop: stream a turn, run its tool calls through the tool invoker, feed results back, and
 * repeat until the model answers without tools, honouring every limit in the governance snapshot.
 */
export async function runLoop(deps: LoopDeps, ctx: InvocationContext, transcript: ChatMessage[]): Promise<LoopOutcome> {
  const g = ctx.governance;
  const messages = [...transcript];
  const added: ChatMessage[] = [];
  const usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const deadline = ctx.hostEnv.now() + g.maxExecutionTimeMs;
  let toolCallsCount = 0;
  let toolRounds = 0;
  let parseFailures = 0;
  let continuations = 0;
  let lastCallKey = '';
  let sameCallCount = 0;
  let text = '';
  let turn = 0;

  const push = (message: ChatMessage) => {
    messages.push(message);
    added.push(message);
  };
  const end = (status: LoopOutcome['status'], error?: LoopError): LoopOutcome => ({ status, text, toolCallsCount, usage, added, ...(error ? { error } : {}) });
  const cancelled = () => end('cancelled', { code: 'CANCELLED', message: 'the run was cancelled' });

  for (;;) {
    if (ctx.signal.aborted) return cancelled();
    if (ctx.hostEnv.now() > deadline) return end('failed', { code: 'MAX_EXECUTION_TIME', message: `the run exceeded maxExecutionTimeMs (${g.maxExecutionTimeMs} ms)` });

    turn += 1;
    ctx.emit('turn_start', { turn });
    let result: TurnResult;
    try {
      result = await streamTurn(deps, ctx, messages, turn);
    } catch (error) {
      if (ctx.signal.aborted) return cancelled();
      const message = error instanceof Error ? error.message : String(error);
      return end('failed', { code: (error as { code?: string }).code ?? 'PROVIDER_ERROR', message });
    }
    usage.promptTokens += result.usage.promptTokens;
    usage.completionTokens += result.usage.completionTokens;
    usage.totalTokens += result.usage.totalTokens;
    ctx.emit('turn_end', {
      turn,
      usage: { prompt_tokens: result.usage.promptTokens, completion_tokens: result.usage.completionTokens, total_tokens: result.usage.totalTokens },
      finish_reason: result.finishReason,
    });

    const assistant: ChatMessage = { role: 'assistant', content: result.text || null };
    if (result.reasoning) assistant.reasoning = result.reasoning;
    if (result.toolCalls.length > 0) assistant.tool_calls = result.toolCalls;
    push(assistant);
    if (result.text) text = result.text;

    if (result.toolCalls.length === 0) {
      const stoppedEarly = result.finishReason === 'length';
      if (g.continuationEnabled && stoppedEarly && continuations < g.maxContinuationTurns) {
        continuations += 1;
        ctx.emit('continuation_injected', { turn, continuation: continuations });
        push({ role: 'user', content: CONTINUATION_PROMPT });
        continue;
      }
      return end('completed');
    }

    if (toolRounds >= g.maxToolRounds) {
      // The model asked for more tools than allowed: answer each call so the transcript stays valid.
      for (const call of result.toolCalls) push({ role: 'tool', tool_call_id: call.id, content: `Not run: the run reached maxToolRounds (${g.maxToolRounds}).` });
      return end('failed', { code: 'MAX_TOOL_ROUNDS', message: `the run reached maxToolRounds (${g.maxToolRounds})` });
    }
    toolRounds += 1;

    for (const call of result.toolCalls) {
      if (ctx.signal.aborted) {
        push({ role: 'tool', tool_call_id: call.id, content: 'Not run: the run was cancelled.' });
        continue;
      }
      const key = `${call.function.name}\u0000${call.function.arguments}`;
      sameCallCount = key === lastCallKey ? sameCallCount + 1 : 1;
      lastCallKey = key;
      toolCallsCount += 1;
      if (sameCallCount > g.duplicateToolCallThreshold) {
        const output = `Not run: this exact ${call.function.name} call was repeated ${sameCallCount} times in a row (duplicateToolCallThreshold ${g.duplicateToolCallThreshold}). Try something different.`;
        ctx.emit('tool_end', { tool_id: call.id, tool_name: call.function.name, output, exit_code: 1, duration_ms: 0, truncated: false });
        push({ role: 'tool', tool_call_id: call.id, content: output });
        continue;
      }
      const outcome = await deps.tools.invoke({ id: call.id, name: call.function.name, args: call.function.arguments, origin: 'model' }, ctx);
      push({ role: 'tool', tool_call_id: call.id, content: outcome.output });
      if (outcome.malformedArgs) {
        parseFailures += 1;
        if (parseFailures > g.maxParseRetries) {
          answerRemaining(result.toolCalls, call, push);
          return end('failed', { code: 'MAX_PARSE_RETRIES', message: `the model sent malformed tool arguments more than maxParseRetries (${g.maxParseRetries}) times` });
        }
      }
    }
    if (ctx.signal.aborted) return cancelled();
  }
}

function answerRemaining(calls: ToolCall[], after: ToolCall, push: (m: ChatMessage) => void): void {
  const rest = calls.slice(calls.indexOf(after) + 1);
  for (const call of rest) push({ role: 'tool', tool_call_id: call.id, content: 'Not run: the run stopped after too many malformed tool calls.' });
}
