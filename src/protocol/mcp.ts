import { z } from 'zod';

/** Default per-request timeout of an MCP server (initialize, tools/list, tools/call), in ms. */
export const MCP_DEFAULT_TIMEOUT_MS = 30_000;
/** Upper bound of an MCP server's configurable timeout, in ms. */
export const MCP_MAX_TIMEOUT_MS = 600_000;

const HeadersSchema = z
  .record(
    z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}$/, 'header names must be HTTP tokens'),
    z.string().max(8192),
  )
  .refine((headers) => Object.keys(headers).length <= 64, 'at most 64 headers');

const HttpUrlSchema = z.url({ protocol: /^https?$/, error: 'url must be an http:// or https:// URL' }).max(4096);

/** The name of an MCP server: it becomes the middle part of `mcp__<server>__<tool>`. */
export const McpServerNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'name must be 1-64 characters of letters, digits, "_" or "-"')
  .refine(
    (name) => !name.includes('__'),
    'name must not contain "__" (it separates the parts of mcp__<server>__<tool>)',
  );

/** A stdio server: a command started on the host as the leader of its own process group. */
export const McpStdioTransportSchema = z
  .object({
    type: z.literal('stdio'),
    command: z.string().min(1, 'command must not be empty').max(4096),
    args: z.array(z.string().max(32_768)).max(256).optional(),
    cwd: z.string().min(1).max(4096).optional(),
  })
  .strict();

/** A Streamable HTTP server (`http` is an alias of `streamable-http`). */
export const McpHttpTransportSchema = z
  .object({
    type: z.enum(['http', 'streamable-http']),
    url: HttpUrlSchema,
    headers: HeadersSchema.optional(),
  })
  .strict();

/** A legacy HTTP+SSE server, as far as the SDK still offers it. */
export const McpSseTransportSchema = z
  .object({
    type: z.literal('sse'),
    url: HttpUrlSchema,
    headers: HeadersSchema.optional(),
  })
  .strict();

/** How to reach an MCP server, discriminated by `type`. */
export const McpTransportSchema = z.discriminatedUnion('type', [
  McpStdioTransportSchema,
  McpHttpTransportSchema,
  McpSseTransportSchema,
]);

/** The transport kinds an MCP server can use. */
export const McpTransportTypeSchema = z.enum(['stdio', 'http', 'streamable-http', 'sse']);

/** One MCP server's configuration: the body of POST /v1/sessions/:id/mcp and an entry of the global config. */
export const McpServerConfigSchema = z
  .object({
    name: McpServerNameSchema,
    transport: McpTransportSchema,
    env: z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/, 'env names must be letters, digits and "_"'),
        z.string().max(32_768),
      )
      .refine((env) => Object.keys(env).length <= 256, 'at most 256 env entries')
      .optional(),
    timeoutMs: z.number().int().positive().max(MCP_MAX_TIMEOUT_MS).default(MCP_DEFAULT_TIMEOUT_MS),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.env !== undefined && config.transport.type !== 'stdio') {
      ctx.addIssue({ code: 'custom', path: ['env'], message: 'env applies to stdio servers only' });
    }
  })
  .meta({ id: 'McpServerConfig' });

/** Where a server comes from: the agent's config, a host-supplied manager, or the session itself. */
export const McpServerSourceSchema = z.enum(['global', 'inherited', 'session']);

/** The state of one MCP server as listed by GET /v1/sessions/:id/mcp. */
export const McpServerStatusSchema = z
  .object({
    name: z.string(),
    transport: McpTransportTypeSchema,
    connected: z.boolean(),
    toolCount: z.number().int().nonnegative(),
    /** The last connection or transport failure; null when the last connect succeeded. */
    error: z.string().nullable(),
    source: McpServerSourceSchema,
    /** Time of the last connect or answered call (ms since the epoch); null before the first. */
    lastActivityMs: z.number().nullable(),
  })
  .meta({ id: 'McpServerStatus' });

/** Answer of POST /v1/sessions/:id/mcp. */
export const McpAddServerResponseSchema = z
  .object({ name: z.string(), toolCount: z.number().int().nonnegative() })
  .meta({ id: 'McpAddServerResponse' });
/** Answer of GET /v1/sessions/:id/mcp (and of the admin refresh). */
export const McpServerListResponseSchema = z
  .object({ servers: z.array(McpServerStatusSchema) })
  .meta({ id: 'McpServerListResponse' });
/** Answer of DELETE /v1/sessions/:id/mcp/:name. */
export const McpRemoveServerResponseSchema = z.object({ removed: z.boolean() });
/** Session id + server name path parameters. */
export const McpServerParamsSchema = z.object({ id: z.string().min(1).max(128), name: McpServerNameSchema }).strict();
/** Body of POST /v1/admin/mcp/disconnect-idle. */
export const McpDisconnectIdleRequestSchema = z
  .object({
    thresholdMs: z
      .number()
      .int()
      .nonnegative()
      .max(86_400_000 * 7),
  })
  .strict()
  .meta({ id: 'McpDisconnectIdleRequest' });
/** Answer of POST /v1/admin/mcp/disconnect-idle: the servers that were disconnected. */
export const McpDisconnectIdleResponseSchema = z.object({ disconnected: z.array(z.string()) });

/** A validated MCP server configuration (timeoutMs filled in). */
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;
/** An MCP server configuration as accepted on the wire (timeoutMs optional). */
export type McpServerConfigInput = z.input<typeof McpServerConfigSchema>;
/** A validated transport. */
export type McpTransportConfig = z.infer<typeof McpTransportSchema>;
/** A stdio transport. */
export type McpStdioTransportConfig = z.infer<typeof McpStdioTransportSchema>;
/** The state of one MCP server. */
export type McpServerStatus = z.infer<typeof McpServerStatusSchema>;
/** The source of an MCP server. */
export type McpServerSource = z.infer<typeof McpServerSourceSchema>;
