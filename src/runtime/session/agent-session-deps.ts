import type { TenantQuotas } from '../quotas/tenant-quotas.js';
import type { TenantSessionBytes } from '../quotas/tenant-session-bytes.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { RunRecord, Usage } from '../../protocol/run-record.js';
import type { ExternalTaskSnapshot } from '../../protocol/queue.js';
import type { Artifact, SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { VerificationReport } from '../../protocol/verification.js';
import type { CheckpointStore } from '../../stores/checkpoint-store.js';
import type { SessionStore } from '../../stores/session-store.js';
import type { CommandCatalog } from '../commands/command-catalog.js';
import type { HostEnv } from '../ports/host-env.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import type { MemoryStores } from '../memory/memory-stores.js';
import type { SharedGovernance } from '../policy/shared-governance.js';
import type { ServerSandbox } from '../sandbox/session-commands.js';
import type { SessionOwnership } from '../ports/session-ownership.js';
import type { AnyToolDefinition } from '../tools/define-tool.js';
import type { SessionEventObserver } from './session-emitter.js';
import type { ConfirmationInheritance, SubagentTaskSnapshot } from '../../protocol/subagent-task.js';
import type { ChildLink, ChildSpawner } from '../delegation/child-session.js';
import type { DelegationLimits } from '../delegation/session-delegation.js';
import type { ResolvedModel } from '../invocation/llm-invoker.js';

/** What a session needs from the agent that owns it. */
export interface AgentSessionDeps {
  hostEnv: HostEnv;
  store: SessionStore;
  tools: readonly AnyToolDefinition[];
  /** Agent-wide governance services every session shares. */
  governance: SharedGovernance;
  /** Where loop checkpoints go after every tool round. */
  checkpoints: CheckpointStore;
  /** The agent-global MCP layer and its change counter. */
  mcp: SharedMcp;
  /** Who owns the session (a Redis lease in a cluster) and where its events are published. */
  ownership: SessionOwnership;
  /** Called when a background save fails (logged by the agent). */
  onPersistenceError?(sessionId: string, error: unknown): void;
  /** Sees every event the session emits (the server's metrics). */
  onEvent?: SessionEventObserver | undefined;
  /** Long-term memory stores a `memoryStore` session uses (absent: both kinds in this process). */
  memoryStores?: MemoryStores | undefined;
  /** Where the session's model-chosen commands run (absent: unsandboxed). */
  sandbox?: ServerSandbox | undefined;
  /** Builds the child sessions of the session's tasks (absent: the delegating tools answer that delegation is off). */
  children?: ChildSpawner | undefined;
  /** Delegation bounds and the default confirmationInheritance of the model's tasks. */
  delegation?: { limits: DelegationLimits; inheritance: ConfirmationInheritance; keepFinishedChildren: number } | undefined;
  /** Config `commands` and the providers, for the session's slash commands (absent: built-ins only). */
  commandCatalog?: CommandCatalog | undefined;
  /** A `provider/model` id as a model with its provider client (`/model` switches to it); absent: no switching. */
  resolveModel?(modelId: string, field: string, temperature: number | undefined): ResolvedModel;
  /** Set for a child session: what it shares with its parent. */
  childOf?: ChildLink | undefined;
  /** The tenants' quotas: runs are admitted and stored bytes counted against the session's tenant (absent: none). */
  quotas?: TenantQuotas | undefined;
  /** limits.maxSessionBytesPerTenant: the session's content bytes are re-measured after each run (absent: none). */
  sessionBytes?: TenantSessionBytes | undefined;
}

/** The agent-global MCP layer as sessions see it. */
export interface SharedMcp {
  readonly global: McpManager;
  /** Bumped whenever the global layer's tools change. */
  version(): number;
  onLog?(sessionId: string, server: string, line: string): void;
}

/** State restored from a snapshot. */
export interface RestoredState {
  messages: ChatMessage[];
  usage: Usage;
  createdAtMs: number;
  generation: number;
  runs: RunRecord[];
  artifacts: Artifact[];
  trace: SessionSnapshotV1['trace_events'];
  verifications: VerificationReport[];
  subagentTasks: SubagentTaskSnapshot[];
  sessionSequence: number;
  /** External tasks pending when the snapshot was taken; the restored queue settles them as lost (run_lost). */
  externalTasks?: ExternalTaskSnapshot[];
  /** "Allow always" grant keys the session held when it was saved (absent in older snapshots: none). */
  permissionGrants?: readonly string[];
}
