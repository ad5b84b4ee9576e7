import { z } from 'zod';

/** Every hook event: the seed's 26 (SEED-REFERENCE §8, in its order, snake_case wire names), then our cluster events. */
export const HOOK_EVENTS = [
  'pre_tool_use',
  'post_tool_use',
  'permission_request',
  'pre_compact',
  'post_compact',
  'generate_start',
  'generate_end',
  'session_start',
  'session_end',
  'skill_load',
  'skill_unload',
  'pre_prompt',
  'post_response',
  'on_error',
  'pre_context_perception',
  'post_context_perception',
  'on_success',
  'pre_memory_recall',
  'post_memory_recall',
  'pre_planning',
  'post_planning',
  'pre_reasoning',
  'post_reasoning',
  'on_rate_limit',
  'on_confirmation',
  'intent_detection',
  // Cluster events a host injects (POST /v1/sessions/:id/cluster-events); observing.
  'budget_threshold_hit',
  'passivation_requested',
  'peer_invocation',
] as const;

/** A hook event name. */
export const HookEventSchema = z.enum(HOOK_EVENTS);

/** A hook event name. */
export type HookEvent = z.infer<typeof HookEventSchema>;

/** Events whose hooks gate the operation: their answer can block, skip, retry or modify it. */
export const GATING_HOOK_EVENTS = [
  'pre_tool_use',
  'permission_request',
  'pre_prompt',
  'pre_compact',
  'pre_planning',
] as const satisfies readonly HookEvent[];

/** A gating hook event. */
export type GatingHookEvent = (typeof GATING_HOOK_EVENTS)[number];

/** An observing hook event: its hooks are told, never asked; they cannot block. */
export type ObservingHookEvent = Exclude<HookEvent, GatingHookEvent>;

/** True when the event's hooks gate the operation. */
export function isGatingHookEvent(event: string): event is GatingHookEvent {
  return (GATING_HOOK_EVENTS as readonly string[]).includes(event);
}

/** True when the event is a known event whose hooks only observe. */
export function isObservingHookEvent(event: string): event is ObservingHookEvent {
  return (HOOK_EVENTS as readonly string[]).includes(event) && !isGatingHookEvent(event);
}

const pattern = z.string().min(1).max(1000);

/**
 * Which calls a hook sees; every field set must match (AND); no matcher matches everything.
 * - `tool`: tool name, case-insensitive, exact or a glob where `*` matches any run of characters (`mcp__github__*`).
 * - `pathPattern`: glob against `args.file_path`, else `args.path` (`*` within a segment, `**` across `/`);
 *   a path inside the workspace is also tried relative to it, and `./` is ignored.
 * - `commandPattern`: glob against `args.command`, where `*` matches any run of characters, `/` included.
 * - `sessionId`: only this session (useful for config-declared hooks).
 * - `skill`: glob (`*` any run of characters, case-insensitive) against the skill the event is about: the skill of
 *   skill_load/skill_unload, and the `skill` argument of a `Skill` tool call.
 * A matcher naming a tool, path, command or skill never matches events without one (session_start, ...).
 */
export const HookMatcherSchema = z
  .object({
    tool: z.string().min(1).max(200).optional(),
    pathPattern: pattern.optional(),
    commandPattern: pattern.optional(),
    sessionId: z.string().min(1).max(128).optional(),
    skill: z.string().min(1).max(200).optional(),
  })
  .strict()
  .meta({ id: 'HookMatcher' });

/** A parsed hook matcher. */
export type HookMatcher = z.infer<typeof HookMatcherSchema>;

/** Most headers a webhook endpoint may declare. */
export const MAX_WEBHOOK_HEADERS = 32;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/;
// Headers the HTTP client owns: declaring them would corrupt the request.
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
]);

/** True when a string is an absolute http(s) URL without embedded credentials. */
export function isWebhookUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
}

/** A webhook URL: absolute http or https, no `user:password@` (send credentials in headers). */
export const WebhookUrlSchema = z
  .string()
  .max(2048)
  .refine(
    isWebhookUrl,
    'url must be an absolute http:// or https:// URL without user:password (put credentials in headers)',
  );

/** Extra request headers of a webhook (for example Authorization); values are never echoed back. */
export const WebhookHeadersSchema = z
  .record(
    z
      .string()
      .regex(HEADER_NAME, 'header names must be HTTP tokens')
      .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'this header is set by the server'),
    z
      .string()
      .max(8192)
      .regex(/^[^\r\n\0]*$/, 'header values must not contain CR, LF or NUL'),
  )
  .refine((headers) => Object.keys(headers).length <= MAX_WEBHOOK_HEADERS, `at most ${MAX_WEBHOOK_HEADERS} headers`);

/**
 * A webhook endpoint: the server POSTs the request as JSON to `url` and reads the JSON answer. These are
 * server-side requests to a URL the host configured: loopback, private and link-local addresses only for
 * host_direct callers or with config outbound.allow_private_networks (runtime/outbound checks every call).
 */
export const WebhookHookEndpointSchema = z
  .object({ type: z.literal('webhook'), url: WebhookUrlSchema, headers: WebhookHeadersSchema.optional() })
  .strict();

/**
 * A WebSocket endpoint: requests go to one connected events WebSocket as `hook_request` frames and are
 * answered with `hook_response` messages. Over REST, `connectionId` is required: it is the
 * `connection_id` of the `host_registered` control frame that socket received in answer to its
 * `{"type": "host_register"}` message. A registration arriving on the
 * socket itself may omit it (the socket's own id is used).
 */
export const WebSocketHookEndpointSchema = z
  .object({ type: z.literal('websocket'), connectionId: z.string().min(1).max(200).optional() })
  .strict();

/** Where a hook's requests go. */
export const HookEndpointSchema = z.discriminatedUnion('type', [
  WebhookHookEndpointSchema,
  WebSocketHookEndpointSchema,
]);

/** Default order of a hook (lower runs first). */
export const DEFAULT_HOOK_PRIORITY = 100;
/** Default time a hook has to answer (the seed's 30 s). */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
/** Longest timeout a hook may ask for. */
export const MAX_HOOK_TIMEOUT_MS = 60_000;
/** Most times a failed hook request (unreachable, timed out, invalid answer) may be repeated (`maxRetries`). */
export const MAX_HOOK_FAILURE_RETRIES = 5;

const registrationShape = {
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'id must be 1-128 characters of letters, digits, "_", "." or "-"')
    .optional(),
  event: HookEventSchema,
  matcher: HookMatcherSchema.optional(),
  priority: z.number().int().min(-1_000_000).max(1_000_000).default(DEFAULT_HOOK_PRIORITY),
  timeoutMs: z.number().int().positive().max(MAX_HOOK_TIMEOUT_MS).default(DEFAULT_HOOK_TIMEOUT_MS),
  /**
   * The seed's fire-and-forget: an observing hook that is not waited for by the hooks after it (they are told at
   * once, in parallel). Without it an event's observing hooks are told one after another in priority order, and an
   * answer other than `continue` stops the later ones. Ignored for gating events, which always wait.
   */
  asyncExecution: z.boolean().default(false),
  /** How often a failed request (unreachable, timed out, invalid answer) is repeated before it counts as failed. */
  maxRetries: z.number().int().min(0).max(MAX_HOOK_FAILURE_RETRIES).default(0),
};

/** Body of POST /v1/sessions/:id/hooks: one hook of this session. */
export const HookRegistrationSchema = z
  .object({ ...registrationShape, endpoint: HookEndpointSchema })
  .strict()
  .meta({ id: 'HookRegistration' });

/** A hook declared in CodeConfig: applies to every session; only webhooks (no connection outlives a session). */
export const ConfigHookRegistrationSchema = z
  .object({ ...registrationShape, endpoint: WebhookHookEndpointSchema })
  .strict()
  .meta({ id: 'ConfigHookRegistration' });

/** A config-declared (webhook) hook registration. */
export type ConfigHookRegistration = z.infer<typeof ConfigHookRegistrationSchema>;

/** A hook registration as sent (defaults not yet applied). */
export type HookRegistrationInput = z.input<typeof HookRegistrationSchema>;
/** A parsed hook registration. */
export type HookRegistration = z.infer<typeof HookRegistrationSchema>;

/**
 * A host's answer to a hook request. `continue` lets the operation go on (with `modified`, if any: the
 * replacement `args` for pre_tool_use and permission_request, fields merged into the payload for
 * pre_prompt); `block` refuses it; `skip` and `retry` stop later hooks and are the caller's to interpret.
 * Unknown fields are ignored.
 */
export const HookResponseSchema = z
  .object({
    action: z.enum(['continue', 'block', 'skip', 'retry']),
    reason: z.string().max(10_000).optional(),
    modified: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'HookResponse' });

/** A parsed hook answer. */
export type HookResponse = z.infer<typeof HookResponseSchema>;
/** What a hook may answer. */
export type HookAction = HookResponse['action'];

/** A registered hook as GET returns it; webhook header values are never returned, only their names. */
export const HookInfoSchema = z
  .object({
    id: z.string(),
    event: HookEventSchema,
    matcher: HookMatcherSchema.nullable(),
    priority: z.number().int(),
    timeoutMs: z.number().int(),
    asyncExecution: z.boolean(),
    maxRetries: z.number().int(),
    source: z.enum(['session', 'config']),
    createdAtMs: z.number().int(),
    endpoint: z.discriminatedUnion('type', [
      z.object({ type: z.literal('webhook'), url: z.string(), headerNames: z.array(z.string()) }),
      z.object({ type: z.literal('websocket'), connectionId: z.string(), connected: z.boolean() }),
    ]),
  })
  .meta({ id: 'HookInfo' });

/** A registered hook as GET returns it. */
export type HookInfo = z.infer<typeof HookInfoSchema>;

/** Answer of POST /v1/sessions/:id/hooks. */
export const HookCreatedResponseSchema = z.object({ hook: HookInfoSchema });
/** Answer of GET /v1/sessions/:id/hooks: session hooks and config hooks, in the order they run. */
export const HookListResponseSchema = z.object({ hooks: z.array(HookInfoSchema) });
/** Answer of DELETE /v1/sessions/:id/hooks/:hookId. */
export const HookRemovedResponseSchema = z.object({ removed: z.literal(true), hookId: z.string() });
/** Session + hook id path parameters. */
export const HookParamsSchema = z
  .object({ id: z.string().min(1).max(128), hookId: z.string().min(1).max(128) })
  .strict();

/** Frame the server sends to ask a WebSocket host a question: `hook_request` (hooks and `budget_check`) or `command_request` (slash commands). */
export const HookRequestFrameSchema = z
  .object({
    type: z.enum(['hook_request', 'command_request']),
    request_id: z.string(),
    kind: z.string(),
    payload: z.record(z.string(), z.unknown()),
  })
  .strict();

/** A request frame sent to a WebSocket host. */
export type HookRequestFrame = z.infer<typeof HookRequestFrameSchema>;

/** Client message answering a `hook_request`: the answer's fields sit beside `type` and `request_id`. */
export const HookResponseMessageSchema = z.looseObject({
  type: z.literal('hook_response'),
  request_id: z.string().min(1).max(200),
});

/** Payload of the `host_registered` control frame: the id to name this socket as a WebSocket hook endpoint. */
export const ConnectedPayloadSchema = z.object({ connection_id: z.string() }).strict();
