import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { APIConnectionError, APIError, APIUserAbortError, OpenAI } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage } from '../../protocol/chat-message.js';
import { LlmProviderError } from './llm-provider.js';
import type { LlmEventSink, LlmProvider, LlmRequest, LlmStreamEvent, LlmToolSpec } from './llm-provider.js';
import { createUndiciFetch, type UndiciFetch } from './undici-fetch.js';
import { retryAfterMs } from './retry-after.js';
import { sha256Digest } from '../evidence/evidence-binding.js';

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
  /** Retries of a retryable failure, made by the LLM invoker (the SDK makes none); default 2. */
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
  readonly maxRetries: number;

  constructor(options: OpenAiProviderOptions = {}) {
    this.transport = createUndiciFetch();
    this.chatUrl = options.chatUrl;
    this.maxRetries = options.maxRetries ?? 2;
    this.client = new OpenAI({
      apiKey: options.apiKey ?? 'unused',
      baseURL: options.baseUrl,
      ...(options.headers !== undefined ? { defaultHeaders: options.headers } : {}),
      timeout: options.timeoutMs,
      // One retry layer: the LLM invoker's (it emits provider_retry and honours Retry-After); none hidden here.
      maxRetries: 0,
      fetch: this.transport.fetch,
    });
  }

  /** Closes the provider's keep-alive connections. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /**
   * Streams one completion into `onEvent` as normalised events; finish (when present) is the last event.
   * The SDK sends the request (auth, headers, timeout, error statuses; no retries); the event stream of its
   * response is parsed here, each SSE message handed on as it is parsed, with no async iterator per
   * message (the SDK's own stream stacks three async generators on every chunk).
   */
  async stream(request: LlmRequest, onEvent: LlmEventSink): Promise<void> {
    const { signal } = request;
    throwIfAborted(signal);
    // Tools are not in `params`: encodeBody splices their cached JSON into the body the SDK sends.
    const params: ChatCompletionCreateParamsStreaming = {
      model: request.model,
      messages: request.messages.map((message) => {
        const parts = request.contentParts?.get(message);
        return parts !== undefined && message.role === 'user'
          ? { role: 'user', content: parts.map((part) => ({ ...part })) }
          : toMessageParam(message);
      }),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.maxTokens !== undefined) params.max_tokens = request.maxTokens;
    if (request.temperature !== undefined) params.temperature = request.temperature;
    if (request.responseFormat) {
      const { name, schema, description } = request.responseFormat;
      params.response_format = {
        type: 'json_schema',
        json_schema: { name, schema, ...(description ? { description } : {}) },
      };
    }
    const body = encodeBody(params, request.tools);
    onEvent({ type: 'request', bodyBytes: body.length, bodyDigest: sha256Digest(body) });
    const reader = new ChunkReader(
      this.chatUrl ?? `${this.client.baseURL.replace(/\/+$/, '')}/chat/completions`,
      onEvent,
    );
    try {
      // An absolute `path` replaces the SDK's `<baseURL>/chat/completions`.
      const target = this.chatUrl !== undefined ? { path: this.chatUrl } : {};
      const response = await this.client.chat.completions
        .create(params, {
          signal,
          body,
          headers: { 'content-type': 'application/json' },
          ...target,
        })
        .asResponse();
      await reader.read(response, signal);
    } catch (error) {
      // What the consumer threw from `onEvent` reaches it unchanged.
      throw reader.consumerError(error) ?? toProviderError(error, signal);
    }
    reader.finish();
  }
}

/**
 * Reads one streamed chat-completions response: decodes the server-sent events of its body, parses each
 * `data:` message as a chunk, and hands the chunk's normalised events to the consumer as they come.
 */
class ChunkReader {
  private readonly toolCalls = new Map<number, PendingToolCall>();
  private usage: LlmStreamEvent | undefined;
  private finishReason: string | undefined;
  private described = false;
  private done = false;
  private headers: Headers | undefined;
  // What the consumer threw, set only while the error travels up (a thrown value may be anything).
  private thrown: { error: unknown } | undefined;

  constructor(
    private readonly requestUrl: string,
    private readonly onEvent: LlmEventSink,
  ) {}

  /** Feeds the response body through an SSE parser until it ends, the stream says [DONE], or the signal fires. */
  async read(response: Response, signal: AbortSignal): Promise<void> {
    this.headers = response.headers;
    const body = response.body as AsyncIterable<Uint8Array> | null;
    if (body === null) throw new LlmProviderError('provider answered without a body', response.status, false);
    const parser = createParser({ onEvent: (message) => this.message(message) });
    const decoder = new StringDecoder('utf8');
    // Read to the end even after [DONE] (as the SDK does), so the connection goes back to the pool.
    // A message the body ends in the middle of is dropped, as the SDK drops it.
    for await (const bytes of body) {
      throwIfAborted(signal);
      parser.feed(decoder.write(bytes));
    }
    // A body cut short by an abort may end quietly.
    throwIfAborted(signal);
  }

  /** What the consumer threw, when `error` is that; undefined for the provider's own failures. */
  consumerError(error: unknown): unknown {
    return this.thrown !== undefined && this.thrown.error === error ? error : undefined;
  }

  /** After the body ended: tool calls that never got an id, the usage, then finish. */
  finish(): void {
    for (const [index, pending] of this.toolCalls) {
      if (pending.started) continue;
      if (pending.name === undefined) {
        throw new LlmProviderError(`provider streamed tool call ${index} without a function name`, undefined, false);
      }
      this.deliver({ type: 'tool_call_start', index, id: pending.id ?? `call_${index}`, name: pending.name });
      if (pending.bufferedArguments)
        this.deliver({ type: 'tool_call_delta', index, argumentsDelta: pending.bufferedArguments });
    }
    if (this.usage) this.deliver(this.usage);
    if (this.finishReason === undefined) {
      throw new LlmProviderError('provider stream ended without a finish_reason', undefined, true);
    }
    this.deliver({ type: 'finish', finishReason: this.finishReason });
  }

  private message(message: EventSourceMessage): void {
    if (this.done) return;
    if (message.data.startsWith('[DONE]')) {
      this.done = true;
      return;
    }
    // A malformed chunk throws SyntaxError (not retryable); an error object in the stream is an APIError, as the SDK has it.
    const data = JSON.parse(message.data) as ChatCompletionChunk & { error?: unknown };
    if (data?.error)
      throw new APIError(undefined, data.error as Record<string, unknown>, undefined, this.headers ?? new Headers());
    this.chunk(data);
  }

  private chunk(chunk: ChatCompletionChunk): void {
    if (!this.described) {
      this.described = true;
      this.deliver({
        type: 'response',
        requestUrl: this.requestUrl,
        responseId: chunk.id,
        responseModel: chunk.model,
        responseObject: chunk.object,
      });
    }
    if (chunk.usage) {
      this.usage = {
        type: 'usage',
        promptTokens: chunk.usage.prompt_tokens,
        completionTokens: chunk.usage.completion_tokens,
        totalTokens: chunk.usage.total_tokens,
      };
    }
    // A chunk's events come as a plain array: no generator per chunk.
    for (const choice of chunk.choices) {
      for (const event of deltaEvents(choice.delta, this.toolCalls)) this.deliver(event);
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
  }

  private deliver(event: LlmStreamEvent): void {
    try {
      this.onEvent(event);
    } catch (error) {
      this.thrown = { error };
      throw error;
    }
  }
}

const NO_EVENTS: readonly LlmStreamEvent[] = [];

/** Text, reasoning and tool-call events carried by one chunk delta. */
function deltaEvents(
  delta: ChunkDelta | undefined,
  toolCalls: Map<number, PendingToolCall>,
): readonly LlmStreamEvent[] {
  if (!delta) return NO_EVENTS;
  const reasoning = reasoningText(delta);
  // The common chunk: text and nothing else.
  if (!reasoning && delta.tool_calls === undefined)
    return delta.content ? [{ type: 'text_delta', text: delta.content }] : NO_EVENTS;
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
const toolListTail = new WeakMap<readonly LlmToolSpec[], Buffer>();

/**
 * The UTF-8 bytes that end a body with this tool list, `,"tools":[...]}`, encoded once per list: sessions
 * with the same tools share one list (SessionTools), and each tool's JSON is serialised once per process.
 */
function toolsTail(tools: readonly LlmToolSpec[]): Buffer {
  let tail = toolListTail.get(tools);
  if (tail === undefined) {
    const joined = tools
      .map((tool) => {
        let json = toolParamJson.get(tool);
        if (json === undefined) {
          json = JSON.stringify(toToolParam(tool));
          toolParamJson.set(tool, json);
        }
        return json;
      })
      .join(',');
    tail = Buffer.from(`,"tools":[${joined}]}`);
    toolListTail.set(tools, tail);
  }
  return tail;
}

/**
 * The JSON request body as bytes: `params` plus the tools. Tool specs and the lists of them are immutable
 * objects shared by sessions (and most of a request's bytes), so their bytes are encoded once and copied
 * in; no string of the whole body is built (or flattened to be encoded) on each provider call.
 */
function encodeBody(params: ChatCompletionCreateParamsStreaming, tools: readonly LlmToolSpec[]): Buffer {
  const head = JSON.stringify(params);
  if (tools.length === 0) return Buffer.from(head);
  const tail = toolsTail(tools);
  // JSON.stringify of an object always ends with its closing brace (one byte), which the tail replaces.
  const headBytes = Buffer.byteLength(head) - 1;
  const body = Buffer.allocUnsafe(headBytes + tail.length);
  body.write(head, 0, headBytes, 'utf8');
  tail.copy(body, headBytes);
  return body;
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
    // The provider's `x-should-retry` overrides the status, as the SDK had it.
    const should = error.headers?.get('x-should-retry');
    const retryable =
      should === 'true' || (should !== 'false' && status !== undefined && (status === 429 || status >= 500));
    return new LlmProviderError(
      error.message,
      status,
      retryable,
      retryable ? retryAfterMs(error.headers, Date.now()) : undefined,
    );
  }
  // A malformed chunk will not get better on retry; a dropped socket mid-stream may.
  if (error instanceof SyntaxError)
    return new LlmProviderError(`malformed provider stream: ${error.message}`, undefined, false);
  const message = error instanceof Error ? error.message : String(error);
  return new LlmProviderError(`provider stream failed: ${message}`, undefined, true);
}
