import type { ForkOrigin } from '../../protocol/fork.js';
import type { WorkspaceDirectory } from '../workspace/workspace-directory.js';
import type { SkippedFile } from '../prompt/agents-md.js';
import type { AgentDefinition } from '../agent-definitions/agent-definition.js';
import type { AgentRegistry } from '../agent-definitions/agent-registry.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import type { ConfirmationPolicy, PermissionPolicy } from '../../protocol/governance.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import type { SessionLabels } from '../../protocol/session-snapshot.js';
import type { GovernanceSnapshot } from '../invocation/invocation-context.js';
import type { ResolvedModel } from '../invocation/llm-invoker.js';
import type { WebSettings } from '../web/web-access.js';

/** Retention bounds a session runs with. */
export interface SessionRetention {
  readonly maxRuns: number;
  readonly maxEventsPerRun: number;
  /** UTF-8 bytes of payload (compact JSON) a run's retained events may hold (retentionLimits.maxEventBytesPerRun); absent: no byte bound. */
  readonly maxEventBytesPerRun?: number;
  readonly maxTraceEvents: number;
  /** Artifacts kept (limits.maxArtifactsPerSession); the oldest are evicted first. */
  readonly maxArtifacts: number;
  /** Bytes of artifact content kept (limits.maxArtifactBytesPerSession); the oldest are evicted first. */
  readonly maxArtifactBytes: number;
  /** Terminal subagent tasks kept (retentionLimits.maxTerminalSubagentTasks, limits.maxTerminalSubagentTasks). */
  readonly maxTerminalSubagentTasks: number;
}

/** The one value the session builder yields; later layers never re-decide a choice made here. */
export interface ResolvedSessionConfig {
  readonly sessionId: string;
  readonly ownerTenantId: string;
  readonly labels: SessionLabels;
  readonly workspace: string;
  /** The model runs use; the one field that changes after the build (the `/model provider/model` command switches it). */
  model: ResolvedModel;
  readonly governance: GovernanceSnapshot;
  /** Whether runs plan first (SessionOptions.planningMode, else the legacy `planning` flag): `auto` lets pre-analysis decide. */
  readonly planningMode: 'auto' | 'enabled' | 'disabled';
  /** Runs extract a goal, report progress on it and tell when it is achieved (SessionOptions.goalTracking). */
  readonly goalTracking: boolean;
  readonly permissionPolicy: PermissionPolicy;
  /**
   * The operator's policy (config default, else the built-in one) bounding `permissionPolicy`: set when the
   * session's creator gave its own policy without the host_direct scope, so it could only tighten.
   */
  readonly permissionFloor?: PermissionPolicy;
  /**
   * Agent bounds on `permissionPolicy` and the floor, outermost first (the stricter verdict wins): the
   * session's agent's permissions; for a child session also its parent's bounds and the delegated agent's
   * or the skill's.
   */
  readonly permissionBounds: readonly PermissionPolicy[];
  readonly confirmationPolicy: ConfirmationPolicy;
  readonly systemPrompt: string;
  /**
   * The pinned workspace directory every file tool and command goes through (held open only while used);
   * a delegated child shares its parent's.
   */
  readonly workspaceDir: WorkspaceDirectory;
  /** Set when this restore pinned the workspace again (announced as a `workspace_warning` event). */
  readonly workspaceRepinned?: string;
  /** Instruction files (AGENTS.md) not read because they lead outside the confinement root (each announced as a `workspace_warning` event). */
  readonly workspaceSkipped?: readonly SkippedFile[];
  /** The workspace's AGENTS.md as loaded for the system prompt (children's prompts carry it too). */
  readonly agentsMd: string;
  /** The session that delegated this one (a child session of `task`, `parallel_task` or `Skill`); null otherwise. */
  readonly parentSessionId: string | null;
  /** How deep in delegation this session is: 0 for a session a client created, parent + 1 for a child. */
  readonly delegationDepth: number;
  readonly autoSave: boolean;
  readonly retention: SessionRetention;
  /** Where snapshots and checkpoints go: `file` = the server's durable backend (file store, or Redis); `memory` = this process only. */
  readonly sessionStore: 'file' | 'memory';
  /** `default`: secret redaction of tool output; `none`: no redaction (chosen by a host_direct caller). */
  readonly securityProvider: 'default' | 'none';
  /** The creator had host_direct, so webhook URLs in the options may name private addresses (kept in snapshots). */
  readonly outboundPrivateGrant: boolean;
  /** Webhook URLs in the options (hooks, budgetHost) may name private addresses: the grant, or config outbound.allow_private_networks. */
  readonly outboundAllowPrivate: boolean;
  /** Config `web` (the operator's): web_fetch's and web_search's private-network switch and search backends. */
  readonly web: WebSettings;
  /**
   * How the session's commands run: `hostCommands` = the creator had host_direct (without a working sandbox
   * only such sessions run commands, on the host; kept in snapshots), the network granted, SessionOptions.commandEnv.
   */
  readonly commands: {
    readonly hostCommands: boolean;
    readonly network: 'none' | 'allowed';
    readonly env: Readonly<Record<string, string>>;
  };
  /** Long-term memory (SessionOptions.memoryStore): which store and namespace, inside the owner's tenant; null without one. */
  readonly memory: { readonly type: 'file' | 'memory'; readonly namespace: string } | null;
  /** The built-in or registered agent the session runs as (SessionOptions.agent); null for an ordinary session. */
  readonly agent: string | null;
  /** That agent's definition: its prompt is in `systemPrompt`, its permissions bound every call (the stricter verdict wins). */
  readonly agentDefinition?: AgentDefinition;
  /** The session's agents by name (built-ins, agent_dirs, agentDirs, POST .../agents/dirs): what `task` delegates to. */
  readonly agents: AgentRegistry;
  /** The session's skills (builtinSkills, skill_dirs, skillDirs, inlineSkills, POST .../skills): what search_skills searches. */
  readonly skills: SkillRegistry;
  /** Non-fatal notes about the options (null when none), as the seed's `session.initWarning`. */
  readonly initWarning: string | null;
  /** The options as given (minus `resume`), kept for snapshots. */
  readonly options: SessionOptions;
  /** Set on a fork: the session and point it was forked from (kept in snapshots). */
  readonly forkedFrom?: ForkOrigin;
}
