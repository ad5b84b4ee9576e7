import type { SessionChanges } from '../changes/session-changes.js';
import type { SubagentTasks } from '../delegation/subagent-tasks.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import type { LlmInvoker } from '../invocation/llm-invoker.js';
import type { AgentMemory } from '../memory/agent-memory.js';
import type { SessionQueue } from '../queue/session-queue.js';
import type { SessionCommands } from '../sandbox/session-commands.js';
import { sessionKey, type SessionKey } from '../../stores/session-key.js';
import { messageBytes } from '../compaction/estimate-tokens.js';
import { closeSessionParts } from './close-session-parts.js';
import type { HostDirectCalls } from './host-direct-calls.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { RestoredState } from './restored-state.js';
import type { SessionArtifacts } from './session-artifacts.js';
import type { SessionEmit } from './session-emitter.js';
import type { SessionGovernanceAccess } from './session-governance-access.js';
import { buildSessionKernel, type SessionKernel } from './session-kernel.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import type { SessionMcp } from './session-mcp.js';
import type { SessionRunControl } from './session-run-control.js';
import type { SessionSaves } from './session-saves.js';
import type { SessionScope } from './session-services.js';
import type { SessionTools } from './session-tools.js';
import type { SessionTranscript } from './session-transcript.js';
import type { SessionVerifications } from './session-verifications.js';

/**
 * One live session: its identity, activity and close, and its parts (built in order by buildSessionKernel).
 * Routes, adapters and the agent use the parts directly: `session.runs.start(request)`, `session.persistence.save()`,
 * `session.governance.answerConfirmation(...)`. Every transcript-affecting operation goes through `runs.start`.
 */
export class AgentSession implements SessionKernel {
  readonly id: string;
  /** The session's address (tenant and id): what maps, stores and leases key it by. */
  readonly key: SessionKey;
  readonly createdAtMs: number;
  /** Last time a request or run used the session (the idle reaper passivates old ones). */
  lastActivityMs = 0;
  /** Open or closed, why, and whether another node took it over. */
  readonly lifecycle: SessionLifecycle;
  /** The session's events, stamped and retained; subscribers read them from here. */
  readonly events: SessionEventLog;
  /** The conversation: messages and token usage. */
  readonly transcript: SessionTranscript;
  /** Emits one of the session's events. */
  readonly emit: SessionEmit;
  /** Full outputs of cut tool results, by id. */
  readonly artifacts: SessionArtifacts;
  /** Policy, confirmations, hooks, budget and redaction (built on first use); the budget host. */
  readonly governance: SessionGovernanceAccess;
  /** The MCP layers: global, the parent's (a child's), inherited, the session's own servers. */
  readonly mcp: SessionMcp;
  /** The subagent tasks of the session's delegations. */
  readonly tasks: SubagentTasks;
  /** Where the session's model-chosen commands run (session info reports its kind). */
  readonly sandbox: SessionCommands;
  /** The session's change capture (undefined: its runs capture nothing). */
  readonly changes: SessionChanges | undefined;
  /** The registry, the specs the model sees and the one tool invoker. */
  readonly tools: SessionTools;
  /** Host-direct tool calls and host-selected tasks (no lease, no model). */
  readonly directCalls: HostDirectCalls;
  /** The session's one LLM invoker (its callCount counts the provider calls). */
  readonly llm: LlmInvoker;
  /** The session's AgentMemory (SessionOptions.memoryStore), undefined without one. */
  readonly memory: AgentMemory | undefined;
  /** The session's lane queue (SessionOptions.queueConfig), undefined without one. */
  readonly queue: SessionQueue | undefined;
  /** Snapshots and saves: `save()`, `snapshot()`, `saved`, `dirty`. */
  readonly persistence: SessionSaves;
  /** Verification reports and host-requested verification runs. */
  readonly verifications: SessionVerifications;
  /** Run admission (single flight), control and records: `start`, `cancel`, `list`, `get`, `current`. */
  readonly runs: SessionRunControl;

  constructor(
    readonly config: ResolvedSessionConfig,
    private readonly scope: SessionScope,
    restored?: RestoredState,
  ) {
    this.id = config.sessionId;
    this.key = sessionKey(config.ownerTenantId, config.sessionId);
    this.createdAtMs = restored?.createdAtMs ?? scope.hostEnv.now();
    this.lastActivityMs = scope.hostEnv.now();
    const kernel = buildSessionKernel(config, scope, restored, this);
    this.lifecycle = kernel.lifecycle;
    this.events = kernel.events;
    this.transcript = kernel.transcript;
    this.emit = kernel.emit;
    this.artifacts = kernel.artifacts;
    this.governance = kernel.governance;
    this.mcp = kernel.mcp;
    this.tasks = kernel.tasks;
    this.sandbox = kernel.sandbox;
    this.changes = kernel.changes;
    this.tools = kernel.tools;
    this.directCalls = kernel.directCalls;
    this.llm = kernel.llm;
    this.memory = kernel.memory;
    this.queue = kernel.queue;
    this.persistence = kernel.persistence;
    this.verifications = kernel.verifications;
    this.runs = kernel.runs;
  }

  /** The session's workspace (canonical path). */
  get workspace(): string {
    return this.config.workspace;
  }

  /** Note activity now. */
  touch(): void {
    this.lastActivityMs = this.scope.hostEnv.now();
  }

  /**
   * UTF-8 bytes of what the session's runs accumulate in memory: its transcript (as limits.maxTranscriptBytes
   * measures it) and its artifacts. limits.maxSessionBytesPerTenant counts them (beside the options and a fixed
   * overhead) when the session goes live and after each run.
   */
  contentBytes(): number {
    return messageBytes(this.transcript.messages) + this.artifacts.bytes;
  }

  /** A run ended: note the activity and re-measure what the session holds. */
  runEnded(): void {
    this.touch();
    this.scope.agent.services.sessionBytes?.resize(this.key, this, this.contentBytes());
  }

  /** Inject a host-supplied cluster event: subscribers see it and hooks observe it. */
  injectClusterEvent(
    type: 'budget_threshold_hit' | 'passivation_requested' | 'peer_invocation',
    payload: Record<string, unknown>,
  ): void {
    this.lifecycle.assertOpen();
    this.emit(this.runs.activeRunId, type, payload as never);
    this.governance.hooks.observe(
      type,
      { session_id: this.id, ...payload, labels: this.config.labels },
      { sessionId: this.id },
    );
  }

  /** Give the session up after another node took it over: stop work, save and publish nothing more. */
  async abandon(): Promise<void> {
    this.lifecycle.abandon();
    await this.close('lost');
  }

  /** Close: cancel in-flight work, wait for it to end, emit session_closed. Idempotent. */
  async close(reason = 'closed'): Promise<void> {
    await closeSessionParts(this, this.config, reason);
  }
}
