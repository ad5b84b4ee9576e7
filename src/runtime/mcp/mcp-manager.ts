import type { OutboundFetchOptions } from '../outbound/outbound-fetch.js';
import { CodeError } from '../../errors.js';
import { formatZodIssues, zodFieldIssues } from '../../protocol/format-zod-issues.js';
import {
  McpServerConfigSchema,
  type McpServerConfig,
  type McpServerConfigInput,
  type McpServerSource,
  type McpServerStatus,
} from '../../protocol/mcp.js';
import type { AnyToolDefinition } from '../tools/define-tool.js';
import { McpConnection } from './mcp-connection.js';
import { adaptMcpTools } from './mcp-tool-adapter.js';
import type { CommandLauncher } from '../sandbox/sandbox.js';

/** What a manager needs from its owner. */
export interface McpManagerOptions {
  /** Which layer this manager is: the agent's config, a host-supplied one, or a session's own. */
  readonly source: McpServerSource;
  /** Clock for activity times; defaults to Date.now. */
  readonly now?: () => number;
  /** Receives every stderr line of stdio servers and connection notes, by server. */
  readonly onLog?: (server: string, line: string) => void;
  /** Directory stdio servers start in when their config names none (relative `cwd`s resolve against it). */
  readonly defaultCwd?: string;
  /** Starts this layer's stdio servers in a session's sandbox (session and inherited layers; absent for the global one). */
  readonly launcher?: CommandLauncher;
  /** Checks and pins the URLs of this layer's HTTP and SSE servers (session and inherited layers; absent for the global one). */
  readonly outbound?: OutboundFetchOptions;
}

/** A change of the tools a manager offers. */
export interface McpToolsChange {
  readonly server: string;
  readonly reason: 'added' | 'removed' | 'refreshed' | 'closed';
  /** The server's tool names after the change (empty when it is gone). */
  readonly toolNames: string[];
}

/** A server connecting or disconnecting (on add, reconnect, idle disconnect, crash, remove). */
export interface McpConnectionChange {
  readonly server: string;
  readonly connected: boolean;
  /** Why it disconnected: 'idle', 'removed', 'closed', or the failure of a lost connection. */
  readonly reason: string | null;
}

/** The outcome of refreshing one server. */
export interface McpRefreshResult {
  readonly server: string;
  readonly toolCount: number;
  readonly error: string | null;
}

interface Entry {
  readonly connection: McpConnection;
  tools: AnyToolDefinition[];
}

/**
 * One layer of MCP servers (global, inherited or a session's own): adds and removes servers, adapts
 * their tools as `mcp__<server>__<tool>`, disconnects idle ones (keeping their configuration), closes all.
 */
export class McpManager {
  readonly source: McpServerSource;
  private readonly entries = new Map<string, Entry>();
  private readonly adding = new Set<string>();
  private readonly toolListeners = new Set<(change: McpToolsChange) => void>();
  private readonly connectionListeners = new Set<(change: McpConnectionChange) => void>();
  private readonly now: () => number;
  private closed = false;

  constructor(private readonly options: McpManagerOptions) {
    this.source = options.source;
    this.now = options.now ?? Date.now;
  }

  /** Connect a server and list its tools; rejects (leaving nothing behind) on a bad config, a taken name or a failed connect. */
  async add(input: McpServerConfigInput): Promise<{ toolCount: number }> {
    const { toolCount } = await this.insert(input, false);
    return { toolCount };
  }

  /**
   * Register a configured server (the agent's config at start): like add(), but a server that cannot be
   * reached now is kept without tools, its error in status(), for refresh() or the next call to retry.
   */
  async register(input: McpServerConfigInput): Promise<{ toolCount: number; error: string | null }> {
    return this.insert(input, true);
  }

  /**
   * Register several configured servers at once (a restored session's layers): they connect concurrently, so
   * one slow server does not hold up the others, and keep the given order. As with register(), a server that
   * cannot start stays registered with its error; one that cannot be registered at all (bad config, taken
   * name, closed layer) is left out, its error in the result.
   */
  async registerAll(inputs: readonly McpServerConfigInput[]): Promise<McpRefreshResult[]> {
    const settled = await Promise.allSettled(inputs.map((input) => this.insert(input, true)));
    // Completion order is arbitrary: restore the given one, so status, tool order and snapshots stay stable.
    const order = new Map(inputs.map((input, index) => [input.name, index]));
    const sorted = [...this.entries].sort(
      ([a], [b]) => (order.get(a) ?? inputs.length) - (order.get(b) ?? inputs.length),
    );
    this.entries.clear();
    for (const [name, entry] of sorted) this.entries.set(name, entry);
    return inputs.map((input, index): McpRefreshResult => {
      const outcome = settled[index];
      if (outcome?.status === 'fulfilled')
        return { server: input.name, toolCount: outcome.value.toolCount, error: outcome.value.error };
      const reason: unknown = outcome?.reason;
      const error = reason instanceof Error ? reason.message : String(reason);
      this.options.onLog?.(input.name, `[a3s] not registered: ${error}`);
      return { server: input.name, toolCount: 0, error };
    });
  }

  private async insert(
    input: McpServerConfigInput,
    keepOnFailure: boolean,
  ): Promise<{ toolCount: number; error: string | null }> {
    const parsed = McpServerConfigSchema.safeParse(input);
    if (!parsed.success) {
      throw new CodeError('VALIDATION_ERROR', formatZodIssues(parsed.error, { where: 'mcp' }), {
        issues: zodFieldIssues(parsed.error, 'mcp', 10),
      });
    }
    const config = parsed.data;
    const name = config.name;
    if (this.closed)
      throw new CodeError('SESSION_CLOSED', `MCP servers of this ${this.source} layer were closed`, { server: name });
    if (this.entries.has(name) || this.adding.has(name)) {
      throw new CodeError(
        'SESSION_CONFIGURATION_ERROR',
        `an MCP server named "${name}" already exists in this ${this.source} layer`,
        {
          server: name,
          reason: 'duplicate',
        },
      );
    }
    this.adding.add(name);
    const connection = new McpConnection(config, {
      now: this.now,
      onLog: this.options.onLog,
      defaultCwd: this.options.defaultCwd,
      ...(this.options.launcher ? { launcher: this.options.launcher } : {}),
      ...(this.options.outbound ? { outbound: this.options.outbound } : {}),
      onStateChange: (server, connected, reason) => this.emitConnection({ server, connected, reason }),
    });
    const entry: Entry = { connection, tools: [] };
    try {
      let error: string | null = null;
      try {
        this.adopt(entry, await connection.listTools());
      } catch (failure) {
        if (!keepOnFailure) throw failure;
        error = failure instanceof Error ? failure.message : String(failure);
        this.options.onLog?.(name, `[a3s] registered without tools: ${error}`);
      }
      if (this.closed)
        throw new Error(`MCP server "${name}": the ${this.source} layer was closed while the server connected`);
      this.entries.set(name, entry);
      this.emitTools({ server: name, reason: 'added', toolNames: entry.tools.map((t) => t.name) });
      return { toolCount: entry.tools.length, error };
    } catch (error) {
      await connection.close();
      throw new CodeError('SESSION_INITIALIZATION_ERROR', error instanceof Error ? error.message : String(error), {
        server: name,
        reason: 'connect_failed',
      });
    } finally {
      this.adding.delete(name);
    }
  }

  /** Remove a server, closing it (a stdio server's whole process group); false when there is none of that name. */
  async remove(name: string): Promise<boolean> {
    const entry = this.entries.get(name);
    if (!entry) return false;
    this.entries.delete(name);
    this.emitTools({ server: name, reason: 'removed', toolNames: [] });
    await entry.connection.close();
    return true;
  }

  /** True when this layer has a server of that name. */
  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The names of this layer's servers, in the order they were added. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Every server's validated configuration, in order (a session stores its own layer's in its snapshot). */
  configs(): McpServerConfig[] {
    return [...this.entries.values()].map((entry) => entry.connection.config);
  }

  /** The connection of one server (diagnostics and tests: pid, pending calls). */
  connection(name: string): McpConnection | undefined {
    return this.entries.get(name)?.connection;
  }

  /** The state of every server of this layer. */
  status(): McpServerStatus[] {
    return [...this.entries.values()].map((entry) => ({
      ...entry.connection.status(),
      toolCount: entry.tools.length,
      source: this.source,
    }));
  }

  /** Every server's tools, adapted; disconnected servers keep theirs (the next call reconnects). */
  tools(): AnyToolDefinition[] {
    return [...this.entries.values()].flatMap((entry) => entry.tools);
  }

  /**
   * Disconnect the servers whose last activity is older than `thresholdMs` (servers with a call in
   * flight are never idle) and resolve with their names once they are closed; their configuration stays.
   */
  async disconnectIdle(thresholdMs: number, now: number = this.now()): Promise<string[]> {
    const idle = [...this.entries.values()]
      .map((entry) => entry.connection)
      .filter(
        (c) =>
          c.connected && c.pendingCalls === 0 && now - (c.lastActivityMs ?? Number.NEGATIVE_INFINITY) >= thresholdMs,
      );
    await Promise.all(idle.map((c) => c.disconnect('idle')));
    return idle.map((c) => c.name);
  }

  /** List every server's tools again (reconnecting idle ones); a failing server keeps its previous tools. */
  async refresh(): Promise<McpRefreshResult[]> {
    const entries = [...this.entries.entries()];
    return Promise.all(
      entries.map(async ([name, entry]): Promise<McpRefreshResult> => {
        try {
          const listed = await entry.connection.listTools();
          if (this.entries.get(name) !== entry) return { server: name, toolCount: 0, error: 'removed during refresh' };
          const before = entry.tools.map((t) => t.name).join('\n');
          this.adopt(entry, listed);
          const after = entry.tools.map((t) => t.name);
          if (after.join('\n') !== before) this.emitTools({ server: name, reason: 'refreshed', toolNames: after });
          return { server: name, toolCount: after.length, error: null };
        } catch (error) {
          return {
            server: name,
            toolCount: entry.tools.length,
            error: error instanceof Error ? error.message : String(error),
          };
        }
      }),
    );
  }

  /** Close every server and refuse new ones. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.entries()];
    this.entries.clear();
    for (const [name] of entries) this.emitTools({ server: name, reason: 'closed', toolNames: [] });
    await Promise.all(entries.map(([, entry]) => entry.connection.close()));
  }

  /** Subscribe to changes of the tool set; returns the unsubscribe function. */
  onChange(listener: (change: McpToolsChange) => void): () => void {
    this.toolListeners.add(listener);
    return () => this.toolListeners.delete(listener);
  }

  /** Subscribe to servers connecting and disconnecting; returns the unsubscribe function. */
  onConnectionChange(listener: (change: McpConnectionChange) => void): () => void {
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  private adopt(entry: Entry, listed: Parameters<typeof adaptMcpTools>[1]): void {
    const adapted = adaptMcpTools(entry.connection, listed);
    for (const reason of adapted.skipped) this.options.onLog?.(entry.connection.name, `[a3s] tool skipped: ${reason}`);
    entry.tools = adapted.tools;
  }

  private emitTools(change: McpToolsChange): void {
    for (const listener of this.toolListeners) {
      try {
        listener(change);
      } catch {
        // A listener's fault must not break the layer.
      }
    }
  }

  private emitConnection(change: McpConnectionChange): void {
    for (const listener of this.connectionListeners) {
      try {
        listener(change);
      } catch {
        // A listener's fault must not break the layer.
      }
    }
  }
}
