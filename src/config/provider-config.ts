import { z } from 'zod';

/** A model's token limits (seed: `limit = { context = N, output = M }`). */
export const ModelLimitSchema = z
  .object({
    context: z.number().int().nonnegative().optional(),
    input: z.number().int().nonnegative().optional(),
    output: z.number().int().nonnegative().optional(),
  })
  .loose();

/**
 * Per-model settings under a provider, keyed by the model id the provider is called with (the block label;
 * `name` is a display name only). The seed's keys are modelled; any other key is kept as metadata.
 */
export const ModelConfigSchema = z
  .object({
    name: z.string().optional(),
    family: z.string().optional(),
    /** Whether the model supports tool calls (seed default true). */
    toolCall: z.boolean().optional(),
    /** `true`/`false`: whether the model accepts a temperature; a number: the temperature sent by default. */
    temperature: z.union([z.boolean(), z.number().min(0).max(2)]).optional(),
    reasoning: z.boolean().optional(),
    attachment: z.boolean().optional(),
    releaseDate: z.string().optional(),
    limit: ModelLimitSchema.optional(),
    /** Prices (`input`, `output`, `cache_read`, `cache_write`, ...), kept as written. */
    cost: z.record(z.string(), z.unknown()).optional(),
    modalities: z
      .object({ input: z.array(z.string()).optional(), output: z.array(z.string()).optional() })
      .loose()
      .optional(),
    /** The seed's per-model credentials, endpoint and headers: accepted, not used yet (the provider's settings apply). */
    apiKey: z.string().optional(),
    baseUrl: z.string().url('baseUrl must be a URL').optional(),
    headers: z.record(z.string(), z.string()).optional(),
    sessionIdHeader: z.string().optional(),
    /** Flat token limits: ours (`context_window`, `max_tokens`) and the seed's deprecated `contextTokens`. */
    contextWindow: z.number().int().positive().optional(),
    contextTokens: z.number().int().positive().optional(),
    maxTokens: z.number().int().positive().optional(),
  })
  .loose();

/** One model's settings. */
export type ModelConfig = z.infer<typeof ModelConfigSchema>;

const CHAT_PATH = /^\/[^\s?#]*$/;

/** One OpenAI-compatible provider. */
export const ProviderConfigSchema = z
  .object({
    apiKey: z.string().optional(),
    /** The provider's root (seed meaning): the chat path is appended, `/v1` once (see chatCompletionsUrl). */
    baseUrl: z.string().url('baseUrl must be a URL').optional(),
    /** Replaces the default chat path `/v1/chat/completions` after `baseUrl`. */
    chatCompletionsPath: z
      .string()
      .regex(CHAT_PATH, 'chatCompletionsPath must be a URL path starting with "/"')
      .optional(),
    /** The full chat-completions URL; wins over baseUrl + chatCompletionsPath (OPENAI_BASE_URL sets it). */
    chatCompletionsUrl: z.string().url('chatCompletionsUrl must be a URL').optional(),
    /** Extra HTTP headers sent with every provider request. */
    headers: z.record(z.string(), z.string()).optional(),
    /** Seed: a header carrying the session id; accepted, not used yet. */
    sessionIdHeader: z.string().optional(),
    timeoutMs: z.number().int().positive().default(600_000),
    maxRetries: z.number().int().nonnegative().max(10).default(2),
    models: z.record(z.string(), ModelConfigSchema).default({}),
  })
  .strict();

/** A provider's configuration. */
export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;
