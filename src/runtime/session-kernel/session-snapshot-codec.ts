import type { AttachmentRef } from '../../protocol/attachments.js';
import type { McpServerConfig } from '../../protocol/mcp.js';
import type { ExternalTaskSnapshot } from '../../protocol/queue.js';
import type { StoredQuestion } from '../../protocol/questions.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { Artifact, SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { VerificationReport } from '../../protocol/verification.js';
import type { SubagentTaskSnapshot } from '../../protocol/subagent-task.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import type { HostEnv } from '../ports/host-env.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import { isTerminal } from './session-runs.js';
import type { SessionTranscript } from './session-transcript.js';

/** The live parts of a session one snapshot generation is made of. */
export interface SnapshotSource {
  readonly generation: number;
  readonly config: ResolvedSessionConfig;
  readonly hostEnv: HostEnv;
  readonly transcript: SessionTranscript;
  readonly createdAtMs: number;
  readonly events: SessionEventLog;
  readonly artifacts: Artifact[];
  readonly runs: RunRecord[];
  readonly verifications: VerificationReport[];
  readonly subagentTasks: SubagentTaskSnapshot[];
  /** The session's own MCP servers (POST .../mcp), re-registered on restore; the inherited ones are in `config.options.mcpServers`. */
  readonly ownMcpServers: readonly McpServerConfig[];
  /** The session's "allow always" grant keys, oldest first (ConfirmationBroker.grantKeys). */
  readonly permissionGrants: readonly string[];
  /** External tasks of the lane queue awaiting the host (none without a queue). */
  readonly externalTasks?: readonly ExternalTaskSnapshot[];
  /** The ids of the runs waiting in the run queue, in start order (none: not written). */
  readonly runQueue?: readonly string[];
  /** Questions waiting (or kept with their answer for the run that resumes them); none: not written. */
  readonly questions?: readonly StoredQuestion[];
  /** The attachment references of queued runs that have any, by run id. */
  readonly runQueueAttachments?: Readonly<Record<string, readonly AttachmentRef[]>>;
  /** True once a client closed the session: stored sessions marked closed are not hydrated implicitly. */
  readonly closed: boolean;
}

/** The session as one SessionSnapshotV1 generation (a replay HostEnv's id counter included, so ids are never reused). */
export function toSessionSnapshot(source: SnapshotSource): SessionSnapshotV1 {
  const { config, hostEnv, transcript } = source;
  return {
    schema_version: 1,
    generation: source.generation,
    saved_at_ms: hostEnv.now(),
    session: {
      id: config.sessionId,
      ownerTenantId: config.ownerTenantId,
      workspace: config.workspace,
      workspacePin: { dev: config.workspaceDir.pin.dev, ino: config.workspaceDir.pin.ino },
      model: config.model.id,
      options: config.options,
      labels: config.labels,
      messages: transcript.messages,
      usage: transcript.usage,
      createdAtMs: source.createdAtMs,
      updatedAtMs: transcript.updatedAtMs,
      sessionSequence: source.events.lastSequence,
      ...('issued' in hostEnv && typeof hostEnv.issued === 'number' ? { idCounter: hostEnv.issued } : {}),
      ...(source.closed ? { closed: true } : {}),
      // Always written: a snapshot without it predates the bound, and is read as bounded when it has its own policy.
      policyBounded: config.permissionFloor !== undefined,
      ...(config.outboundPrivateGrant ? { outboundPrivate: true } : {}),
      ...(config.commands.hostCommands ? { hostCommands: true } : {}),
      ...(source.ownMcpServers.length > 0 ? { ownMcpServers: [...source.ownMcpServers] } : {}),
      ...(source.permissionGrants.length > 0 ? { permissionGrants: [...source.permissionGrants] } : {}),
      ...(config.forkedFrom ? { forkedFrom: config.forkedFrom } : {}),
      ...(transcript.epoch > 0 ? { transcriptEpoch: transcript.epoch } : {}),
      ...(transcript.reverted ? { reverted: transcript.reverted } : {}),
    },
    artifacts: source.artifacts,
    trace_events: source.events.retained(config.retention.maxTraceEvents),
    run_records: source.runs,
    verification_reports: [...source.verifications],
    subagent_tasks: source.subagentTasks,
    ...(source.externalTasks && source.externalTasks.length > 0 ? { external_tasks: [...source.externalTasks] } : {}),
    ...(source.runQueue && source.runQueue.length > 0 ? { run_queue: [...source.runQueue] } : {}),
    ...(source.questions && source.questions.length > 0 ? { pending_questions: [...source.questions] } : {}),
    ...(source.runQueueAttachments && Object.keys(source.runQueueAttachments).length > 0
      ? {
          run_queue_attachments: Object.fromEntries(
            Object.entries(source.runQueueAttachments).map(([runId, refs]) => [runId, [...refs]]),
          ),
        }
      : {}),
  };
}

/**
 * A stored run record as a restored session keeps it: a run in flight when the snapshot was taken did not finish
 * on that node (NODE_LOST); a queued one waits again.
 */
export function restoredRun(stored: RunRecord): RunRecord {
  return isTerminal(stored.status) || stored.status === 'queued'
    ? stored
    : {
        ...stored,
        status: 'failed',
        error: { code: 'NODE_LOST', message: 'the run was in flight when the session was last saved' },
      };
}
