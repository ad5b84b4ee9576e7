import type { RunRecord } from '../../protocol/run-record.js';
import type { ConfirmationInheritance } from '../../protocol/subagent-task.js';
import type { AgentDefinition } from '../agent-definitions/agent-definition.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import type { HostEnv } from '../ports/host-env.js';
import type { ResolvedSessionConfig } from '../session-kernel/resolved-session-config.js';
import type { SessionEventObserver } from '../session-kernel/session-emitter.js';
import type { SessionGovernanceParts } from '../session-kernel/session-governance-factory.js';
import type { SkillDefinition } from '../skills/skill-definition.js';
import type { ProviderCallLane } from '../ports/provider-call-lane.js';

/** What a child session is made for: a delegated agent (`task`) or a skill (`Skill`). */
export interface ChildSpec {
  readonly kind: 'task' | 'skill';
  /** The delegated agent (a `task`), or the agent a skill runs as (`general`). */
  readonly agent: AgentDefinition;
  /** The skill a `Skill` child runs: its body is the role, its allowed-tools the only grants. */
  readonly skill?: SkillDefinition;
  /** Tool rounds of the child's run (task `max_steps`). */
  readonly maxSteps?: number;
  readonly inheritance: ConfirmationInheritance;
  /** Sees every event the child emits (progress and forwarded confirmations on the parent's stream). */
  readonly observe: SessionEventObserver;
}

/** The parent as the child spawner reads it. */
export interface ChildParent {
  readonly config: ResolvedSessionConfig;
  readonly hostEnv: HostEnv;
  /** The parent's governance: children share its budget, hooks, redactor and (inherit_parent) confirmations. */
  governanceParts(): SessionGovernanceParts;
  /** The parent's MCP layers, outermost first (the global one first): children see them without owning them. */
  mcpLayers(): McpManager[];
  /** The parent's generate lane (queueConfig), which its children's provider requests share; absent without a queue. */
  readonly providerLane: ProviderCallLane | undefined;
}

/** A child's run as its task sees it. */
export interface ChildRun {
  readonly runId: string;
  readonly done: Promise<RunRecord>;
}

/** A live child session. */
export interface ChildSession {
  readonly id: string;
  /** Start the child's run; aborting `signal` cancels it. */
  run(input: string, signal: AbortSignal): ChildRun;
  /** Close the child and drop it from the server (its task ended and was dropped, or the parent closed). */
  close(): Promise<void>;
}

/** Builds and registers child sessions (the agent implements it). */
export interface ChildSpawner {
  spawn(parent: ChildParent, spec: ChildSpec): Promise<ChildSession>;
}

/** What a child session gets from its parent besides its configuration. */
export interface ChildLink {
  readonly governance: SessionGovernanceParts;
  /** The parent's MCP layers below the global one: visible to the child, never closed by it. */
  readonly borrowedMcp: readonly McpManager[];
  readonly observe: SessionEventObserver;
  /** The parent's generate lane: the child's provider requests wait in it (generateConcurrency bounds them all). */
  readonly providerLane?: ProviderCallLane;
}
