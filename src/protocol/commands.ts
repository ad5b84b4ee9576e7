import { z } from 'zod';
import { WebhookHeadersSchema, WebhookUrlSchema } from './hooks.js';

/** What a slash command name looks like: a letter, then up to 63 letters, digits, `_` or `-`. */
export const COMMAND_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Names of the built-in commands; a registration of one of these names needs `override: true`. */
export const BUILTIN_COMMAND_NAMES = ['help', 'compact', 'model', 'cost', 'clear'] as const;

/** Largest template of a template command, in UTF-8 bytes (64 KiB). */
export const MAX_COMMAND_TEMPLATE_BYTES = 64 * 1024;

/** Time a webhook or WebSocket command has to answer unless it says otherwise. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 10_000;

/** Longest timeout a command may ask for. */
export const MAX_COMMAND_TIMEOUT_MS = 300_000;

/** Largest text a command may answer with, in characters. */
export const MAX_COMMAND_TEXT_CHARS = 1_000_000;

/** How a command produces its text: a template rendered here, a webhook, or a connected WebSocket host. */
export const CommandKindSchema = z.enum(['template', 'webhook', 'websocket']).meta({ id: 'CommandKind' });

/** A command kind. */
export type CommandKind = z.infer<typeof CommandKindSchema>;

const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * A slash command registration (body of POST /v1/sessions/:id/commands, and each entry of config `commands`).
 * `template` commands need `template`; `webhook` commands need `url` (and may send `headers`); `websocket`
 * commands go to `connectionId` (the `connection_id` of a `host_registered` frame) or, without one, to a
 * host connection registered on one of the session's events sockets.
 */
export const CommandRegistrationSchema = z
  .object({
    name: z.string().regex(COMMAND_NAME, 'name must be a letter followed by up to 63 letters, digits, "_" or "-"'),
    description: z.string().max(2000).default(''),
    kind: CommandKindSchema,
    template: z
      .string()
      .refine(
        (t) => utf8Bytes(t) <= MAX_COMMAND_TEMPLATE_BYTES,
        `template must be at most ${MAX_COMMAND_TEMPLATE_BYTES} bytes (64 KiB)`,
      )
      .optional(),
    url: WebhookUrlSchema.optional(),
    headers: WebhookHeadersSchema.optional(),
    connectionId: z.string().min(1).max(200).optional(),
    timeoutMs: z.number().int().positive().max(MAX_COMMAND_TIMEOUT_MS).optional(),
    /** Replace a built-in command of the same name (refused without it). */
    override: z.boolean().optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    if ((BUILTIN_COMMAND_NAMES as readonly string[]).includes(value.name) && value.override !== true) {
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message: `"${value.name}" is a built-in command; set override: true to replace it`,
      });
    }
    if (value.kind === 'template' && value.template === undefined)
      ctx.addIssue({ code: 'custom', path: ['template'], message: 'required for a template command' });
    if (value.kind === 'webhook' && value.url === undefined)
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'required for a webhook command' });
    if (value.kind !== 'template' && value.template !== undefined)
      ctx.addIssue({ code: 'custom', path: ['template'], message: 'only a template command has a template' });
    if (value.kind !== 'webhook' && (value.url !== undefined || value.headers !== undefined))
      ctx.addIssue({
        code: 'custom',
        path: [value.url !== undefined ? 'url' : 'headers'],
        message: 'only a webhook command has a url and headers',
      });
    if (value.kind !== 'websocket' && value.connectionId !== undefined)
      ctx.addIssue({ code: 'custom', path: ['connectionId'], message: 'only a websocket command has a connectionId' });
  })
  .meta({ id: 'CommandRegistration' });

/** A parsed command registration. */
export type CommandRegistration = z.infer<typeof CommandRegistrationSchema>;

/** One command as GET /v1/sessions/:id/commands lists it (headers are never echoed). */
export const CommandInfoSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    /** `builtin` for /help, /compact, /model, /cost and /clear. */
    kind: z.enum(['builtin', 'template', 'webhook', 'websocket']),
    /** `builtin`, `config` (config `commands`) or `session` (POST .../commands). */
    source: z.enum(['builtin', 'config', 'session']),
    timeoutMs: z.number().int().nullable(),
    /** The command replaces a built-in of the same name. */
    overridesBuiltin: z.boolean(),
  })
  .meta({ id: 'CommandInfo' });

/** A command in wire form. */
export type CommandInfo = z.infer<typeof CommandInfoSchema>;

/** Answer of GET /v1/sessions/:id/commands and of DELETE on one: built-ins first, then config, then session commands. */
export const CommandListResponseSchema = z
  .object({ commands: z.array(CommandInfoSchema) })
  .meta({ id: 'CommandListResponse' });

/** Answer of POST /v1/sessions/:id/commands: the command registered and every command of the session. */
export const CommandCreatedResponseSchema = z
  .object({ command: CommandInfoSchema, commands: z.array(CommandInfoSchema) })
  .meta({ id: 'CommandCreatedResponse' });

/** Path parameters of DELETE /v1/sessions/:id/commands/:name. */
export const CommandParamsSchema = z
  .object({ id: z.string().min(1).max(128), name: z.string().min(1).max(200) })
  .strict();

/** What a command sees (template variables; the JSON a webhook gets; a WebSocket host's `payload`). */
export const CommandContextSchema = z
  .object({
    command: z.string(),
    args: z.string(),
    sessionId: z.string(),
    workspace: z.string(),
    model: z.string(),
    historyLen: z.number().int(),
    totalTokens: z.number().int(),
    /** Estimated USD of the conversation's usage at the model block's `cost {input, output}` per million tokens (0 without one). */
    totalCost: z.number().nonnegative(),
    toolNames: z.array(z.string()),
    mcpServers: z.array(z.string()),
  })
  .meta({ id: 'CommandContext' });

/** A command's context. */
export type CommandContext = z.infer<typeof CommandContextSchema>;

/** What a webhook or WebSocket host answers a command with. */
export const CommandAnswerSchema = z.looseObject({ text: z.string().max(MAX_COMMAND_TEXT_CHARS) });

/** Client message answering a `command_request`: `{type: "command_response", request_id, text}`. */
export const CommandResponseMessageSchema = z.looseObject({
  type: z.literal('command_response'),
  request_id: z.string().min(1).max(200),
});
