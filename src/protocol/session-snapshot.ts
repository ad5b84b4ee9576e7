import { z } from 'zod';
import { StoredQuestionSchema } from './questions.js';
import { AttachmentRefSchema } from './attachments.js';
import { ChatMessageSchema } from './chat-message.js';
import { EventEnvelopeSchema } from './event-envelope.js';
import { ForkOriginSchema } from './fork.js';
import { RevertStateSchema } from './revert.js';
import { McpServerConfigSchema } from './mcp.js';
import { ExternalTaskSchema } from './queue.js';
import { RunRecordSchema, UsageSchema } from './run-record.js';
import { SessionOptionsSchema } from './session-options.js';
import { StoredVerificationReportSchema } from './verification.js';
import { SubagentTaskSnapshotSchema } from './subagent-task.js';

/** Identity labels carried by a session into events, hooks and snapshots. */
export const SessionLabelsSchema = z
  .object({
    tenantId: z.string().optional(),
    principal: z.string().optional(),
    agentTemplateId: z.string().optional(),
    correlationId: z.string().optional(),
  })
  .strict();

/** Identity labels. */
export type SessionLabels = z.infer<typeof SessionLabelsSchema>;

/** A stored tool output too large for the transcript. */
export const ArtifactSchema = z.object({
  id: z.string(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  createdAtMs: z.number().int().nonnegative(),
  content: z.string(),
});

/** A stored artifact. */
export type Artifact = z.infer<typeof ArtifactSchema>;

/** The session part of a snapshot. */
export const SnapshotSessionSchema = z.object({
  id: z.string().min(1),
  ownerTenantId: z.string(),
  workspace: z.string(),
  model: z.string(),
  options: SessionOptionsSchema,
  labels: SessionLabelsSchema,
  messages: z.array(ChatMessageSchema),
  usage: UsageSchema,
  createdAtMs: z.number().int().nonnegative(),
  updatedAtMs: z.number().int().nonnegative(),
  sessionSequence: z.number().int().nonnegative(),
  /** Ids a replay HostEnv (options.hostEnv) has handed out, so a restored session never reuses one. */
  idCounter: z.number().int().nonnegative().optional(),
  /** Set when a client closed the session: requests answer SESSION_CLOSED until `resume: true` reopens it. */
  closed: z.boolean().optional(),
  /**
   * True when the creator gave its own permissionPolicy without the host_direct scope: the operator's
   * default policy bounds it wherever the session is restored. Absent in snapshots written before the
   * bound existed: those are read as bounded when they carry their own policy.
   */
  policyBounded: z.boolean().optional(),
  /**
   * True when the creator had the host_direct scope: webhook URLs in the options (hooks, budgetHost) may name
   * private, loopback or link-local addresses wherever the session is restored. Absent: they may not.
   */
  outboundPrivate: z.boolean().optional(),
  /**
   * True when the creator had the host_direct scope: on a server without a working sandbox the session's
   * commands may run on the host wherever it is restored. Absent: they are refused there.
   */
  hostCommands: z.boolean().optional(),
  /**
   * The session's own MCP servers (added with POST /v1/sessions/:id/mcp, not yet removed), re-registered
   * wherever the session is restored. The host-supplied inherited ones are in `options.mcpServers`. Like the
   * options, they may carry env or headers with tokens: the snapshot is stored as is and never served.
   */
  ownMcpServers: z.array(McpServerConfigSchema).optional(),
  /**
   * The session's "allow always" grants (tool name and permission subject, as ConfirmationBroker keys them),
   * oldest first, held again wherever the session is restored. Absent: none, or a snapshot older than the field.
   */
  permissionGrants: z.array(z.string()).max(1000).optional(),
  /**
   * The workspace directory's identity when it was pinned (st_dev, st_ino as decimal strings): at creation, or at
   * the last restore that pinned it again. Absent in snapshots written before the pin existed.
   */
  workspacePin: z
    .object({ dev: z.string().regex(/^\d{1,20}$/), ino: z.string().regex(/^\d{1,20}$/) })
    .strict()
    .optional(),
  /** Set on a fork: the session and point it was forked from (SessionInfo.forkedFrom). Absent: not a fork. */
  forkedFrom: ForkOriginSchema.optional(),
  /**
   * The transcript's epoch: how many times a run rewrote its earlier messages (a compaction, a run with its own
   * history); run records carry the epoch they started in. Absent: 0 (none, or a snapshot older than the field).
   */
  transcriptEpoch: z.number().int().nonnegative().optional(),
  /**
   * Runs reverted (POST .../runs/:runId/revert) and not unreverted yet: their messages, hidden from the model, and
   * the trees an unrevert restores (docs/changes.md). Absent: none (or a snapshot older than the field).
   */
  reverted: RevertStateSchema.optional(),
});

/** SessionSnapshotV1: one complete, atomically saved generation of a session. */
export const SessionSnapshotV1Schema = z
  .object({
    schema_version: z.literal(1),
    generation: z.number().int().nonnegative(),
    saved_at_ms: z.number().int().nonnegative(),
    session: SnapshotSessionSchema,
    artifacts: z.array(ArtifactSchema),
    trace_events: z.array(EventEnvelopeSchema),
    run_records: z.array(RunRecordSchema),
    verification_reports: z.array(StoredVerificationReportSchema),
    subagent_tasks: z.array(SubagentTaskSnapshotSchema),
    /**
     * External tasks of the lane queue awaiting the host when the snapshot was taken (absent: none, or a
     * snapshot older than the field). Their run did not survive the node: a restored session settles each
     * as failed (reason run_lost), so a late answer gets 409 EXTERNAL_TASK_SETTLED.
     */
    external_tasks: z.array(ExternalTaskSchema).optional(),
    /**
     * The session's run queue (multitaskStrategy): the ids of its queued runs (status queued in run_records,
     * with their inputs) in start order; absent: none, or a snapshot older than the field. A restored session
     * starts them again, in order.
     */
    run_queue: z.array(z.string()).max(10_000).optional(),
    /**
     * Questions of the agent (ask_user) still waiting when the snapshot was taken, or kept with their answer for
     * the run that resumes them (absent: none, or a snapshot older than the field). A restored session lists them
     * again; the answer resumes the asking run from its checkpoint (docs/questions.md).
     */
    pending_questions: z.array(StoredQuestionSchema).max(1000).optional(),
    /**
     * The attachments of queued runs (references, never bytes), by run id: a queued run started after a
     * restore sends the same parts. Absent: no queued run has any.
     */
    run_queue_attachments: z.record(z.string(), z.array(AttachmentRefSchema).max(100)).optional(),
  })
  // The seed's invariant: a stored task belongs to the session it is stored with.
  .refine((snapshot) => snapshot.subagent_tasks.every((task) => task.parent_session_id === snapshot.session.id), {
    message: "subagent_tasks: every task's parent_session_id must be the session's id",
    path: ['subagent_tasks'],
  })
  .meta({ id: 'SessionSnapshotV1' });

/** A session snapshot. */
export type SessionSnapshotV1 = z.infer<typeof SessionSnapshotV1Schema>;
