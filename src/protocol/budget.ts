import { z } from 'zod';

/** Share of a limit at which the guard starts answering `soft` (a warning) instead of `allow`. */
export const DEFAULT_SOFT_RATIO = 0.8;

/**
 * Budget limits (SessionOptions.budget; per tenant in CodeConfig). Unset limits are unlimited.
 * - `maxTokens`: provider tokens (prompt + completion) over the session's (or tenant's) life.
 * - `maxToolCalls`: tool calls admitted by the guard.
 * - `maxWallTimeMs`: cumulative time runs were active (idle time between runs does not count).
 * - `softRatio`: share of a limit from which decisions are `soft` (default 0.8).
 */
export const BudgetOptionsSchema = z
  .object({
    maxTokens: z.number().int().positive().optional(),
    maxToolCalls: z.number().int().positive().optional(),
    maxWallTimeMs: z.number().int().positive().optional(),
    softRatio: z.number().gt(0).max(1).default(DEFAULT_SOFT_RATIO),
  })
  .strict()
  .meta({ id: 'BudgetOptions' });

/** Budget limits as sent (softRatio may be absent). */
export type BudgetOptionsInput = z.input<typeof BudgetOptionsSchema>;
/** Parsed budget limits. */
export type BudgetOptions = z.infer<typeof BudgetOptionsSchema>;

/** A resource the server's own guards budget (the seed's names: `llm_tokens`, `tool_calls`, `wall_time`). */
export const BudgetResourceSchema = z.enum(['llm_tokens', 'tool_calls', 'wall_time']);

/** A resource the server's own guards budget. */
export type BudgetResource = z.infer<typeof BudgetResourceSchema>;

/** What a session has used so far, as sent to a budget host. */
export const BudgetUsedSchema = z
  .object({ tokens: z.number().int(), tool_calls: z.number().int(), wall_time_ms: z.number().int() })
  .strict();

/**
 * Payload of a `budget_check` host request (webhook body: also `kind: "budget_check"` and `request_id`).
 * `phase: "llm"` comes before a provider call (with `estimated_tokens`), `"tool"` before a tool call (with `tool`).
 */
export const BudgetCheckPayloadSchema = z
  .object({
    session_id: z.string(),
    tenant_id: z.string(),
    phase: z.enum(['llm', 'tool']),
    tool: z.string().optional(),
    estimated_tokens: z.number().int().nonnegative().optional(),
    used: BudgetUsedSchema,
  })
  .strict()
  .meta({ id: 'BudgetCheckPayload' });

/** A `budget_check` payload. */
export type BudgetCheckPayload = z.infer<typeof BudgetCheckPayloadSchema>;

/**
 * A budget host's answer, in either of two shapes. The seed's bridge shape: `null` or `{decision: "allow"}`,
 * `{decision: "soft", resource, consumed, limit, message?}`, `{decision: "deny", resource, reason}`. The
 * server's earlier shape: `{decision, resource?, reason?, limit?}`. `resource` is any string (`llm_tokens`,
 * `tool_calls`, `wall_time`, `usd_cost` or the host's own; `tokens` is read as `llm_tokens`) and defaults
 * to llm_tokens (llm phase) or tool_calls (tool phase). Unknown fields are ignored; anything else denies.
 */
export const BudgetHostAnswerSchema = z
  .object({
    decision: z.enum(['allow', 'soft', 'deny']),
    resource: z.string().min(1).max(200).optional(),
    reason: z.string().max(10_000).optional(),
    message: z.string().max(10_000).optional(),
    consumed: z.number().nonnegative().optional(),
    limit: z.number().nonnegative().optional(),
  })
  .nullable()
  .meta({ id: 'BudgetHostAnswer' });

/** A parsed budget host answer. */
export type BudgetHostAnswer = z.infer<typeof BudgetHostAnswerSchema>;

/** An external budget host asked before every provider and tool call (`kind: "budget_check"`); failures deny. */
export const BudgetHostSchema = z
  .object({
    url: z
      .string()
      .url('url must be an http(s) URL')
      .refine((u) => /^https?:\/\//.test(u), 'url must be http or https'),
    headers: z.record(z.string(), z.string().max(4096)).optional(),
    timeoutMs: z.number().int().positive().max(60_000).default(5000),
  })
  .strict()
  .meta({ id: 'BudgetHost' });

/** A budget host configuration. */
export type BudgetHost = z.infer<typeof BudgetHostSchema>;

/** Body of PUT /v1/sessions/:id/budget-host: a webhook, or a WebSocket host registered on the events socket. */
export const BudgetHostEndpointSchema = z
  .discriminatedUnion('type', [
    z
      .object({
        type: z.literal('webhook'),
        url: z
          .string()
          .url('url must be an http(s) URL')
          .refine((u) => /^https?:\/\//.test(u), 'url must be http or https'),
        headers: z.record(z.string(), z.string().max(4096)).optional(),
        timeoutMs: z.number().int().positive().max(60_000).default(5000),
      })
      .strict(),
    z
      .object({
        type: z.literal('websocket'),
        connectionId: z.string().min(1).max(200),
        timeoutMs: z.number().int().positive().max(60_000).default(5000),
      })
      .strict(),
  ])
  .meta({ id: 'BudgetHostEndpoint' });

/** Answer of PUT and DELETE /v1/sessions/:id/budget-host: the kind of budget host now set, null when none. */
export const BudgetHostSetResponseSchema = z
  .object({ budgetHost: z.enum(['webhook', 'websocket']).nullable() })
  .meta({ id: 'BudgetHostSetResponse' });

/** A budget host endpoint set over REST. */
export type BudgetHostEndpoint = z.infer<typeof BudgetHostEndpointSchema>;
