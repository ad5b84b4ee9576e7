import type { Telemetry } from '../ports/telemetry.js';
import type { RunWebhooks } from '../ports/run-webhooks.js';
import type { ChangeCapture } from '../changes/change-capture.js';
import type { CodeConfig } from '../../config/code-config.js';
import type { ConfirmationInheritance } from '../../protocol/subagent-task.js';
import type { CheckpointStore } from '../../stores/checkpoint-store.js';
import type { AttachmentStore, ToolImageStore } from '../ports/attachment-store.js';
import type { SessionStore } from '../../stores/session-store.js';
import type { CommandCatalog } from '../commands/command-catalog.js';
import type { ChildLink, ChildSpawner } from '../delegation/child-session.js';
import type { DelegationLimits } from '../delegation/session-delegation.js';
import type { ResolvedModel } from '../invocation/llm-invoker.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import type { MemoryStores } from '../memory/memory-stores.js';
import type { SharedGovernance } from '../policy/shared-governance.js';
import type { HostEnv } from '../ports/host-env.js';
import type { SessionOwnership } from '../ports/session-ownership.js';
import type { TenantQuotas } from '../quotas/tenant-quotas.js';
import type { TenantSessionBytes } from '../quotas/tenant-session-bytes.js';
import type { ServerSandbox } from '../sandbox/session-commands.js';
import type { AnyToolDefinition } from '../tools/define-tool.js';
import type { SessionEventObserver } from './session-emitter.js';

/** Where the agent and its sessions report what only an operator reads (the server's pino logger). */
export interface SessionLogger {
  /** A background save (autoSave, passivation, shutdown, a resume) failed; the session emitted persistence_failed. */
  persistenceFailed(sessionId: string, error: unknown): void;
  /** A line an MCP server wrote to stderr, or a notice about it; `sessionId` is undefined for a global server. */
  mcpLog(sessionId: string | undefined, server: string, line: string): void;
}

/** The services the agent and every session it builds share: built once by createRuntimeContext. */
export interface SessionServices {
  config: CodeConfig;
  store: SessionStore;
  /** Loop checkpoints (memory, file or Redis); `durable` says whether a resume can find them after a restart. */
  checkpoints: CheckpointStore;
  /** Where the sessions' attachments live (absent: a run's attachment references resolve to placeholders). */
  attachments?: AttachmentStore;
  /** Where the images the model's read calls return are stored (absent: read returns no images). */
  toolImages?: ToolImageStore;
  hostEnv: HostEnv;
  tools: readonly AnyToolDefinition[];
  workspaceRoots: readonly string[];
  providerFor(name: string): LlmProvider;
  /** Agent-wide governance services every session shares. */
  governance: SharedGovernance;
  /** The agent-global MCP layer (from CodeConfig). */
  mcp: McpManager;
  /** Session ownership: local on one node, Redis leases in a cluster; where session events are published. */
  ownership: SessionOwnership;
  logger: SessionLogger;
  /** Long-term memory stores of `memoryStore` sessions (absent: both kinds in this process). */
  memoryStores?: MemoryStores;
  /** Where model-chosen commands run (absent: unsandboxed, for embedders that run no commands). */
  sandbox?: ServerSandbox;
  /** Change capture of runs (docs/changes.md); absent: runs capture nothing. */
  changes?: ChangeCapture;
  /** Sees every event any session emits (the server's metrics). */
  onSessionEvent?: SessionEventObserver;
  /** Traces of runs, provider and tool calls (docs/operations.md "Traces"); absent: none. */
  telemetry?: Telemetry;
  /** Run webhooks (docs/webhooks.md); absent: runs have none. */
  webhooks?: RunWebhooks;
  /** Per-tenant quotas (open sessions, runs, stored bytes); absent: none. */
  quotas?: TenantQuotas;
  /** limits.maxSessionBytesPerTenant: the bytes each tenant's open sessions hold here; absent: unbounded. */
  sessionBytes?: TenantSessionBytes;
}

/** What the agent adds to its services for the sessions it builds: one object per agent, shared by them. */
export interface AgentSessionServices {
  readonly services: SessionServices;
  /** The global MCP layer's version (sessions rebuild their tool lists when it changes). */
  mcpVersion(): number;
  readonly memoryStores: MemoryStores;
  /** Config `commands` and the providers, for the sessions' slash commands. */
  readonly commandCatalog: CommandCatalog;
  /** Builds the child sessions of the sessions' tasks (absent: the delegating tools answer that delegation is off). */
  readonly children: ChildSpawner | undefined;
  /** Delegation bounds and the default confirmationInheritance of the model's tasks. */
  readonly delegation: { limits: DelegationLimits; inheritance: ConfirmationInheritance; keepFinishedChildren: number };
  /** A `provider/model` id as a model with its provider client (`/model` switches to it). */
  resolveModel(modelId: string, field: string, temperature: number | undefined): ResolvedModel;
}

/**
 * Where one session lives: the agent's services, the HostEnv it runs with (the agent's, or a replay one) and the
 * stores it saves to (the server's, or this process's for `sessionStore: {type: 'memory'}`). Sessions of the
 * same kind share one.
 */
export interface SessionScope {
  readonly agent: AgentSessionServices;
  readonly hostEnv: HostEnv;
  readonly store: SessionStore;
  readonly checkpoints: CheckpointStore;
  /** Set for a child session: what it shares with its parent. */
  readonly childOf?: ChildLink | undefined;
}
