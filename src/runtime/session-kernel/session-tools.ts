import type { SessionChanges } from '../changes/session-changes.js';
import type { PermissionPolicy } from '../../protocol/governance.js';
import type { ToolInvokerDeps } from '../invocation/tool-call-state.js';
import { ToolInvoker } from '../invocation/tool-invoker.js';
import type { LlmToolSpec } from '../llm/llm-provider.js';
import { layerMcpTools } from '../mcp/layered-mcp-tools.js';
import { isToolFullyDeniedBounded } from '../policy/permission-policy.js';
import type { SessionDelegation } from '../delegation/session-delegation.js';
import type { SessionQueue } from '../queue/session-queue.js';
import type { SessionCommands } from '../sandbox/session-commands.js';
import type { FileOwner } from '../workspace/workspace-files.js';
import type { AnyToolDefinition, ToolImages } from '../tools/define-tool.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import { createSkillTools } from '../tools/builtin-tools.js';
import { ToolRegistry, toolSpec } from '../tools/tool-registry.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionArtifacts } from './session-artifacts.js';
import type { SessionGovernanceAccess } from './session-governance-access.js';
import type { SessionMcp } from './session-mcp.js';
import type { VerificationReports } from './verification-reports.js';

/** What a session's tool set needs from the session and the agent. */
export interface SessionToolsDeps {
  readonly permissionPolicy: PermissionPolicy;
  readonly permissionFloor: PermissionPolicy | undefined;
  /** The session's agent bounds (tools one of them denies for every argument are hidden too). */
  readonly agentPermissions: readonly PermissionPolicy[];
  /** The built-in tools every session has (`ask_user` among them only when the session offers it). */
  readonly builtins: readonly AnyToolDefinition[];
  /** The session's skills: while it has any, `search_skills` is one of its tools. */
  readonly skills?: SkillRegistry;
  /** The session's MCP layers, whose tools come after the built-ins (later layers shadow earlier). */
  readonly mcp: SessionMcp;
  /** What the tool invoker is built from, on the first call. */
  readonly invoker: ToolInvokerSource;
}

/** The parts of the session the tool invoker uses (its ToolInvokerDeps are made from them on first use). */
export interface ToolInvokerSource {
  readonly config: ResolvedSessionConfig;
  readonly governance: SessionGovernanceAccess;
  readonly artifacts: SessionArtifacts;
  /** Verification reports: a model's bash call covering a preset attaches one (afterExecute). */
  readonly reports: VerificationReports;
  readonly commands: SessionCommands;
  /** A root server's sandbox.run_as: it owns what the file tools create, so its commands can edit it. */
  readonly fileOwner: FileOwner | undefined;
  readonly delegation: SessionDelegation;
  readonly queue: SessionQueue | undefined;
  /** Where the model's read calls put the images they return (absent: no attachment store). */
  readonly images?: ToolImages;
  /** The session's change capture (top-level sessions of a server with one). */
  readonly changes?: SessionChanges | undefined;
}

// Registries are immutable: sessions with nothing but the built-ins (no skills, no MCP tools) share one.
const builtinRegistries = new WeakMap<readonly AnyToolDefinition[], ToolRegistry>();

const registrySpecs = new WeakMap<ToolRegistry, readonly LlmToolSpec[]>();

/** The specs of every tool of a registry, one list per registry. */
function allSpecs(registry: ToolRegistry): readonly LlmToolSpec[] {
  let specs = registrySpecs.get(registry);
  if (specs === undefined) {
    specs = registry.specs();
    registrySpecs.set(registry, specs);
  }
  return specs;
}

const withoutQuestions = new WeakMap<readonly AnyToolDefinition[], readonly AnyToolDefinition[]>();

/**
 * The built-ins a session offers: without the tools that ask the user (`ask_user`) unless a surface can
 * answer them (SessionOptions.askUser). One list per built-in list, so such sessions share a registry too.
 */
export function offeredBuiltins(
  builtins: readonly AnyToolDefinition[],
  askUser: boolean,
): readonly AnyToolDefinition[] {
  if (askUser) return builtins;
  let offered = withoutQuestions.get(builtins);
  if (offered === undefined) {
    offered = builtins.filter((tool) => !tool.asksUser);
    withoutQuestions.set(builtins, offered);
  }
  return offered;
}

function builtinRegistry(builtins: readonly AnyToolDefinition[]): ToolRegistry {
  let registry = builtinRegistries.get(builtins);
  if (registry === undefined) {
    registry = new ToolRegistry(builtins);
    builtinRegistries.set(builtins, registry);
  }
  return registry;
}

/**
 * A session's tools: the built-ins, its skills' tools and its MCP layers' tools, the registry over them
 * (rebuilt when a layer changes; later layers shadow earlier), the specs the model sees and the one tool
 * invoker every call of the session goes through.
 */
export class SessionTools {
  private registryCache: ToolRegistry | undefined;
  private registryVersion = '';
  private specsCache: readonly LlmToolSpec[] | undefined;
  private invokerCache: ToolInvoker | undefined;
  private skillToolsCache: AnyToolDefinition[] | undefined;

  constructor(private readonly deps: SessionToolsDeps) {}

  /** The current registry: built-ins, then global, inherited and session servers. */
  get registry(): ToolRegistry {
    const { skills, mcp } = this.deps;
    const version = `${mcp.version()}:${skills && skills.size > 0 ? skills.version() : '-'}`;
    if (!this.registryCache || this.registryVersion !== version) {
      const skillTools = skills && skills.size > 0 ? (this.skillToolsCache ??= createSkillTools(skills)) : [];
      const added = [...skillTools, ...layerMcpTools(mcp.toolLayers())];
      this.registryCache =
        added.length === 0 ? builtinRegistry(this.deps.builtins) : new ToolRegistry([...this.deps.builtins, ...added]);
      this.registryVersion = version;
      this.specsCache = undefined;
    }
    return this.registryCache;
  }

  /** True when the session has a tool of this name. */
  has(name: string): boolean {
    return this.registry.get(name) !== undefined;
  }

  /** Tool specs the model sees: tools denied for every argument are hidden. */
  modelSpecs(): readonly LlmToolSpec[] {
    // Read the registry first: a changed layer (MCP, skills) rebuilds it and clears the cached specs.
    const registry = this.registry;
    if (this.specsCache === undefined) {
      const tools = registry.list();
      const visible = tools.filter(
        (tool) =>
          !isToolFullyDeniedBounded(
            this.deps.permissionPolicy,
            this.deps.permissionFloor,
            tool.name,
            this.deps.agentPermissions,
          ),
      );
      // Sessions that see every tool of a shared registry share its spec list too (and so its request JSON).
      this.specsCache = visible.length === tools.length ? allSpecs(registry) : visible.map(toolSpec);
    }
    return this.specsCache;
  }

  /** The session's one tool invoker (built on first use); it always reads the current registry. */
  get invoker(): ToolInvoker {
    this.invokerCache ??= new ToolInvoker(invokerDeps(this.deps.invoker), () => this.registry);
    return this.invokerCache;
  }
}

/** The tool invoker's services, from the session's parts. */
function invokerDeps(source: ToolInvokerSource): ToolInvokerDeps {
  const { artifacts, reports, config, fileOwner, queue } = source;
  return {
    governance: source.governance.parts().governance,
    storeArtifact: (content, toolCallId, toolName) => artifacts.store(content, toolCallId, toolName),
    afterExecute: (call, args, result, startedAtMs, ctx) =>
      reports.attachPresetReport(call, args, result, startedAtMs, ctx),
    commands: source.commands,
    workspace: config.workspaceDir,
    ...(fileOwner ? { fileOwner } : {}),
    // The web tools' access: a reference to the operator's settings, built with the invoker (first call).
    web: { settings: config.web },
    delegation: source.delegation,
    ...(queue ? { queue } : {}),
    ...(source.images ? { images: source.images } : {}),
    ...(source.changes ? { changes: source.changes } : {}),
  };
}
