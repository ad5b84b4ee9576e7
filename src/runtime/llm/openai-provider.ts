import { APIConnectionError, APIError, APIUserAbortError, OpenAI } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage } from '../../protocol/chat-message.js';
import { LlmProviderError } from './llm-provider.js';
import type { LlmProvider, LlmRequest, LlmStreamEvent, LlmToolSpec } from './llm-provider.js';
import { createUndiciFetch, type UndiciFetch } from './undici-fetch.js';

/** Connection settings for an OpenAI-compatible chat-completions endpoint. */
export interface OpenAiProviderOptions {
  apiKey?: string;
  /** The openai SDK's baseURL (it includes `/v1`; `/chat/completions` is appended). */
  baseUrl?: string;
  /** The full chat-completions URL; wins over baseUrl (see chatCompletionsUrl for the seed's base_url). */
  chatUrl?: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  timeoutMs?: number;
  maxRetries?: number;
}

/** A tool call being streamed: id and name may arrive before or with the first argument chunk. */
interface PendingToolCall {
  id: string | undefined;
  name: string | undefined;
  started: boolean;
  bufferedArguments: string;
}

type ChunkDelta = ChatCompletionChunk.Choice.Delta;

/**
 * LlmProvider over the openai SDK, for any OpenAI-compatible endpoint, on its own undici connection pool.
 * The SDK sends a body this class encodes (the `body` request option), so cached tool JSON is reused.
 */
export class OpenAiProvider implements LlmProvider {
  private readonly client: OpenAI;
  private readonly transport: UndiciFetch;
  private readonly chatUrl: string | undefined;

  constructor(options: OpenAiProviderOptions = {}) {
    this.transport = createUndiciFetch();
    this.chatUrl = options.chatUrl;
    this.client = new OpenAI({
      apiKey: options.apiKey ?? 'unused',
      baseURL: options.baseUrl,
      ...(options.headers !== undefined ? { defaultHeaders: options.headers } : {}),
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
      fetch: this.transport.fetch,
    });
  }

  /** Closes the provider's keep-alive connections. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /** Streams one completion as normalised events; finish (when present) is the last event. */
  async *stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    const { signal } = request;
    throwIfAborted(signal);
    // Tools are not in `params`: encodeBody splices their cached JSON into the body the SDK sends.
    const params: ChatCompletionCreateParamsStreaming = {
      model: request.model,
      messages: request.messages.map(toMessageParam),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.maxTokens !== undefined) params.max_tokens = request.maxTokens;
    if (request.temperature !== undefined) params.temperature = request.temperature;
    if (request.responseFormat) {
      const { name, schema, description } = request.responseFormat;
      params.response_format = { type: 'json_schema', json_schema: { name, schema, ...(description ? { description } : {}) } };
    }

    const toolCalls = new Map<number, PendingToolCall>();
    let usage: LlmStreamEvent | undefined;
    let finishReason: string | undefined;
    try {
      // An absolute `path` replaces the SDK's `<baseURL>/chat/completions`.
      const target = this.chatUrl !== undefined ? { path: this.chatUrl } : {};
      const chunks = await this.client.chat.completions.create(params, { signal, body: encodeBody(params, request.tools), headers: { 'content-type': 'application/json' }, ...target });
      let described = false;
      for await (const chunk of chunks) {
        throwIfAborted(signal);
        if (!described) {
          described = true;
          yield { type: 'response', requestUrl: this.chatUrl ?? `${this.client.baseURL.replace(/\/+$/, '')}/chat/completions`, responseId: chunk.id, responseModel: chunk.model, responseObject: chunk.object };
        }
        if (chunk.usage) {
          usage = {
            type: 'usage',
            promptTokens: chunk.usage.prompt_tokens,
            completionTokens: chunk.usage.completion_tokens,
            totalTokens: chunk.usage.total_tokens,
          };
        }
        // A chunk's events come as a plain array: a `yield*` of a sync generator inside this async generator
        // costs an extra await per event (about half a microsecond each, on every streamed chunk).
        for (const choice of chunk.choices) {
          for (const event of deltaEvents(choice.delta, toolCalls)) yield event;
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
      }
      // The SDK ends the iteration silently when the signal aborts mid-stream.
      throwIfAborted(signal);
    } catch (error) {
      throw toProviderError(error, signal);
    }
    yield* flushToolCalls(toolCalls);
    if (usage) yield usage;
    if (finishReason === undefined) {
      throw new LlmProviderError('provider stream ended without a finish_reason', undefined, true);
    }
    yield { type: 'finish', finishReason };
  }
}

const NO_EVENTS: readonly LlmStreamEvent[] = [];

/** Text, reasoning and tool-call events carried by one chunk delta. */
function deltaEvents(delta: ChunkDelta | undefined, toolCalls: Map<number, PendingToolCall>): readonly LlmStreamEvent[] {
  if (!delta) return NO_EVENTS;
  const reasoning = reasoningText(delta);
  // The common chunk: text and nothing else.
  if (!reasoning && delta.tool_calls === undefined) return delta.content ? [{ type: 'text_delta', text: delta.content }] : NO_EVENTS;
  const events: LlmStreamEvent[] = [];
  if (reasoning) events.push({ type: 'reasoning_delta', text: reasoning });
  if (delta.content) events.push({ type: 'text_delta', text: delta.content });
  for (const call of delta.tool_calls ?? []) {
    let pending = toolCalls.get(call.index);
    if (!pending) {
      pending = { id: undefined, name: undefined, started: false, bufferedArguments: '' };
      toolCalls.set(call.index, pending);
    }
    // Some providers repeat id and name on every chunk; the first value wins.
    if (call.id && pending.id === undefined) pending.id = call.id;
    if (call.function?.name && pending.name === undefined) pending.name = call.function.name;
    const argumentsDelta = call.function?.arguments ?? '';
    if (!pending.started && pending.id !== undefined && pending.name !== undefined) {
      pending.started = true;
      events.push({ type: 'tool_call_start', index: call.index, id: pending.id, name: pending.name });
      if (pending.bufferedArguments) {
        events.push({ type: 'tool_call_delta', index: call.index, argumentsDelta: pending.bufferedArguments });
        pending.bufferedArguments = '';
      }
    }
    if (!argumentsDelta) continue;
    if (pending.started) events.push({ type: 'tool_call_delta', index: call.index, argumentsDelta });
    else pending.bufferedArguments += argumentsDelta;
  }
  return events;
}

/** Reasoning text from the non-standard fields providers use (`reasoning_content` or `reasoning`). */
function reasoningText(delta: ChunkDelta): string | undefined {
  if ('reasoning_content' in delta && typeof delta.reasoning_content === 'string' && delta.reasoning_content) {
    return delta.reasoning_content;
  }
  if ('reasoning' in delta && typeof delta.reasoning === 'string' && delta.reasoning) return delta.reasoning;
  return undefined;
}

/** Starts tool calls whose id never arrived (some providers omit it) with a synthetic id. */
function* flushToolCalls(toolCalls: Map<number, PendingToolCall>): Generator<LlmStreamEvent> {
  for (const [index, pending] of toolCalls) {
    if (pending.started) continue;
    if (pending.name === undefined) {
      throw new LlmProviderError(`provider streamed tool call ${index} without a function name`, undefined, false);
    }
    yield { type: 'tool_call_start', index, id: pending.id ?? `call_${index}`, name: pending.name };
    if (pending.bufferedArguments) {
      yield { type: 'tool_call_delta', index, argumentsDelta: pending.bufferedArguments };
    }
  }
}

/** Maps a transcript message to the SDK's message param; our `reasoning` field is not sent. */
function toMessageParam(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content ?? '' };
    case 'user':
      return { role: 'user', content: message.content ?? '' };
    case 'assistant': {
      if (!message.tool_calls || message.tool_calls.length === 0) {
        return { role: 'assistant', content: message.content ?? '' };
      }
      return {
        role: 'assistant',
        content: message.content,
        tool_calls: message.tool_calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: call.function.arguments },
        })),
      };
    }
    case 'tool':
      if (message.tool_call_id === undefined) {
        throw new LlmProviderError('tool message without tool_call_id', undefined, false);
      }
      return { role: 'tool', content: message.content ?? '', tool_call_id: message.tool_call_id };
  }
}

/** Maps a tool spec to the SDK's function tool param. */
function toToolParam(tool: LlmToolSpec): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

const toolParamJson = new WeakMap<LlmToolSpec, string>();
const toolListJson = new WeakMap<readonly LlmToolSpec[], string>();

/** The JSON of one tool list, joined once per list: sessions with the same tools share one list (SessionTools). */
function toolsJson(tools: readonly LlmToolSpec[]): string {
  let joined = toolListJson.get(tools);
  if (joined === undefined) {
    joined = tools
      .map((tool) => {
        let json = toolParamJson.get(tool);
        if (json === undefined) {
          json = JSON.stringify(toToolParam(tool));
          toolParamJson.set(tool, json);
        }
        return json;
      })
      .join(',');
    toolListJson.set(tools, joined);
  }
  return joined;
}

/**
 * The JSON request body: `params` plus the tools. Tool specs and the lists of them are immutable objects
 * shared by sessions (and most of a request's bytes), so they are serialised once, not on every provider call.
 */
function encodeBody(params: ChatCompletionCreateParamsStreaming, tools: readonly LlmToolSpec[]): string {
  const head = JSON.stringify(params);
  if (tools.length === 0) return head;
  // JSON.stringify of an object always ends with its closing brace.
  return `${head.slice(0, -1)},"tools":[${toolsJson(tools)}]}`;
}

/** Throws an AbortError when the request's signal has fired. */
function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

/** An Error named 'AbortError' carrying the signal's reason as its cause. */
function abortError(signal: AbortSignal): Error {
  const error = new Error('The LLM request was aborted', { cause: signal.reason });
  error.name = 'AbortError';
  return error;
}

/** Normalises anything thrown while calling the provider into AbortError or LlmProviderError. */
function toProviderError(error: unknown, signal: AbortSignal): Error {
  if (error instanceof LlmProviderError) return error;
  if (signal.aborted || error instanceof APIUserAbortError) return abortError(signal);
  if (error instanceof Error && error.name === 'AbortError') return error;
  if (error instanceof APIConnectionError) return new LlmProviderError(error.message, undefined, true);
  if (error instanceof APIError) {
    const status = error.status;
    const retryable = status !== undefined && (status === 429 || status >= 500);
    return new LlmProviderError(error.message, status, retryable);
  }
  // A malformed chunk will not get better on retry; a dropped socket mid-stream may.
  if (error instanceof SyntaxError) return new LlmProviderError(`malformed provider stream: ${error.message}`, undefined, false);
  const message = error instanceof Error ? error.message : String(error);
  return new LlmProviderError(`provider stream failed: ${message}`, undefined, true);
}
