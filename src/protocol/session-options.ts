import { RunWebhookSchema } from './webhooks.js';
import { z } from 'zod';
import { BudgetHostSchema, BudgetOptionsSchema } from './budget.js';
import { ConfirmationPolicySchema, PermissionPolicySchema } from './governance.js';
import { ConfigHookRegistrationSchema } from './hooks.js';
import { McpServerConfigSchema } from './mcp.js';
import { MemoryStoreOptionSchema } from './memory.js';
import { LANE_TIMEOUT_MAX_MS, LaneHandlerConfigSchema, RetryPolicySchema } from './queue.js';
import { InlineSkillSchema } from './skills.js';
import { InstructionFileNamesSchema } from './instruction-file-names.js';
import { WorkerAgentSpecSchema } from './worker-agents.js';

const RUNS_CAP = 100_000;
const EVENTS_CAP = 1_000_000;
const EVENT_BYTES_CAP = 1_073_741_824;

/** The highest value each retention bound may take: what `unbounded: true` gives the bounds it does not name. */
export const RETENTION_CEILINGS = {
  maxRuns: RUNS_CAP,
  maxEventsPerRun: EVENTS_CAP,
  maxTraceEvents: EVENTS_CAP,
  maxTerminalSubagentTasks: RUNS_CAP,
} as const;

/**
 * Bounds on what a long session keeps in memory and in its snapshot. The seed's names (`maxRunsRetained`,
 * `maxEventBytesPerRun`, `unbounded`) are accepted beside ours; every value is capped: `unbounded: true`
 * raises the bounds it does not name to their ceiling (RETENTION_CEILINGS), it never switches one off.
 */
export const RetentionLimitsSchema = z
  .object({
    maxRuns: z.number().int().positive().max(RUNS_CAP).optional(),
    /** The seed's name for `maxRuns` (both given: they must agree). */
    maxRunsRetained: z.number().int().positive().max(RUNS_CAP).optional(),
    maxEventsPerRun: z.number().int().positive().max(EVENTS_CAP).optional(),
    /** The seed's byte bound per run: a run keeps its newest events whose payloads (compact JSON, UTF-8) fit in it, dropping the oldest first. */
    maxEventBytesPerRun: z.number().int().positive().max(EVENT_BYTES_CAP).optional(),
    maxTraceEvents: z.number().int().nonnegative().max(EVENTS_CAP).optional(),
    maxTerminalSubagentTasks: z.number().int().nonnegative().max(RUNS_CAP).optional(),
    /** The seed's "no bounds": every bound not given takes its ceiling (RETENTION_CEILINGS) instead of the server default; none is switched off. */
    unbounded: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'RetentionLimits' });

/** `{type}` of a server-managed store: never a client path. */
const storeRef = <T extends readonly [string, ...string[]]>(types: T, what: string) =>
  z
    .object({
      type: z.enum(types, { error: () => `${what}.type must be one of ${types.map((t) => `"${t}"`).join(', ')}` }),
    })
    .strict();

/** `sessionStore`: `file` is the server's durable backend (file store, or Redis with REDIS_URL); `memory` keeps the session in this process only. */
export const SessionStoreOptionSchema = storeRef(['file', 'memory'] as const, 'sessionStore').meta({
  id: 'SessionStoreOption',
});
/** `securityProvider`: `default` applies secret redaction to tool output; `none` (host_direct only) turns it off for the session. */
export const SecurityProviderOptionSchema = storeRef(['default', 'none'] as const, 'securityProvider').meta({
  id: 'SecurityProviderOption',
});

const loose = z.record(z.string(), z.unknown());
const nonNegativeInt = (max: number) => z.number().int().nonnegative().max(max);
/** The most maxParallelTasks a session may ask for (two full parallel_task calls of 32 at once). */
export const MAX_PARALLEL_TASKS_OPTION = 64;

const positiveInt = (max: number) => z.number().int().positive().max(max);
const paths = z.array(z.string().min(1).max(4096)).max(256);

/** The seed's lane-queue options (queueConfig). */
const QueueConfigSchema = z
  .object({
    queryConcurrency: positiveInt(1000).optional(),
    executeConcurrency: positiveInt(1000).optional(),
    generateConcurrency: positiveInt(1000).optional(),
    enableDlq: z.boolean().optional(),
    dlqMaxSize: positiveInt(1_000_000).optional(),
    enableMetrics: z.boolean().optional(),
    enableAlerts: z.boolean().optional(),
    timeoutMs: positiveInt(LANE_TIMEOUT_MAX_MS).optional(),
    enableAllFeatures: z.boolean().optional(),
    laneHandlers: z
      .object({
        control: LaneHandlerConfigSchema.optional(),
        query: LaneHandlerConfigSchema.optional(),
        execute: LaneHandlerConfigSchema.optional(),
        generate: LaneHandlerConfigSchema.optional(),
      })
      .strict()
      .optional(),
    retryPolicy: RetryPolicySchema.optional(),
  })
  .strict();

/** SessionOptions: the body of POST /v1/sessions (camelCase, the seed's option names, Appendix A in full). */
const SESSION_OPTIONS_SHAPE = {
  /** Also the seed's `schedule:<name>` of a schedule's session (docs/schedules.md). */
  sessionId: z
    .string()
    .regex(
      /^(?:schedule:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}|[A-Za-z0-9][A-Za-z0-9_.-]{0,127})$/,
      'sessionId must be 1-128 characters of letters, digits, "_", "." or "-" (or a schedule\'s schedule:<name>)',
    )
    .optional(),
  resume: z.boolean().optional(),
  /** When a node takes this session over from one that died mid-run, resume that run from its checkpoint. */
  autoResume: z.boolean().optional(),
  /** Ours: the webhook of every run of the session that names none of its own (docs/webhooks.md). */
  webhook: RunWebhookSchema.optional(),
  /**
   * Ours: a surface can answer the agent's questions (the console, `a3s run`, AG-UI, ACP or a client that
   * answers them), so the session offers the `ask_user` tool. Default false: the tool is not offered.
   */
  askUser: z.boolean().optional(),
  model: z
    .string()
    .regex(/^[^/\s]+\/\S+$/, 'model must be "provider/model"')
    .optional(),
  workspace: z.string().min(1).optional(),
  autoSave: z.boolean().optional(),
  sessionStore: SessionStoreOptionSchema.optional(),
  securityProvider: SecurityProviderOptionSchema.optional(),
  maxToolRounds: positiveInt(1000).optional(),
  maxParseRetries: nonNegativeInt(100).optional(),
  toolTimeoutMs: positiveInt(3_600_000).optional(),
  circuitBreakerThreshold: positiveInt(100).optional(),
  duplicateToolCallThreshold: positiveInt(100).optional(),
  continuationEnabled: z.boolean().optional(),
  maxContinuationTurns: nonNegativeInt(100).optional(),
  maxExecutionTimeMs: positiveInt(86_400_000).optional(),
  temperature: z.number().min(0).max(2).optional(),
  role: z.string().max(20_000).optional(),
  guidelines: z.string().max(50_000).optional(),
  responseStyle: z.string().max(20_000).optional(),
  extra: z.string().max(50_000).optional(),
  tenantId: z.string().min(1).max(200).optional(),
  principal: z.string().min(1).max(200).optional(),
  agentTemplateId: z.string().min(1).max(200).optional(),
  correlationId: z.string().min(1).max(200).optional(),
  retentionLimits: RetentionLimitsSchema.optional(),
  /** Per-session artifact bounds; each is capped by the server's limits.maxArtifactsPerSession / maxArtifactBytesPerSession. */
  artifactStoreLimits: z
    .object({
      maxArtifacts: positiveInt(1_000_000).optional(),
      maxBytes: positiveInt(Number.MAX_SAFE_INTEGER).optional(),
    })
    .strict()
    .optional(),
  /** Deterministic replay: sequential ids and a fixed clock for everything this session produces. */
  hostEnv: z
    .object({
      sequentialIdPrefix: z
        .string()
        .regex(/^[A-Za-z0-9_.]{1,32}$/, 'sequentialIdPrefix must be 1-32 letters, digits, "_" or "."'),
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
  /** Refused (UNSUPPORTED_OPTION) when given: no Agent-wide task scheduler here (see UNSUPPORTED_OPTION_REASONS). */
  taskPriority: z.enum(['urgent', 'interactive', 'foreground', 'background', 'maintenance']).optional(),
  enforceActiveSkillToolRestrictions: z.boolean().optional(),
  /** parallel_task children of this session running at once, across all its calls (default: config max_parallel_tasks, 8); the rest wait queued. */
  maxParallelTasks: z
    .number()
    .int()
    .positive()
    .max(MAX_PARALLEL_TASKS_OPTION, `maxParallelTasks is at most ${MAX_PARALLEL_TASKS_OPTION}`)
    .optional(),
  // Capabilities of later issues: UNSUPPORTED_OPTION when the value asks for something (see UNSUPPORTED_SESSION_OPTIONS).
  /** The built-in or registered agent the session runs as (sessionForAgent): its prompt, permission bound, model and max steps. */
  agent: z.string().min(1).max(200).optional(),
  /** Enable the built-in skill catalog (empty, as in the seed: no built-in skills ship). */
  builtinSkills: z.boolean().optional(),
  /** Directories of skill files (Markdown with YAML front matter, recursive, `<folder>/SKILL.md` too), each inside the session's workspace. */
  skillDirs: paths.optional(),
  /** Skills given inline; persona skills fill the role slot, the others are found with search_skills. */
  inlineSkills: z.array(InlineSkillSchema).max(256).optional(),
  /** Directories of agent definitions (*.md with front matter, *.yaml, *.yml), each inside the session's workspace. */
  agentDirs: paths.optional(),
  /** Ours: instruction file names tried after AGENTS.override.md and AGENTS.md, in place of the operator's project_doc_fallback_filenames. */
  projectDocFallbackFilenames: InstructionFileNamesSchema.optional(),
  /** The seed's worker agents: each compiled into an agent the task tool (or `agent`, sessionForWorker) runs as. */
  workerAgents: z.array(WorkerAgentSpecSchema).max(256).optional(),
  /** Long-term memory: `file` = the server's durable backend (files, or Redis with REDIS_URL), `memory` = this process; `namespace` (default "default") inside the caller's tenant. */
  memoryStore: MemoryStoreOptionSchema.optional(),
  queueConfig: QueueConfigSchema.optional(),
  searchConfig: loose.optional(),
  planningMode: z.enum(['auto', 'enabled', 'disabled']).optional(),
  planning: z.boolean().optional(),
  goalTracking: z.boolean().optional(),
  autoCompact: z.boolean().optional(),
  autoCompactThreshold: z.number().gt(0).max(1).optional(),
  maxContextTokens: positiveInt(100_000_000).optional(),
  llmApiTimeoutMs: positiveInt(3_600_000).optional(),
  toolResultTransformPolicy: z
    .object({
      schema: z.literal('a3s.code.tool-result-transform-policy.v1'),
      maxOutputBytes: positiveInt(1_073_741_824).optional(),
      headBytes: nonNegativeInt(1_073_741_824).optional(),
      tailBytes: nonNegativeInt(1_073_741_824).optional(),
      foldRepeatedLines: z.boolean().optional(),
      repeatedLineThreshold: positiveInt(1_000_000).optional(),
      structuredSampleItems: nonNegativeInt(1_000_000).optional(),
    })
    .strict()
    .optional(),
  toolPresentationProfile: z
    .object({
      schema: z.literal('a3s.code.tool-presentation-profile.v1'),
      mode: z.enum(['adaptive', 'direct', 'code', 'disabled']),
    })
    .strict()
    .optional(),
  workspaceBackend: loose.optional(),
  workspaceRetrieval: loose.optional(),
  immutableContentAdapter: loose.optional(),
  remoteGit: loose.optional(),
  outputLanguage: z
    .string()
    .regex(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, 'outputLanguage must be a BCP-47 language tag')
    .optional(),
  autoDelegation: z
    .object({
      enabled: z.boolean().optional(),
      autoParallel: z.boolean().optional(),
      minConfidence: z.number().min(0).max(1).optional(),
      maxTasks: positiveInt(1000).optional(),
    })
    .strict()
    .optional(),
  autoParallel: z.boolean().optional(),
  manualDelegationEnabled: z.boolean().optional(),
  thinkingBudget: nonNegativeInt(10_000_000).optional(),
  llmLogprobs: z.boolean().optional(),
  llmTopLogprobs: nonNegativeInt(20).optional(),
  trajectoryPath: z.string().min(1).max(4096).optional(),
  trajectoryMode: z.string().min(1).max(64).optional(),
  trajectoryMaxTextBytes: positiveInt(1_073_741_824).optional(),
  trajectoryIncludeMessages: z.boolean().optional(),
  /** Extra environment variables for the session's commands (names checked by the builder: PATH, HOME, GIT_*, LD_* are refused). */
  commandEnv: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'commandEnv keys must be environment variable names'),
      z.string().max(4096),
    )
    .optional(),
  /** Our extension: network for the session's contained commands; `allowed` needs host_direct unless config allows it. */
  sandboxNetwork: z.enum(['none', 'allowed']).optional(),
  completionWaivers: z.array(z.unknown()).max(1000).optional(),
  effectIsolation: z.unknown().optional(),
  externalObservations: z.array(z.unknown()).max(1000).optional(),
  outcomeLedger: z.unknown().optional(),
  pathRules: z.array(z.unknown()).max(1000).optional(),
  planRun: z.unknown().optional(),
  readOnlySession: z.boolean().optional(),
  verifierEnabled: z.boolean().optional(),
};

/** Every option name SessionOptions knows. */
export const SESSION_OPTION_NAMES = Object.keys(SESSION_OPTIONS_SHAPE);

/** The known option nearest to a misspelt one (edit distance ≤ 3, case-insensitive), if any. */
function nearestOption(name: string): string | undefined {
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i += 1) {
      let previous = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j += 1) {
        const current = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
        previous = current;
      }
    }
    return row[b.length];
  };
  let best: { name: string; d: number } | undefined;
  for (const known of SESSION_OPTION_NAMES) {
    const d = distance(name.toLowerCase(), known.toLowerCase());
    if (d <= 3 && (!best || d < best.d)) best = { name: known, d };
  }
  return best?.name;
}

/** SessionOptions: the body of POST /v1/sessions. An unknown name (a typo) is a 400 naming it, with the nearest known option. */
export const SessionOptionsSchema = z
  .strictObject(SESSION_OPTIONS_SHAPE, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      return issue.keys
        .map((key) => {
          const near = nearestOption(key);
          return `unknown option "${key}"${near ? ` (did you mean "${near}"?)` : ''}`;
        })
        .join('; ');
    },
  })
  .meta({ id: 'SessionOptions' });

/** Parsed SessionOptions. */
export type SessionOptions = z.infer<typeof SessionOptionsSchema>;
/** Parsed retention limits. */
export type RetentionLimits = z.infer<typeof RetentionLimitsSchema>;
