import type { TenantQuotas } from '../quotas/tenant-quotas.js';
import type { TenantSessionBytes } from '../quotas/tenant-session-bytes.js';
import type { CodeConfig } from '../../config/code-config.js';
import type { CheckpointStore } from '../../stores/checkpoint-store.js';
import type { SessionStore } from '../../stores/session-store.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import type { MemoryStores } from '../memory/memory-stores.js';
import type { SharedGovernance } from '../policy/shared-governance.js';
import type { HostEnv } from '../ports/host-env.js';
import type { SessionOwnership } from '../ports/session-ownership.js';
import type { ServerSandbox } from '../sandbox/session-commands.js';
import type { SessionEventObserver } from '../session/session-emitter.js';
import type { AnyToolDefinition } from '../tools/define-tool.js';

/** What the agent is built from (see createRuntimeContext). */
export interface AgentDeps {
  config: CodeConfig;
  store: SessionStore;
  hostEnv: HostEnv;
  tools: readonly AnyToolDefinition[];
  workspaceRoots: readonly string[];
  providerFor(name: string): LlmProvider;
  governance: SharedGovernance;
  /** Loop checkpoints (memory, file or Redis); `durable` says whether a resume can find them after a restart. */
  checkpoints: CheckpointStore;
  /** The agent-global MCP layer (from CodeConfig). */
  mcp: McpManager;
  /** Session ownership: local on one node, Redis leases in a cluster. */
  ownership: SessionOwnership;
  /** Long-term memory stores of `memoryStore` sessions (absent: both kinds in this process). */
  memoryStores?: MemoryStores;
  /** Where model-chosen commands run (absent: unsandboxed, for embedders that run no commands). */
  sandbox?: ServerSandbox;
  onMcpLog?(sessionId: string | undefined, server: string, line: string): void;
  onPersistenceError?(sessionId: string, error: unknown): void;
  /** Sees every event any session emits (the server's metrics). */
  onSessionEvent?: SessionEventObserver;
  /** Per-tenant quotas (open sessions, runs, stored bytes); absent: none. */
  quotas?: TenantQuotas;
  /** limits.maxSessionBytesPerTenant: the bytes each tenant's open sessions hold here; absent: unbounded. */
  sessionBytes?: TenantSessionBytes;
}
