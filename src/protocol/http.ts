import { RunWebhookSchema } from './webhooks.js';
import { z } from 'zod';
import { ToolErrorKindSchema } from './seed-event-payloads.js';
import { ChatMessageSchema } from './chat-message.js';
import { RunAttachmentSchema } from './attachments.js';
import { EventEnvelopeSchema } from './event-envelope.js';
import { AgentResultSchema, RunRecordSchema, RunStatusSchema, UsageSchema } from './run-record.js';
import { MULTITASK_STRATEGIES } from './multitask-strategy.js';
import { ForkOriginSchema } from './fork.js';
import { RevertedRunsSchema } from './revert.js';
import { SessionLabelsSchema } from './session-snapshot.js';

/** The error body every failure answers with. */
export const ErrorBodySchema = z
  .object({
    error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) }),
  })
  .meta({ id: 'ErrorBody' });

/** Session info as returned by the session routes. */
export const SessionInfoSchema = z
  .object({
    id: z.string(),
    workspace: z.string(),
    model: z.string(),
    busy: z.boolean(),
    /** The sandbox the session's commands run in: `bwrap`, or `none` (then only sessions created with host_direct run commands). */
    sandbox: z.enum(['bwrap', 'none']),
    /** The network its contained commands get: `none`, or `allowed` (the host's network, loopback included). */
    sandboxNetwork: z.enum(['none', 'allowed']),
    /** The active run's snapshot (seed `currentRun()`), null when idle. */
    currentRun: z.object({ id: z.string(), status: RunStatusSchema }).nullable(),
    /** The newest retained run (the active one while busy) with its status, null before the first run: the console's "last run" column. */
    lastRun: z.object({ id: z.string(), status: RunStatusSchema }).nullable(),
    /** Non-fatal notes about the options the session was created with (seed `initWarning`), null when none. */
    initWarning: z.string().nullable(),
    /**
     * Set while the workspace is no longer the directory the session pinned (file tools and commands fail with
     * WORKSPACE_CHANGED; the session works again once the directory is back): why, and when it was seen.
     */
    workspaceChanged: z.object({ reason: z.string(), atMs: z.number().int().nonnegative() }).optional(),
    /** True when a memory store resolved (seed `hasMemory`). */
    hasMemory: z.boolean(),
    /** True when the session has a lane queue (seed `hasQueue()`, only with queueConfig). */
    hasQueue: z.boolean(),
    /** The built-in or registered agent the session runs as, null for an ordinary session. */
    agent: z.string().nullable(),
    /** The session that delegated this one (a child session of a task), else null. */
    parentSessionId: z.string().nullable(),
    /** `file`: the server's durable backend; `memory`: this process only. */
    sessionStore: z.enum(['file', 'memory']),
    /** `default`: secrets in tool output are redacted; `none`: they are not. */
    securityProvider: z.enum(['default', 'none']),
    labels: SessionLabelsSchema,
    closed: z.boolean(),
    createdAtMs: z.number().int(),
    messageCount: z.number().int(),
    usage: UsageSchema,
    autoSave: z.boolean(),
    /** True when the session offers the agent's ask_user tool (SessionOptions.askUser: a surface answers its questions). */
    askUser: z.boolean(),
    /** Provider calls made by the session, all through its one LLM invoker. */
    llmCalls: z.number().int(),
    /** Set on a fork (POST /v1/sessions/:id/fork): the session and point it was forked from. */
    forkedFrom: ForkOriginSchema.optional(),
    /** Set while runs are reverted (POST .../runs/:runId/revert) and an unrevert can put them back. */
    reverted: RevertedRunsSchema.optional(),
  })
  .meta({ id: 'SessionInfo' });

/** One session. */
export const SessionResponseSchema = z.object({ session: SessionInfoSchema, resumed: z.boolean().optional() });
/** A list of sessions. */
export const SessionListResponseSchema = z.object({ sessions: z.array(SessionInfoSchema) });
/**
 * The `tenantId` query every session route (`/v1/sessions/:id...`) accepts: the tenant whose session `:id`
 * names (session ids are per tenant). Default: the caller's own tenant; naming another needs the admin scope.
 */
export const SessionTenantQuerySchema = z.object({ tenantId: z.string().min(1).max(200).optional() }).strict();
/**
 * Query of GET /v1/sessions: an admin lists one tenant's sessions (default: every tenant's; a non-admin: its own);
 * `forkedFrom` lists only the forks of that session id.
 */
export const SessionListQuerySchema = z
  .object({ tenantId: z.string().min(1).max(200).optional(), forkedFrom: z.string().min(1).max(128).optional() })
  .strict();
/** Session id path parameter. */
export const SessionParamsSchema = z.object({ id: z.string().min(1).max(128) }).strict();
/** Session + run id path parameters. */
export const RunParamsSchema = z.object({ id: z.string().min(1).max(128), runId: z.string().min(1).max(128) }).strict();
/** Session + tool name path parameters. */
export const ToolParamsSchema = z.object({ id: z.string().min(1).max(128), name: z.string().min(1).max(128) }).strict();
/** Session + artifact id path parameters. */
export const ArtifactParamsSchema = z
  .object({ id: z.string().min(1).max(128), artifactId: z.string().min(1).max(128) })
  .strict();

/** Body of POST /v1/sessions/:id/runs. */
export const RunRequestSchema = z
  .object({
    input: z.string().min(1, 'input must not be empty').max(1_000_000),
    history: z.array(ChatMessageSchema).max(10_000).optional(),
    wait: z.boolean().optional(),
    /**
     * What to do while another run is active (LangGraph's multitask_strategy): `reject` (default, 409
     * SESSION_BUSY), `enqueue` (wait in the session's run queue), `interrupt` (stop the active run at its next
     * safe point, then run), `rollback` (cancel the active run, restore the transcript and its files to before it, then run).
     */
    multitaskStrategy: z.enum(MULTITASK_STRATEGIES).optional(),
    /** Images and text files sent with the input (seed `sendWithAttachments`); see docs/attachments.md. */
    attachments: z.array(RunAttachmentSchema).max(100).optional(),
    /** Ours: POST the run record to this URL when the run ends (and on `events`), signed; docs/webhooks.md. */
    webhook: RunWebhookSchema.optional(),
  })
  .strict()
  .meta({ id: 'RunRequest' });
/** Body of POST /v1/sessions/:id/runs. */
export type RunRequest = z.infer<typeof RunRequestSchema>;

/** Body of POST .../runs/:runId/resume. */
export const ResumeRequestSchema = z.object({ wait: z.boolean().optional() }).strict().meta({ id: 'ResumeRequest' });

/** Answer of a started run (202) or a finished one (200 with wait: true). */
export const RunStartedResponseSchema = z.object({
  runId: z.string(),
  run: RunRecordSchema,
  existing: z.boolean(),
  /** Set while the run waits in the session's run queue (status queued): 1 starts next. */
  queuePosition: z.number().int().positive().optional(),
});
/** Answer of POST .../runs with wait: true. */
export const RunFinishedResponseSchema = z.object({
  runId: z.string(),
  run: RunRecordSchema,
  result: AgentResultSchema.nullable(),
  existing: z.boolean(),
});
/** Run list. */
export const RunListResponseSchema = z.object({ runs: z.array(RunRecordSchema) });
/** One run. */
export const RunResponseSchema = z.object({ run: RunRecordSchema });
/** Query of the run events page. */
export const RunEventsQuerySchema = z
  .object({
    after: z.coerce.number().int().min(-1).default(-1),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    tenantId: SessionTenantQuerySchema.shape.tenantId,
  })
  .strict();
/** A page of run events. */
export const RunEventsResponseSchema = z.object({
  events: z.array(EventEnvelopeSchema),
  retentionGap: z.object({ firstAvailableSequence: z.number().int() }).nullable(),
  nextAfter: z.number().int().nullable(),
  /** The first per-run sequence still retained, null when none is (the seed's page field). */
  firstAvailableSequence: z.number().int().nullable(),
  /** One past the run's newest sequence: the number of events it emitted, dropped ones included (seed). */
  latestSequenceExclusive: z.number().int().nonnegative(),
  /** The cursor of the next page (the seed's name for `nextAfter`). */
  nextAfterSequence: z.number().int().nullable(),
  /** True when retained events follow this page (seed). */
  hasMore: z.boolean(),
});
/** Cancel answer. */
export const CancelResponseSchema = z.object({ cancelled: z.boolean() });
/** History answer. */
export const HistoryResponseSchema = z.object({ messages: z.array(ChatMessageSchema) });
/** Save answer. */
export const SaveResponseSchema = z.object({ generation: z.number().int() });
/** Close answer: true when the session was open, false when it was already closed. */
export const CloseResponseSchema = z.object({
  closed: z.boolean(),
  /** With `?purge=true`: true when a stored snapshot (and its runs' checkpoints) was deleted. */
  purged: z.boolean().optional(),
});
/** Query of DELETE /v1/sessions/:id: `purge=true` also deletes what is stored of the session, at once. */
export const CloseQuerySchema = SessionTenantQuerySchema.extend({
  purge: z
    .enum(['true', 'false'])
    .optional()
    .transform((value) => value === 'true'),
}).strict();
/** Query of GET /v1/sessions/:id/trace. */
export const TraceQuerySchema = z
  .object({
    after: z.coerce.number().int().min(0).default(0),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    tenantId: SessionTenantQuerySchema.shape.tenantId,
  })
  .strict();
/** The session's trace events (seed `traceEvents()`): its event log, newest retentionLimits.maxTraceEvents kept. */
export const TraceResponseSchema = z.object({ events: z.array(EventEnvelopeSchema) });

/** A tool as listed by GET .../tools. */
export const ToolInfoSchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  readOnly: z.boolean(),
});
/** Tool list. */
export const ToolListResponseSchema = z.object({ tools: z.array(ToolInfoSchema) });
/** Arguments of a tool call as a route takes them: any JSON object, which the tool invoker validates against the tool's schema. */
export const ToolArgsSchema = z.record(z.string(), z.unknown());
/** Body of a host-direct tool call. */
export const ToolCallBodySchema = z.object({ args: ToolArgsSchema.default({}) }).strict();
/** A tool result: the seed SDK's ToolResult `{name, output, exitCode, metadata, errorKind?}`, then ours. */
export const ToolResultResponseSchema = z
  .object({
    name: z.string(),
    output: z.string(),
    exitCode: z.number().int(),
    metadata: z.record(z.string(), z.unknown()),
    errorKind: ToolErrorKindSchema.optional(),
    truncated: z.boolean(),
    artifactId: z.string().nullable(),
    durationMs: z.number(),
  })
  .meta({ id: 'ToolResult' });
/** A stored artifact. */
export const ArtifactResponseSchema = z.object({
  artifact: z.object({
    id: z.string(),
    toolCallId: z.string().optional(),
    toolName: z.string().optional(),
    createdAtMs: z.number().int(),
    content: z.string(),
  }),
});
/** Health answer. */
export const HealthResponseSchema = z.object({
  status: z.string(),
  checks: z.record(z.string(), z.boolean()).optional(),
  /** The sandbox model-chosen commands run in (readiness only): `bwrap`, or `none` (unsandboxed, host_direct sessions only). */
  sandbox: z.enum(['bwrap', 'none']).optional(),
});
