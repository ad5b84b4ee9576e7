import { z } from 'zod';
import { CommandResponseMessageSchema } from './commands.js';
import { HookResponseMessageSchema } from './hooks.js';
import { CompleteExternalTaskBodySchema } from './queue.js';
import { MAX_QUESTION_CHARS } from './questions.js';
import { InterruptBodySchema, SteerBodySchema } from './run-control.js';

/**
 * A registered host's answer to an `external_task_pending` event (the WebSocket form of
 * POST .../queue/external-tasks/:taskId): `{type, task_id, success, result?, error?}`.
 */
export const ExternalTaskCompleteMessageSchema = z
  .object({
    type: z.literal('external_task_complete'),
    task_id: z.string().min(1).max(200),
    ...CompleteExternalTaskBodySchema.shape,
  })
  .strict();

/** Messages a WebSocket client may send. */
export const WsClientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auth'), token: z.string().min(1) }).strict(),
  z.object({ type: z.literal('ping') }).strict(),
  z
    .object({
      type: z.literal('confirm'),
      toolId: z.string().min(1),
      approved: z.boolean(),
      reason: z.string().max(2000).optional(),
      argsDigest: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
      always: z.boolean().optional(),
    })
    .strict(),
  z.object({ type: z.literal('cancel'), runId: z.string().min(1) }).strict(),
  // Run control of the session's active run, like POST .../runs/:runId/steer and .../interrupt.
  z.object({ type: z.literal('steer'), runId: z.string().min(1).max(128), ...SteerBodySchema.shape }).strict(),
  z.object({ type: z.literal('interrupt'), runId: z.string().min(1).max(128), ...InterruptBodySchema.shape }).strict(),
  // Answers a question of the agent (ask_user), like POST .../questions/:questionId: free text or an option.
  z
    .object({
      type: z.literal('answer'),
      questionId: z.string().min(1).max(200),
      answer: z.string().min(1).max(MAX_QUESTION_CHARS).optional(),
      option: z.string().min(1).max(MAX_QUESTION_CHARS).optional(),
      declined: z.literal(true).optional(),
    })
    .strict(),
  // Become a hook/budget host: the answer `host_registered` carries the connection id to name in a
  // websocket hook endpoint; `hook_response` messages answer the server's `hook_request` frames.
  z.object({ type: z.literal('host_register') }).strict(),
  HookResponseMessageSchema,
  // Answers a `command_request` frame (a websocket slash command): `{type, request_id, text}`.
  CommandResponseMessageSchema,
  // Settles an external task of the session's lane queue (needs host_register first).
  ExternalTaskCompleteMessageSchema,
]);

/** A client WebSocket message. */
export type WsClientMessage = z.infer<typeof WsClientMessageSchema>;

/** Query of the WebSocket subscription. */
export const WsQuerySchema = z
  .object({
    after: z.coerce.number().int().min(0).optional(),
    /** The tenant whose session `:id` names (default the caller's; another tenant's needs the admin scope). */
    tenantId: z.string().min(1).max(200).optional(),
  })
  .strict();

const controlFrame = <T extends string, P extends z.ZodType>(type: T, payload: P) =>
  z.object({ version: z.literal(1), type: z.literal(type), payload, metadata: z.object({}).strict() }).strict();

/**
 * Control frames the server sends besides EventEnvelopeV1 events: same envelope shape, empty metadata
 * (no session_sequence, so they never move a client's cursor).
 * - `replay_gap`: events with `requested_after < session_sequence < first_available` were dropped by
 *   retention; sent before the first event after the hole (the first frame when the cursor is too old).
 * - `pong`: answer to `{"type": "ping"}`.
 * - `error`: a client message was refused; `field` names the offending field when there is one.
 * - `cancel_result`: answer to `{"type": "cancel"}`.
 * - `confirm_result`: answer to `{"type": "confirm"}` (the confirmation was settled).
 * - `answer_result`: answer to `{"type": "answer"}` (the question was settled with that answer).
 * - `run_control_result`: answer to `{"type": "steer"}` and `{"type": "interrupt"}`: the request's receipt.
 * - `host_registered`: answer to `{"type": "host_register"}`, with the connection id for websocket hooks.
 * - `external_task_complete_result`: answer to `{"type": "external_task_complete"}` (the task was settled);
 *   a refused answer is an `error` frame (EXTERNAL_TASK_NOT_FOUND, EXTERNAL_TASK_SETTLED with `details`).
 * External tasks need no frame of their own: a registered host reads the `external_task_pending` events of
 * the socket's event stream (in order, replayed after a reconnect with `?after=`).
 * (`hook_request` frames, `{type, request_id, kind, payload}`, are sent by the host bridge itself.)
 */
export const WsControlFrameSchema = z.discriminatedUnion('type', [
  controlFrame(
    'replay_gap',
    z
      .object({ requested_after: z.number().int().nonnegative(), first_available: z.number().int().positive() })
      .strict(),
  ),
  controlFrame('pong', z.object({}).strict()),
  controlFrame(
    'error',
    z
      .object({
        code: z.string(),
        message: z.string(),
        field: z.string().optional(),
        details: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
  ),
  controlFrame('cancel_result', z.object({ run_id: z.string(), cancelled: z.boolean() }).strict()),
  controlFrame('confirm_result', z.object({ tool_id: z.string(), approved: z.boolean() }).strict()),
  controlFrame(
    'run_control_result',
    z
      .object({
        request_id: z.string(),
        operation: z.enum(['steer', 'interrupt']),
        status: z.enum(['accepted', 'applied', 'settled', 'rejected']),
        reason: z.string().optional(),
        turn_id: z.string().optional(),
        turn_revision: z.number().int().optional(),
      })
      .strict(),
  ),
  controlFrame('answer_result', z.object({ question_id: z.string(), answered: z.literal(true) }).strict()),
  controlFrame('host_registered', z.object({ connection_id: z.string() }).strict()),
  controlFrame('external_task_complete_result', z.object({ task_id: z.string(), completed: z.literal(true) }).strict()),
]);

/** A server control frame. */
export type WsControlFrame = z.infer<typeof WsControlFrameSchema>;

/** What the server composes for a control frame: its type and payload (version and metadata are fixed). */
export type WsControl = { [F in WsControlFrame as F['type']]: Omit<F, 'version' | 'metadata'> }[WsControlFrame['type']];

/**
 * Close codes the server uses. The server also pings subscribers (payload: an opaque token) to learn
 * how far they have read; a client must answer pings with pongs (RFC 6455; browsers and `ws` do).
 */
export const WS_CLOSE = {
  normal: 1000,
  /** Server shutdown. */
  goingAway: 1001,
  /** Invalid path parameters or query. */
  policy: 1008,
  /** Missing, invalid or late authentication (no auth message within 5 s). */
  unauthorized: 4001,
  /** The token lacks the `sessions` scope. */
  forbidden: 4003,
  /** No such session for this tenant (another tenant's session included). */
  notFound: 4004,
  /** The subscriber fell behind its bounded buffer; reconnect with `?after=<last session_sequence>`. */
  slowConsumer: 4008,
  /** The session was closed (after the `session_closed` event). */
  sessionClosed: 4010,
} as const;
