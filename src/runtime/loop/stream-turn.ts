import type { RunErrorCode } from '../../errors.js';
import type { ChatMessage, ToolCall } from '../../protocol/chat-message.js';
import type { Usage } from '../../protocol/run-record.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import { GovernedCallError } from '../invocation/governed-call-error.js';
import type { LlmInvoker } from '../invocation/llm-invoker.js';
import { ProviderCallError } from '../invocation/provider-retry.js';
import type { LlmStreamEvent, LlmToolSpec } from '../llm/llm-provider.js';
import { modelInputBound, modelPresentationBound, modelUsageBound } from '../evidence/evidence-binding.js';

/** One assistant turn, fully streamed. */
export interface TurnResult {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  usage: Usage;
  finishReason: string;
  /** The seed's LlmResponseMeta of this turn's response (agent_end.meta), without the run's provider names. */
  meta?: TurnMeta;
}

/** What a turn's response said about itself, and how long it took (ms, from the call's start). */
export interface TurnMeta {
  request_url: string;
  response_id?: string;
  response_model?: string;
  response_object?: string;
  first_token_ms?: number;
  duration_ms: number;
}

/** A provider failure that ends the run, with the code the run reports. */
export class TurnError extends Error {
  constructor(
    readonly code: RunErrorCode,
    message: string,
    /** The provider's HTTP status, for a provider failure that had one. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TurnError';
  }
}

/** What one streamed turn needs of the loop's services: the LLM invoker and the tool specs the model sees. */
export interface TurnDeps {
  llm: LlmInvoker;
  toolSpecs(): readonly LlmToolSpec[];
}

/**
 * Stream one provider response, emitting text, reasoning and tool-call deltas as they arrive. The LLM invoker
 * retries (provider.max_retries) and keeps the circuit breaker; what it cannot mend ends the run.
 */
export async function streamTurn(
  deps: TurnDeps,
  ctx: InvocationContext,
  messages: ChatMessage[],
  turn: number,
): Promise<TurnResult> {
  try {
    return await attempt(deps, ctx, messages, turn);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    if (error instanceof GovernedCallError) throw new TurnError(error.code, error.message);
    if (error instanceof ProviderCallError) throw new TurnError(error.code, error.message, error.status);
    const message = error instanceof Error ? error.message : String(error);
    throw new TurnError('PROVIDER_ERROR', `provider call failed: ${message}`);
  }
}

async function attempt(
  deps: TurnDeps,
  ctx: InvocationContext,
  messages: ChatMessage[],
  turn: number,
): Promise<TurnResult> {
  let text = '';
  let reasoning = '';
  let finishReason = 'stop';
  const usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const calls = new Map<number, { id: string; name: string; args: string }>();
  const started = ctx.hostEnv.now();
  let meta: TurnMeta | undefined;
  let firstToken: number | undefined;
  const onEvent = (event: LlmStreamEvent): void => {
    if (
      firstToken === undefined &&
      (event.type === 'text_delta' || event.type === 'reasoning_delta' || event.type === 'tool_call_start')
    )
      firstToken = ctx.hostEnv.now() - started;
    switch (event.type) {
      case 'request':
        ctx.emit(
          'model_input_bound',
          modelInputBound(turn, deps.llm.modelId, messages.length, event.bodyBytes, event.bodyDigest),
        );
        break;
      case 'response':
        meta = { request_url: event.requestUrl, duration_ms: 0 };
        if (event.responseId) meta.response_id = event.responseId;
        if (event.responseModel) meta.response_model = event.responseModel;
        if (event.responseObject) meta.response_object = event.responseObject;
        break;
      case 'text_delta':
        text += event.text;
        ctx.emit('text_delta', { text: event.text });
        break;
      case 'reasoning_delta':
        reasoning += event.text;
        ctx.emit('reasoning_delta', { text: event.text });
        break;
      case 'tool_call_start': {
        const id = event.id || ctx.hostEnv.newId('call');
        calls.set(event.index, { id, name: event.name, args: '' });
        ctx.emit('tool_start', { id, name: event.name });
        break;
      }
      case 'tool_call_delta': {
        const call = calls.get(event.index);
        if (call) {
          call.args += event.argumentsDelta;
          ctx.emit('tool_input_delta', { id: call.id, delta: event.argumentsDelta });
        }
        break;
      }
      case 'usage':
        usage.promptTokens += event.promptTokens;
        usage.completionTokens += event.completionTokens;
        usage.totalTokens += event.totalTokens;
        break;
      case 'finish':
        finishReason = event.finishReason;
        break;
    }
  };
  const tools = deps.toolSpecs();
  ctx.emit('model_presentation_bound', modelPresentationBound(turn, tools));
  try {
    await deps.llm.stream(messages, tools, ctx, onEvent, { turn });
  } catch (error) {
    // Calls announced with tool_start will never run: close them so subscribers do not wait forever.
    for (const call of calls.values()) {
      ctx.emit('tool_end', {
        id: call.id,
        name: call.name,
        output: 'Not run: the provider response ended before the call was complete.',
        exit_code: 1,
        duration_ms: 0,
        truncated: false,
      });
    }
    throw error;
  }
  ctx.emit('model_usage_bound', modelUsageBound(turn, usage, messages));
  const toolCalls: ToolCall[] = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, c]) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
  if (meta) {
    meta.duration_ms = ctx.hostEnv.now() - started;
    if (firstToken !== undefined) meta.first_token_ms = firstToken;
  }
  return { text, reasoning, toolCalls, usage, finishReason, ...(meta ? { meta } : {}) };
}
