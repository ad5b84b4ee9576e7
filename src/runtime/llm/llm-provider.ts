import type { ChatMessage } from '../../protocol/chat-message.js';

/** A tool as presented to the model: name, description and JSON schema of its parameters. */
export interface LlmToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** One provider request: bare model name (no provider prefix), transcript and tools. */
export interface LlmRequest {
  model: string;
  messages: ChatMessage[];
  tools: readonly LlmToolSpec[];
  signal: AbortSignal;
  maxTokens?: number;
  temperature?: number;
  /** Structured output: the JSON schema the answer must follow (sent as OpenAI's `response_format` json_schema). */
  responseFormat?: LlmResponseFormat;
  /**
   * The content of user messages with attachments, as OpenAI content parts (built from the attachment store
   * for this one call, so the bytes live only as long as the request); other messages send their text.
   */
  contentParts?: ReadonlyMap<ChatMessage, readonly LlmContentPart[]>;
}

/** One OpenAI-compatible content part of a user message: text, or an image as a data URL. */
export type LlmContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** A JSON schema a structured-output request asks the answer to follow. */
export interface LlmResponseFormat {
  name: string;
  schema: Record<string, unknown>;
  description?: string;
}

/** Normalised streaming events from any OpenAI-compatible provider. */
export type LlmStreamEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; argumentsDelta: string }
  | { type: 'usage'; promptTokens: number; completionTokens: number; totalTokens: number }
  | { type: 'finish'; finishReason: string }
  /** The request as sent, before its response (each retry sends one): body size and `sha256:<hex>` digest. */
  | { type: 'request'; bodyBytes: number; bodyDigest: string }
  /** What the response said about itself (from its first chunk), and where the request went. */
  | { type: 'response'; requestUrl: string; responseId?: string; responseModel?: string; responseObject?: string };

/** Takes a provider stream's events in order, as each chunk arrives; what it throws ends the stream and rejects `stream` unchanged. */
export type LlmEventSink = (event: LlmStreamEvent) => void;

/** A chat-completions provider. Errors are thrown as LlmProviderError; aborts reject promptly. */
export interface LlmProvider {
  /** Streams one completion into `onEvent`; settles once the stream has ended (finish, when present, is the last event). */
  stream(request: LlmRequest, onEvent: LlmEventSink): Promise<void>;
  /** Releases the provider's connections (called once, when the server shuts down). */
  close?(): Promise<void>;
  /**
   * How often the LLM invoker retries a retryable failure of this provider (`providers.<name>.max_retries`);
   * the provider itself never retries. Absent: 0.
   */
  readonly maxRetries?: number;
}

/** A provider failure with a retryable flag and the wait the provider asked for (used by the LLM invoker's retries). */
export class LlmProviderError extends Error {
  readonly status: number | undefined;
  readonly retryable: boolean;
  /** The provider's Retry-After, in ms from when the answer came, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, status: number | undefined, retryable: boolean, retryAfterMs?: number) {
    super(message);
    this.name = 'LlmProviderError';
    this.status = status;
    this.retryable = retryable;
    this.retryAfterMs = retryAfterMs;
  }
}
