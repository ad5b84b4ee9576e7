import { z } from 'zod';
import { BudgetHostSchema, BudgetOptionsSchema } from './budget.js';
import { ConfirmationPolicySchema, PermissionPolicySchema } from './governance.js';
import { ConfigHookRegistrationSchema } from './hooks.js';
import { McpServerConfigSchema } from './mcp.js';

/** Bounds on what a long session keeps in memory and in its snapshot. */
export const RetentionLimitsSchema = z
  .object({
    maxRuns: z.number().int().positive().max(100_000).optional(),
    maxEventsPerRun: z.number().int().positive().max(1_000_000).optional(),
    maxTraceEvents: z.number().int().nonnegative().max(1_000_000).optional(),
    maxTerminalSubagentTasks: z.number().int().nonnegative().max(100_000).optional(),
  })
  .strict();

/**
 * Options the server recognises from the seed but does not implement yet. They are rejected with
 * UNSUPPORTED_OPTION (never silently ignored) until the issue that builds them lands.
 */
export const UNSUPPORTED_SESSION_OPTIONS = [
  'planningMode',
  'skills',
  'memory',
  'queue',
  'agentDirs',
  'skillDirs',
] as const;

const positiveInt = (max: number) => z.number().int().positive().max(max);

/** SessionOptions: the body of POST /v1/sessions (camelCase, the seed's option names). */
export const SessionOptionsSchema = z
  .object({
    sessionId: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'sessionId must be 1-128 characters of letters, digits, "_", "." or "-"')
      .optional(),
    resume: z.boolean().optional(),
    /** When a node takes this session over from one that died mid-run, resume that run from its checkpoint. */
    autoResume: z.boolean().optional(),
    model: z.string().regex(/^[^/\s]+\/\S+$/, 'model must be "provider/model"').optional(),
    workspace: z.string().min(1).optional(),
    autoSave: z.boolean().optional(),
    maxToolRounds: positiveInt(1000).optional(),
    maxParseRetries: z.number().int().nonnegative().max(100).optional(),
    toolTimeoutMs: positiveInt(3_600_000).optional(),
    circuitBreakerThreshold: positiveInt(100).optional(),
    duplicateToolCallThreshold: positiveInt(100).optional(),
    continuationEnabled: z.boolean().optional(),
    maxContinuationTurns: z.number().int().nonnegative().max(100).optional(),
    maxExecutionTimeMs: positiveInt(86_400_000).optional(),
    role: z.string().max(20_000).optional(),
    guidelines: z.string().max(50_000).optional(),
    responseStyle: z.string().max(20_000).optional(),
    extra: z.string().max(50_000).optional(),
    tenantId: z.string().min(1).max(200).optional(),
    principal: z.string().min(1).max(200).optional(),
    agentTemplateId: z.string().min(1).max(200).optional(),
    correlationId: z.string().min(1).max(200).optional(),
    retentionLimits: RetentionLimitsSchema.optional(),
    /** Deterministic replay: sequential ids and a fixed clock for everything this session produces. */
    hostEnv: z
      .object({
        sequentialIdPrefix: z.string().regex(/^[A-Za-z0-9_.]{1,32}$/, 'sequentialIdPrefix must be 1-32 letters, digits, "_" or "."'),
        fixedTimeMs: z.number().int().nonnegative(),
      })
      .strict()
      .optional(),
    permissionPolicy: PermissionPolicySchema.optional(),
    confirmationPolicy: ConfirmationPolicySchema.optional(),
    budget: BudgetOptionsSchema.optional(),
    /** A webhook this session's budget guard also asks before every provider and tool call (fail closed). */
    budgetHost: BudgetHostSchema.optional(),
    /** Webhook hooks registered at creation (more can be added over REST, WebSocket hosts included). */
    hooks: z.array(ConfigHookRegistrationSchema).max(64).optional(),
    /** MCP servers the host supplies for this session: a read-only inherited layer (stdio needs host_direct). */
    mcpServers: z.array(McpServerConfigSchema).max(32).optional(),
    ...Object.fromEntries(UNSUPPORTED_SESSION_OPTIONS.map((name) => [name, z.unknown().optional()])),
  })
  .strict()
  .meta({ id: 'SessionOptions' });

/** Parsed SessionOptions. */
export type SessionOptions = z.infer<typeof SessionOptionsSchema>;
/** Parsed retention limits. */
export type RetentionLimits = z.infer<typeof RetentionLimitsSchema>;
