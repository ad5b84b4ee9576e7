import type { PermissionPolicy } from '../../protocol/governance.js';
import type { McpServerConfig } from '../../protocol/mcp.js';
import type { HostEnv } from '../ports/host-env.js';
import type { ToolInvokerDeps } from '../invocation/tool-call-state.js';
import { ToolInvoker } from '../invocation/tool-invoker.js';
import type { LlmToolSpec } from '../llm/llm-provider.js';
import { layerMcpTools } from '../mcp/layered-mcp-tools.js';
import { McpManager, type McpRefreshResult } from '../mcp/mcp-manager.js';
import { isToolFullyDeniedBounded } from '../policy/permission-policy.js';
import type { CommandLauncher } from '../sandbox/sandbox.js';
import type { AnyToolDefinition } from '../tools/define-tool.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import { createSkillTools } from '../tools/builtin-tools.js';
import { ToolRegistry, toolSpec } from '../tools/tool-registry.js';
import type { SessionEmit } from './session-emitter.js';

/** What a session's tool set needs from the session and the agent. */
export interface SessionToolsDeps {
  readonly sessionId: string;
  readonly workspace: string;
  readonly permissionPolicy: PermissionPolicy;
  readonly permissionFloor: PermissionPolicy | undefined;
  /** The session's agent bounds (tools one of them denies for every argument are hidden too). */
  readonly agentPermissions: readonly PermissionPolicy[];
  readonly hostEnv: HostEnv;
  /** The built-in tools every session has. */
  readonly builtins: readonly AnyToolDefinition[];
  /** The session's skills: while it has any, `search_skills` is one of its tools. */
  readonly skills?: SkillRegistry;
  /** The agent-global MCP layer. */
  readonly globalMcp: McpManager;
  /** Bumped whenever the global layer's tools change. */
  globalMcpVersion(): number;
  onMcpLog?(server: string, line: string): void;
  readonly emit: SessionEmit;
  /** The active run's id, if any: MCP change events are tied to it. */
  activeRunId(): string | undefined;
  /** Starts the session's own stdio MCP servers in its sandbox. */
  readonly mcpLauncher?: CommandLauncher;
  /** May the session's own HTTP and SSE MCP servers be private addresses (its creator's outbound right). */
  readonly mcpAllowPrivate: boolean;
  /** The rest of the tool invoker's services (governance, artifacts, after-execute), asked for when it is first built. */
  invokerDeps(): ToolInvokerDeps;
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

function builtinRegistry(builtins: readonly AnyToolDefinition[]): ToolRegistry {
  let registry = builtinRegistries.get(builtins);
  if (registry === undefined) {
    registry = new ToolRegistry(builtins);
    builtinRegistries.set(builtins, registry);
  }
  return registry;
}

/**
 * A session's tools: the built-ins and its MCP layers (global, inherited from the host, its own), the
 * registry over them (rebuilt when a layer changes; later layers shadow earlier), the specs the model sees
 * and the one tool invoker every call of the session goes through.
 */
export class SessionTools {
  private registryCache: ToolRegistry | undefined;
  private registryVersion = '';
  private mcpVersion = 0;
  private localMcp: McpManager | undefined;
  /** The own servers' configurations when the session's MCP layers were closed. */
  private closedOwnConfigs: McpServerConfig[] | undefined;
  private readonly inheritedMcp: McpManager[] = [];
  /** A child session's view of its parent's layers: visible, never closed here. */
  private readonly borrowedMcp: McpManager[] = [];
  private specsCache: readonly LlmToolSpec[] | undefined;
  private invokerCache: ToolInvoker | undefined;
  private skillToolsCache: AnyToolDefinition[] | undefined;

  constructor(private readonly deps: SessionToolsDeps) {}

  /** The current registry: built-ins, then global, inherited and session servers. */
  get registry(): ToolRegistry {
    const skills = this.deps.skills;
    const version = `${this.deps.globalMcpVersion()}:${this.mcpVersion}:${skills && skills.size > 0 ? skills.version() : '-'}`;
    if (!this.registryCache || this.registryVersion !== version) {
      const layers = [this.deps.globalMcp, ...this.borrowedMcp, ...this.inheritedMcp, ...(this.localMcp ? [this.localMcp] : [])];
      const skillTools = skills && skills.size > 0 ? (this.skillToolsCache ??= createSkillTools(skills)) : [];
      const added = [...skillTools, ...layerMcpTools(layers)];
      this.registryCache = added.length === 0 ? builtinRegistry(this.deps.builtins) : new ToolRegistry([...this.deps.builtins, ...added]);
      this.registryVersion = version;
      this.specsCache = undefined;
    }
    return this.registryCache;
  }

  /** Every MCP layer, outermost first: global, the parent's (a child's), inherited (host-supplied), then the session's own. */
  layers(): McpManager[] {
    return [this.deps.globalMcp, ...this.borrowedMcp, ...this.inheritedMcp, this.local];
  }

  /** The session's own MCP servers (created on first use); their changes are emitted as events. */
  get local(): McpManager {
    if (!this.localMcp) {
      const manager = this.newLocalManager();
      this.watchLocal(manager);
      this.localMcp = manager;
    }
    return this.localMcp;
  }

  /** The configurations of the session's own servers, in order (its snapshot stores them; a restore re-registers them). */
  ownConfigs(): McpServerConfig[] {
    return this.closedOwnConfigs ?? this.localMcp?.configs() ?? [];
  }

  /**
   * Re-register the session's own servers from its snapshot, before the session is live. A server that cannot
   * start stays registered with its error (GET .../mcp shows it). The layer is watched only afterwards: a
   * restore brings back what the session had, so it emits no MCP events and leaves the session unchanged.
   */
  async restoreLocal(configs: readonly McpServerConfig[]): Promise<McpRefreshResult[]> {
    if (this.localMcp) return this.localMcp.registerAll(configs);
    const manager = this.newLocalManager();
    // Held at once, so a close during the restore still closes these servers.
    this.localMcp = manager;
    const results = await manager.registerAll(configs);
    this.watchLocal(manager);
    this.mcpVersion += 1;
    return results;
  }

  private newLocalManager(): McpManager {
    const launcher = this.deps.mcpLauncher;
    return new McpManager({
      source: 'session',
      now: () => this.deps.hostEnv.now(),
      defaultCwd: this.deps.workspace,
      onLog: (server, line) => this.deps.onMcpLog?.(server, line),
      ...(launcher ? { launcher } : {}),
      outbound: { allowPrivate: this.deps.mcpAllowPrivate },
    });
  }

  private watchLocal(manager: McpManager): void {
    const { emit, activeRunId } = this.deps;
    manager.onChange((change) => {
      this.mcpVersion += 1;
      emit(activeRunId(), 'mcp_tools_changed', { server: change.server, reason: change.reason, tools: change.toolNames });
    });
    manager.onConnectionChange((change) => {
      if (change.connected) emit(activeRunId(), 'mcp_server_connected', { server: change.server });
      else emit(activeRunId(), 'mcp_server_disconnected', { server: change.server, reason: change.reason });
    });
  }

  /** Show one of the parent's MCP layers to this child session (its servers stay the parent's). */
  borrow(manager: McpManager): void {
    this.borrowedMcp.push(manager);
    this.mcpVersion += 1;
  }

  /** Attach host-supplied MCP servers as a read-only inherited layer. */
  attachInherited(manager: McpManager): void {
    this.inheritedMcp.push(manager);
    this.mcpVersion += 1;
  }

  /** Tool specs the model sees: tools denied for every argument are hidden. */
  modelSpecs(): readonly LlmToolSpec[] {
    // Read the registry first: a changed layer (MCP, skills) rebuilds it and clears the cached specs.
    const registry = this.registry;
    if (this.specsCache === undefined) {
      const tools = registry.list();
      const visible = tools.filter((tool) => !isToolFullyDeniedBounded(this.deps.permissionPolicy, this.deps.permissionFloor, tool.name, this.deps.agentPermissions));
      // Sessions that see every tool of a shared registry share its spec list too (and so its request JSON).
      this.specsCache = visible.length === tools.length ? allSpecs(registry) : visible.map(toolSpec);
    }
    return this.specsCache;
  }

  /** The session's one tool invoker (built on first use); it always reads the current registry. */
  get invoker(): ToolInvoker {
    this.invokerCache ??= new ToolInvoker(this.deps.invokerDeps(), () => this.registry);
    return this.invokerCache;
  }

  /** Close the session's own and its inherited MCP managers (the host supplied them for this session only). */
  async closeMcp(): Promise<void> {
    // Closing empties the layer, but the snapshot saved after a close (shutdown, passivation, DELETE) must keep
    // the servers, so the session gets them back wherever it is restored.
    this.closedOwnConfigs ??= this.ownConfigs();
    await Promise.all([this.localMcp, ...this.inheritedMcp].map((m) => m?.close().catch(() => undefined)));
  }
}
