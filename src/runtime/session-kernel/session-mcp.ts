import type { McpServerConfig, McpServerConfigInput } from '../../protocol/mcp.js';
import type { HostEnv } from '../ports/host-env.js';
import { McpManager, type McpRefreshResult } from '../mcp/mcp-manager.js';
import type { CommandLauncher } from '../sandbox/sandbox.js';
import type { SessionLogger } from './session-services.js';
import type { SessionEmit } from './session-emitter.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import type { SingleFlight } from './single-flight.js';

/** What a session's MCP layers need from the session and the agent. */
export interface SessionMcpDeps {
  readonly sessionId: string;
  readonly workspace: string;
  readonly hostEnv: HostEnv;
  /** The agent-global MCP layer. */
  readonly globalMcp: McpManager;
  /** Bumped whenever the global layer's tools change. */
  globalMcpVersion(): number;
  /** Where the servers' stderr lines and notices go. */
  readonly logger: SessionLogger;
  readonly emit: SessionEmit;
  /** The active run, if any: MCP change events are tied to it. */
  readonly flight: SingleFlight;
  readonly lifecycle: SessionLifecycle;
  /** Starts the session's own stdio MCP servers in its sandbox. */
  readonly launcher?: CommandLauncher;
  /** May the session's own HTTP and SSE MCP servers be private addresses (its creator's outbound right). */
  readonly allowPrivate: boolean;
}

/**
 * A session's MCP layers: the global one, a child's view of its parent's, those the host attached and the
 * session's own servers (created on first use, their changes emitted as events). `version` changes whenever a
 * layer's tools may have changed, so the session's tools rebuild their registry.
 */
export class SessionMcp {
  private localMcp: McpManager | undefined;
  private ownVersion = 0;
  /** The own servers' configurations when the session's MCP layers were closed. */
  private closedOwnConfigs: McpServerConfig[] | undefined;
  private readonly inheritedMcp: McpManager[] = [];
  /** A child session's view of its parent's layers: visible, never closed here. */
  private readonly borrowedMcp: McpManager[] = [];

  constructor(private readonly deps: SessionMcpDeps) {}

  /** A counter that changes whenever the tools of any layer may have changed. */
  version(): string {
    return `${this.deps.globalMcpVersion()}:${this.ownVersion}`;
  }

  /** Every layer, outermost first: global, the parent's (a child's), inherited (host-supplied), then the session's own. */
  layers(): McpManager[] {
    return [this.deps.globalMcp, ...this.borrowedMcp, ...this.inheritedMcp, this.local];
  }

  /** The layers whose tools the session has now (its own only once created). */
  toolLayers(): McpManager[] {
    return [this.deps.globalMcp, ...this.borrowedMcp, ...this.inheritedMcp, ...(this.localMcp ? [this.localMcp] : [])];
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

  /** Add one of the session's own servers (SESSION_CLOSED once closed); the caller saves an autoSave session. */
  async add(input: McpServerConfigInput): Promise<{ toolCount: number }> {
    this.deps.lifecycle.assertOpen();
    return this.local.add(input);
  }

  /** Remove one of the session's own servers (its process group is killed); false when there is none of that name. */
  remove(name: string): Promise<boolean> {
    return this.local.remove(name);
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
  async restore(configs: readonly McpServerConfig[]): Promise<McpRefreshResult[]> {
    if (this.localMcp) return this.localMcp.registerAll(configs);
    const manager = this.newLocalManager();
    // Held at once, so a close during the restore still closes these servers.
    this.localMcp = manager;
    const results = await manager.registerAll(configs);
    this.watchLocal(manager);
    this.ownVersion += 1;
    return results;
  }

  /** Show one of the parent's MCP layers to this child session (its servers stay the parent's). */
  borrow(manager: McpManager): void {
    this.borrowedMcp.push(manager);
    this.ownVersion += 1;
  }

  /** Attach host-supplied MCP servers as a read-only inherited layer (from SessionOptions.mcpServers). */
  attachInherited(manager: McpManager): void {
    this.inheritedMcp.push(manager);
    this.ownVersion += 1;
  }

  /** Close the session's own and its inherited MCP managers (the host supplied them for this session only). */
  async close(): Promise<void> {
    // Closing empties the layer, but the snapshot saved after a close (shutdown, passivation, DELETE) must keep
    // the servers, so the session gets them back wherever it is restored.
    this.closedOwnConfigs ??= this.ownConfigs();
    await Promise.all([this.localMcp, ...this.inheritedMcp].map((m) => m?.close().catch(() => undefined)));
  }

  private newLocalManager(): McpManager {
    const { launcher, logger, sessionId } = this.deps;
    return new McpManager({
      source: 'session',
      now: () => this.deps.hostEnv.now(),
      defaultCwd: this.deps.workspace,
      onLog: (server, line) => logger.mcpLog(sessionId, server, line),
      ...(launcher ? { launcher } : {}),
      outbound: { allowPrivate: this.deps.allowPrivate },
    });
  }

  private watchLocal(manager: McpManager): void {
    const { emit, flight } = this.deps;
    manager.onChange((change) => {
      this.ownVersion += 1;
      emit(flight.runId, 'mcp_tools_changed', {
        server: change.server,
        reason: change.reason,
        tools: change.toolNames,
      });
    });
    manager.onConnectionChange((change) => {
      if (change.connected) emit(flight.runId, 'mcp_server_connected', { server: change.server });
      else emit(flight.runId, 'mcp_server_disconnected', { server: change.server, reason: change.reason });
    });
  }
}
