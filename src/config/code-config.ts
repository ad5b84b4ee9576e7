import { WebhooksConfigSchema } from './webhook-config.js';
import { isIP } from 'node:net';
import { z } from 'zod';
import { TenantQuotaSchema } from './tenant-quota.js';
import { ClusterConfigSchema } from './cluster-config.js';
import { RedisConfigSchema } from './redis-config.js';
import { SESSION_OVERHEAD_BYTES, sessionBytesLimit } from './session-bytes-limit.js';
import { BudgetHostSchema, BudgetOptionsSchema } from '../protocol/budget.js';
import { ConfirmationPolicySchema, PermissionPolicySchema } from '../protocol/governance.js';
import { CommandRegistrationSchema } from '../protocol/commands.js';
import { ConfigHookRegistrationSchema } from '../protocol/hooks.js';
import { McpServerConfigSchema, McpServerNameSchema } from '../protocol/mcp.js';
import { SeedConfigFields } from './seed-config-keys.js';
import { ApiTokenSchema, SAFE_TENANT_ID, SAFE_TENANT_ID_RULE } from './api-token.js';
import { LimitsSchema } from './limits-config.js';
import { LoopDefaultsSchema } from './loop-config.js';
import { ProviderConfigSchema } from './provider-config.js';
import { SandboxConfigSchema } from './sandbox-config.js';

// allowed_hosts / allowed_origins entries: `name[:port]` or `[v6][:port]`, and `http(s)://` before that.
const HOST_ENTRY = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?::[0-9]{1,5})?$/;
const ORIGIN_ENTRY = /^https?:\/\/(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?::[0-9]{1,5})?$/;

// trust_proxy entries: an IPv4/IPv6 address, a CIDR, or one of the proxy-addr names Fastify knows.
function isTrustProxyEntry(entry: string): boolean {
  if (entry === 'loopback' || entry === 'linklocal' || entry === 'uniquelocal') return true;
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

/** CodeConfig: the server configuration after loading (ACL/HCL, JSON or env) and normalising to camelCase. */
export const CodeConfigSchema = z
  .object({
    defaultModel: z
      .string()
      .regex(/^[^/\s]+\/\S+$/, 'defaultModel must be "provider/model"')
      .default('openai/gpt-4o'),
    providers: z.record(z.string(), ProviderConfigSchema).default({}),
    /** `file` (snapshots under sessionsDir) or `memory` (nothing persisted); REDIS_URL overrides both. */
    storageBackend: z
      .enum(['file', 'memory'], {
        error: 'storage_backend must be "file" or "memory" (for an external store set redis_url or REDIS_URL)',
      })
      .default('file'),
    dataDir: z.string().default('./.a3s'),
    sessionsDir: z.string().optional(),
    /**
     * Where the shadow git stores of change capture live (docs/changes.md); default `<dataDir>/changes`, node-local.
     * In a cluster, a directory on storage every node mounts at the same path lets another node revert, diff a range
     * and copy a fork after a takeover. Never inside (nor holding) a workspace root: startup refuses that.
     */
    changesDir: z.string().min(1).optional(),
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    workspaceRoots: z.array(z.string().min(1)).min(1).optional(),
    /**
     * Workspace roots every tenant may use, as before per-tenant spaces (unsafe between mutually untrusting
     * tenants: each reads and writes the others' files there). Listed roots are workspace roots too.
     */
    sharedWorkspaceRoots: z.array(z.string().min(1)).max(64).default([]),
    apiTokens: z.array(ApiTokenSchema).default([]),
    loop: LoopDefaultsSchema.default(LoopDefaultsSchema.parse({})),
    limits: LimitsSchema.default(LimitsSchema.parse({})),
    /** Policy for sessions that give none; the built-in default allows read-only tools and asks for the rest. */
    defaultPermissionPolicy: PermissionPolicySchema.optional(),
    defaultConfirmationPolicy: ConfirmationPolicySchema.optional(),
    /**
     * The confirmation policy of sessions an editor creates with ACP `session/new` (the editor answers each ask
     * with `session/request_permission`). Absent: `defaultConfirmationPolicy` (or the built-in one) with
     * `enabled: true`. `enabled: false` makes asks denials again. `timeout_action` is `reject` only: an editor
     * is there to answer, and auto-approving would let calls run without anyone.
     */
    acpConfirmationPolicy: ConfirmationPolicySchema.extend({
      enabled: z.boolean().default(true),
      timeoutAction: z
        .literal('reject', { error: 'acp_confirmation_policy.timeout_action must be "reject" (an editor answers)' })
        .default('reject'),
    })
      .strict()
      .optional(),
    /** Slash commands every session has (the shape of POST /v1/sessions/:id/commands); their webhooks may name private addresses. */
    commands: z
      .array(CommandRegistrationSchema)
      .max(256)
      .refine((list) => new Set(list.map((c) => c.name)).size === list.length, 'command names must be unique')
      .default([]),
    /** Webhook hooks every session has (gating ones fail closed). */
    hooks: z.array(ConfigHookRegistrationSchema).max(64).default([]),
    /** Run webhooks: per-tenant signing secrets and the delivery schedule (docs/webhooks.md). */
    webhooks: WebhooksConfigSchema.prefault({}),
    /** Budget every session gets unless SessionOptions.budget is set. */
    defaultBudget: BudgetOptionsSchema.optional(),
    /** A webhook every session's budget guard also asks (fail closed). */
    budgetHost: BudgetHostSchema.optional(),
    /**
     * Outbound URLs tenants name (hook and budget-host webhooks): `allowPrivateNetworks` lets every caller name
     * loopback, private and link-local addresses (default false: only host_direct callers may).
     */
    outbound: z
      .object({ allowPrivateNetworks: z.boolean().default(false) })
      .strict()
      .default({ allowPrivateNetworks: false }),
    /**
     * The web tools (web_fetch, web_search). `allowPrivateNetworks` lets them reach loopback, private,
     * link-local and other non-global addresses (default false; the URLs are model-chosen, so neither
     * host_direct nor outbound.allow_private_networks opens them). `search`: the backends web_search asks
     * (a SearXNG URL, Brave and Tavily API keys), the engines used when a call names none, and the default
     * timeout in seconds (1..60, default 20). Without a backend web_search answers a tool error naming these keys.
     */
    web: z
      .object({
        allowPrivateNetworks: z.boolean().default(false),
        search: z
          .object({
            searxngUrl: z
              .string()
              .regex(/^https?:\/\/[^\s]+$/, 'web.search.searxng_url must be an http:// or https:// URL')
              .optional(),
            braveApiKey: z.string().min(1, 'web.search.brave_api_key must not be empty').optional(),
            tavilyApiKey: z.string().min(1, 'web.search.tavily_api_key must not be empty').optional(),
            defaultEngines: z.array(z.string().min(1).max(64)).max(32).optional(),
            timeoutSecs: z.number().int().min(1).max(60, 'web.search.timeout_secs is at most 60').default(20),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** How model-chosen commands are contained (bubblewrap, cgroups, limits per command): see SandboxConfigSchema. */
    sandbox: SandboxConfigSchema,
    /** Budgets shared by all sessions of a tenant, keyed by tenant id. */
    tenantBudgets: z.record(z.string(), BudgetOptionsSchema).default({}),
    /** Per-tenant quotas (open sessions, concurrent runs, runs per minute, stored bytes), keyed by tenant id. */
    tenantQuotas: z.record(z.string(), TenantQuotaSchema).default({}),
    /** The quota of every tenant without its own entry (each key defaults to DEFAULT_TENANT_QUOTA). */
    defaultTenantQuota: TenantQuotaSchema.default({}),
    /**
     * Retention of closed sessions: `closed_session_days` (off unless set) deletes a closed session's snapshot
     * and checkpoints that many days after it was closed (a sweep at start and hourly; Redis keys get the same TTL).
     */
    retention: z
      .object({ closedSessionDays: z.number().positive().max(36_500).optional() })
      .strict()
      .default({}),
    /** Agent-global MCP servers (JSON `mcp_servers` list). */
    mcpServers: z.array(McpServerConfigSchema).max(64).default([]),
    /** Agent-global MCP servers as ACL blocks `mcp "name" { transport = {...} ... }`, keyed by name. */
    mcp: z.record(McpServerNameSchema, z.record(z.string(), z.unknown())).default({}),
    /** Disconnect MCP servers idle longer than thresholdMs, checking every intervalMs (off when absent). */
    mcpIdleDisconnect: z
      .object({ thresholdMs: z.number().int().positive(), intervalMs: z.number().int().positive() })
      .strict()
      .optional(),
    /** With a Redis URL, snapshots, checkpoints, ownership leases and the cross-node event stream live in Redis. */
    redisUrl: z
      .string()
      .regex(/^rediss?:\/\//, 'redisUrl must be a redis:// or rediss:// URL')
      .optional(),
    redisKeyPrefix: z.string().min(1).max(64).default('a3s:'),
    /** Redis Cluster seeds (`cluster`, or REDIS_CLUSTER_NODES) and replica acknowledgement of fenced writes. */
    redis: RedisConfigSchema,
    /** Cluster timing: a session lease (renewed every third of it) and a node heartbeat expire after these. */
    cluster: ClusterConfigSchema,
    /** Passivate sessions idle (no run, no request) longer than this, so memory stays bounded (off when absent). */
    sessionIdleTimeoutMs: z.number().int().min(1000).optional(),
    /** This node's id in a cluster (default: a random id at start). */
    nodeId: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'nodeId must be 1-64 letters, digits, "_", "." or "-"')
      .optional(),
    /** The URL other nodes and clients reach this node at (default: http://<host>:<port>). */
    advertiseUrl: z.string().url('advertiseUrl must be a URL').optional(),
    /** Extra names a request's Host may carry beside localhost, 127.0.0.1, [::1], the bind host and advertiseUrl's host (`name`: any port, `name:port`). */
    allowedHosts: z
      .array(
        z
          .string()
          .regex(
            HOST_ENTRY,
            'allowed_hosts entries must be a host name or address, optionally ":port" (IPv6 in brackets), without scheme or path',
          ),
      )
      .max(256)
      .default([]),
    /** Browser origins allowed to call the server beside its own (`http(s)://host[:port]`; `null` is never allowed). */
    allowedOrigins: z
      .array(
        z
          .string()
          .regex(
            ORIGIN_ENTRY,
            'allowed_origins entries must be origins like "https://console.example.com" or "http://localhost:3000" (no path, no "null")',
          ),
      )
      .max(256)
      .default([]),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * What the log holds beyond its level. `requests`: Fastify's two lines per HTTP request (incoming request,
     * request completed). Default false, so `info` is quiet; `log_level = "debug"` (or trace) logs them too.
     */
    log: z
      .object({ requests: z.boolean().default(false) })
      .strict()
      .default({ requests: false }),
    /**
     * Traces (exported when OTEL_* variables ask for them). `captureContent`: spans also carry prompts, the messages
     * sent to providers, model output and tool arguments and output, each through the secret redactor. Default
     * false: no span carries anything a user or the model wrote.
     */
    telemetry: z
      .object({ captureContent: z.boolean().default(false) })
      .strict()
      .default({ captureContent: false }),
    /**
     * Proxies whose X-Forwarded-For is believed (Fastify's trustProxy): `true` every peer, or addresses, CIDRs
     * and `loopback` / `linklocal` / `uniquelocal`. The client address then comes from X-Forwarded-For, for
     * limits.maxConnectionsPerAddress and request logs. Default false: the TCP peer is the client.
     */
    trustProxy: z
      .union([
        z.boolean(),
        z
          .array(
            z
              .string()
              .refine(
                isTrustProxyEntry,
                'trust_proxy entries must be IP addresses, CIDRs ("10.0.0.0/8") or loopback, linklocal, uniquelocal',
              ),
          )
          .max(256),
      ])
      .default(false),
    // Accepted for compatibility with the seed's config files; the issues that use them are not built yet.
    skillDirs: z.array(z.string()).default([]),
    /**
     * Delegation: how deep children may nest (a task inside a task ...), and how a child of the model's task
     * answers a call its policy asks about: `inherit_parent` (default) asks on the parent session's
     * confirmations route, `deny_on_ask` denies it, `auto_approve` approves it (the operator's choice only).
     */
    delegation: z
      .object({
        maxDepth: z.number().int().min(0).max(16).default(3),
        confirmationInheritance: z.enum(['inherit_parent', 'deny_on_ask', 'auto_approve']).default('inherit_parent'),
        /** Finished child sessions a parent keeps live (newest first) for their transcript and events; the rest are closed, their task snapshots kept. */
        keepFinishedChildren: z.number().int().min(0).max(1000).default(8),
      })
      .strict()
      .prefault({}),
    agentDirs: z.array(z.string()).default([]),
    queue: z.record(z.string(), z.unknown()).optional(),
    ...SeedConfigFields,
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.redisUrl !== undefined && config.redis.cluster !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['redis', 'cluster'],
        message:
          'set either redis_url (REDIS_URL, one Redis) or redis.cluster (REDIS_CLUSTER_NODES, a Redis Cluster), not both',
      });
    }
    // Nodes sign the requests they forward to each other (A3S-Forwarded) and the SSE tickets any node accepts.
    if (
      (config.redisUrl !== undefined || config.redis.cluster !== undefined) &&
      config.cluster.secret === undefined &&
      config.cluster.secretFile === undefined
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['cluster', 'secret'],
        message:
          'required with Redis: set cluster.secret (A3S_CLUSTER_SECRET) or cluster.secret_file (A3S_CLUSTER_SECRET_FILE), the same on every node, at least 32 characters',
      });
    }
    // One session of the largest options must fit a tenant's session bytes, or the tenant could open none.
    const sessionBytes = sessionBytesLimit(config);
    if (sessionBytes !== undefined && sessionBytes < config.limits.maxSessionOptionsBytes + SESSION_OVERHEAD_BYTES) {
      ctx.addIssue({
        code: 'custom',
        path: ['limits', 'maxSessionBytesPerTenant'],
        message: `limits.max_session_bytes_per_tenant (${sessionBytes}) must be at least limits.max_session_options_bytes + ${SESSION_OVERHEAD_BYTES} (${config.limits.maxSessionOptionsBytes + SESSION_OVERHEAD_BYTES}): one session of the largest options must fit`,
      });
    }
    // With tokens of several tenants each tenant gets the directory <root>/<tenantId>: the id must be a safe path segment.
    if (new Set(config.apiTokens.map((t) => t.tenantId)).size > 1) {
      config.apiTokens.forEach((t, i) => {
        if (!SAFE_TENANT_ID.test(t.tenantId))
          ctx.addIssue({ code: 'custom', path: ['apiTokens', i, 'tenantId'], message: SAFE_TENANT_ID_RULE });
      });
    }
    // `mcp "name" {}` blocks are validated as McpServerConfig entries, with paths under mcp.<name>.
    for (const [name, raw] of Object.entries(config.mcp)) {
      const parsed = McpServerConfigSchema.safeParse({ ...raw, name });
      if (!parsed.success)
        for (const issue of parsed.error.issues)
          ctx.addIssue({ code: 'custom', path: ['mcp', name, ...issue.path.map(String)], message: issue.message });
      if (config.mcpServers.some((server) => server.name === name))
        ctx.addIssue({ code: 'custom', path: ['mcp', name], message: `MCP server "${name}" is also in mcpServers` });
    }
  });

/** Every agent-global MCP server of a config: the `mcpServers` list and the `mcp "name" {}` blocks. */
export function globalMcpServers(config: CodeConfig): z.infer<typeof McpServerConfigSchema>[] {
  return [
    ...config.mcpServers,
    ...Object.entries(config.mcp).map(([name, raw]) => McpServerConfigSchema.parse({ ...raw, name })),
  ];
}

/** True when the server keeps its state in Redis: one Redis (`redis_url`) or a Redis Cluster (`redis.cluster`). */
export function usesRedis(config: Pick<CodeConfig, 'redisUrl' | 'redis'>): boolean {
  return config.redisUrl !== undefined || config.redis.cluster !== undefined;
}

/** The loaded server configuration. */
export type CodeConfig = z.infer<typeof CodeConfigSchema>;
