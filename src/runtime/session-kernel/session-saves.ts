import { CodeError } from '../../errors.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { SubagentTasks } from '../delegation/subagent-tasks.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import type { SessionQueue } from '../queue/session-queue.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionArtifacts } from './session-artifacts.js';
import type { SessionEmit } from './session-emitter.js';
import type { SessionGovernanceAccess } from './session-governance-access.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import type { SessionMcp } from './session-mcp.js';
import { saveSnapshot } from './session-persistence.js';
import type { SessionRuns } from './session-runs.js';
import type { SessionScope } from './session-services.js';
import { toSessionSnapshot } from './session-snapshot-codec.js';
import type { SessionTranscript } from './session-transcript.js';
import type { VerificationReports } from './verification-reports.js';

/** The parts of a session its snapshot is made of, and what saving it needs. */
export interface SessionSavesDeps {
  readonly config: ResolvedSessionConfig;
  readonly sessionKey: SessionKey;
  readonly createdAtMs: number;
  /** The session's HostEnv, stores and the agent's services (ownership fences the save; quotas count its bytes). */
  readonly scope: SessionScope;
  readonly emit: SessionEmit;
  readonly events: SessionEventLog;
  readonly lifecycle: SessionLifecycle;
  readonly transcript: SessionTranscript;
  readonly artifacts: SessionArtifacts;
  readonly records: SessionRuns;
  readonly reports: VerificationReports;
  readonly tasks: SubagentTasks;
  readonly mcp: SessionMcp;
  readonly governance: SessionGovernanceAccess;
  readonly queue: SessionQueue | undefined;
}

/**
 * A session's persistence: its snapshot, its store generation, the session_sequence it was last saved at (so
 * `dirty` knows whether anything happened since), and the autoSave saves (whose failures go to the logger).
 */
export class SessionSaves {
  private generationValue: number;
  /** session_sequence at the last saved generation (-1: never saved). */
  private savedAtSequence: number;

  constructor(
    private readonly deps: SessionSavesDeps,
    /** A restored session's generation, and the session_sequence it was read at (before anything it emits since). */
    restored: { readonly generation: number; readonly readAtSequence: number } | undefined,
  ) {
    this.generationValue = restored?.generation ?? 0;
    // A restored session starts as saved: nothing changed since the generation it was read from.
    this.savedAtSequence = restored ? restored.readAtSequence : -1;
  }

  /** The last generation saved (or read from the store); 0 when never saved. */
  get generation(): number {
    return this.generationValue;
  }

  /** True when this session was ever saved (its store holds a generation). */
  get saved(): boolean {
    return this.generationValue > 0;
  }

  /** True when something happened (any event) since the last saved generation, or it was never saved. */
  get dirty(): boolean {
    return this.deps.events.lastSequence !== this.savedAtSequence;
  }

  /** Save one complete snapshot generation through the store; emits persistence_failed on failure. */
  async save(): Promise<number> {
    const { config, sessionKey, scope, emit } = this.deps;
    if (config.parentSessionId !== null)
      throw new CodeError(
        'CHILD_SESSION',
        `session ${config.sessionId} is a child of session ${config.parentSessionId}: its task is saved with the parent`,
        { parentSessionId: config.parentSessionId },
      );
    this.generationValue += 1;
    const sequence = this.deps.events.lastSequence;
    const sessionId = config.sessionId;
    const { ownership, quotas } = scope.agent.services;
    const tenantId = config.ownerTenantId;
    await saveSnapshot(
      {
        sessionId,
        sessionKey,
        store: scope.store,
        ownership,
        emit,
        ...(quotas ? { onStored: (bytes: number) => quotas.recordStored(tenantId, sessionId, bytes) } : {}),
      },
      this.snapshot(this.generationValue),
    );
    this.savedAtSequence = sequence;
    return this.generationValue;
  }

  /** The session as one SessionSnapshotV1 generation. */
  snapshot(generation = this.generationValue): SessionSnapshotV1 {
    const {
      config,
      scope,
      transcript,
      createdAtMs,
      events,
      artifacts,
      records,
      reports,
      tasks,
      mcp,
      governance,
      lifecycle,
      queue,
    } = this.deps;
    return toSessionSnapshot({
      generation,
      config,
      hostEnv: scope.hostEnv,
      transcript,
      createdAtMs,
      events,
      artifacts: artifacts.list(),
      runs: records.list(),
      runQueue: records.queuedIds(),
      runQueueAttachments: records.queuedAttachments(),
      verifications: reports.list(),
      subagentTasks: tasks.list(),
      ownMcpServers: mcp.ownConfigs(),
      permissionGrants: governance.grantKeys(),
      questions: governance.storedQuestions(),
      closed: lifecycle.closedByClient,
      ...(queue ? { externalTasks: queue.snapshotExternalTasks() } : {}),
    });
  }

  /** With autoSave, save now; a failure is reported (persistence_failed, the logger), not thrown. */
  async saveIfAutoSave(): Promise<void> {
    if (this.deps.config.autoSave) await this.save().catch((error: unknown) => this.reportError(error));
  }

  /** The save after a run ends: autoSave sessions still this node's (not abandoned, closed only for shutdown or passivation). */
  async saveAfterRun(): Promise<void> {
    if (this.deps.config.autoSave && this.deps.lifecycle.savesAfterRun())
      await this.save().catch((error: unknown) => this.reportError(error));
  }

  private reportError(error: unknown): void {
    this.deps.scope.agent.services.logger.persistenceFailed(this.deps.config.sessionId, error);
  }
}
