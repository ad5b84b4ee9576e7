import { outboundFetch } from '../outbound/outbound-fetch.js';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../../protocol/mcp.js';
import type { ToolResult } from '../tools/define-tool.js';
import { mapCallToolResult } from './mcp-result.js';
import { isStaleSocketError, McpConnectionError, messageOf } from './mcp-connection-error.js';
import type { McpCallOptions, McpConnectionOptions, McpConnectionStatus } from './mcp-connection-options.js';
import { StdioProcessTransport } from './stdio-process-transport.js';

/** Pages of tools/list followed before giving up on a server that never stops paginating. */
const MAX_TOOL_PAGES = 100;
/** How long a failed call waits for a crashed process's exit status, to name it in the error. */
const EXIT_STATUS_WAIT_MS = 250;
/** Characters of a stdio server's stderr quoted in connection errors. */
const STDERR_IN_ERROR_CHARS = 2_000;
/** Bound on the polite DELETE that ends a Streamable HTTP session on disconnect. */
const TERMINATE_SESSION_MS = 2_000;

interface Live {
  readonly client: Client;
  readonly transport: Transport;
}

/**
 * One configured MCP server: connects on demand (and again after an idle disconnect or a crash),
 * lists its tools, and turns every call into a ToolResult; transport failures never escape as exceptions.
 */
export class McpConnection {
  private live: Live | undefined;
  private connecting: Promise<Live> | undefined;
  private cachedTools: Tool[] = [];
  private lastError: string | null = null;
  private lastActivity: number | null = null;
  private inFlight = 0;
  private closedForGood = false;
  /** Killing what is left of a server that dropped on its own; disconnect() waits for it. */
  private lostCleanup: Promise<void> | undefined;

  constructor(
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {}

  /** The server's name. */
  get name(): string {
    return this.config.name;
  }

  /** True while a protocol session is established. */
  get connected(): boolean {
    return this.live !== undefined;
  }

  /** Calls currently waiting for an answer (a server with one is never idle). */
  get pendingCalls(): number {
    return this.inFlight;
  }

  /** The last connect or answered call (ms since the epoch), null before the first. */
  get lastActivityMs(): number | null {
    return this.lastActivity;
  }

  /** The tools seen at the last listing. */
  get tools(): readonly Tool[] {
    return this.cachedTools;
  }

  /** The process group id of a running stdio server (tests and diagnostics). */
  get pid(): number | undefined {
    const transport = this.live?.transport;
    return transport instanceof StdioProcessTransport ? transport.pid : undefined;
  }

  /** Establish the protocol session if there is none; rejects with a message naming the server. */
  async connect(): Promise<void> {
    await this.ensureLive();
  }

  /** List every tool of the server (following pagination) and remember them. */
  async listTools(): Promise<Tool[]> {
    const live = await this.ensureLive();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const result = await live.client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: this.config.timeoutMs,
        });
        tools.push(...result.tools);
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
    } catch (error) {
      const reason = await this.describeFailure(error, live);
      if (!(error instanceof McpError) && this.live === live) await this.drop(live, reason);
      throw new McpConnectionError(this.name, `failed to list its tools: ${reason}`, error);
    }
    this.cachedTools = tools;
    this.lastActivity = this.options.now();
    return tools;
  }

  /** Call one tool; every failure (connect, transport, timeout, cancel, isError) is a result with exitCode 1. */
  async callTool(tool: string, args: Record<string, unknown>, options: McpCallOptions = {}): Promise<ToolResult> {
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    const failure = (reason: string, extra: Record<string, unknown> = {}): ToolResult => ({
      output: `MCP server "${this.name}": tool ${tool} failed: ${reason}`,
      exitCode: 1,
      metadata: { mcp_server: this.name, mcp_tool: tool, ...extra },
    });
    if (options.signal?.aborted) return failure('the call was cancelled before it started.', { reason: 'cancelled' });
    this.inFlight++;
    try {
      let live: Live;
      try {
        live = await this.ensureLive();
      } catch (error) {
        return failure(error instanceof McpConnectionError ? error.detail : messageOf(error), {
          reason: 'connect_failed',
        });
      }
      try {
        const result = await live.client.callTool({ name: tool, arguments: args }, undefined, {
          signal: options.signal,
          timeout: timeoutMs,
        });
        this.lastActivity = this.options.now();
        return mapCallToolResult(this.name, tool, result);
      } catch (error) {
        if (options.signal?.aborted) return failure('the call was cancelled.', { reason: 'cancelled' });
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
          const bound = options.timeoutMs === undefined ? "the server's timeoutMs" : 'the timeout of this call';
          return failure(`no answer within ${timeoutMs} ms (${bound}).`, { reason: 'timeout', timeout_ms: timeoutMs });
        }
        if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) {
          // The server answered with a JSON-RPC error (unknown tool, invalid arguments, ...).
          this.lastActivity = this.options.now();
          return failure(error.message, { reason: 'server_error', mcp_error_code: error.code });
        }
        const reason = await this.describeFailure(error, live);
        // A transport failure (HTTP error, refused connection, stale session) leaves the session unusable:
        // drop it so the next call connects afresh.
        if (this.live === live) await this.drop(live, reason);
        return failure(reason, { reason: 'connection_lost' });
      }
    } finally {
      this.inFlight--;
    }
  }

  /** Close the protocol session (a stdio server's whole process group included); the configuration stays. */
  async disconnect(reason = 'disconnected'): Promise<void> {
    const live = this.live ?? (await this.connecting?.catch(() => undefined));
    await this.lostCleanup;
    if (!live || this.live !== live) return;
    this.live = undefined;
    await this.closeLive(live);
    this.log(`disconnected (${reason})`);
    this.options.onStateChange?.(this.name, false, reason);
  }

  /** Disconnect and refuse to connect again (the server was removed or its layer closed). */
  async close(): Promise<void> {
    this.closedForGood = true;
    await this.disconnect('removed');
  }

  /** The server's state. */
  status(): McpConnectionStatus {
    return {
      name: this.name,
      transport: this.config.transport.type,
      connected: this.connected,
      toolCount: this.cachedTools.length,
      error: this.lastError,
      lastActivityMs: this.lastActivity,
    };
  }

  private ensureLive(): Promise<Live> {
    if (this.live) return Promise.resolve(this.live);
    if (this.closedForGood) return Promise.reject(new McpConnectionError(this.name, 'was removed.'));
    this.connecting ??= this.openWithRetry().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Connect; over HTTP, once more when the first attempt hit a pooled socket the server had closed. */
  private async openWithRetry(): Promise<Live> {
    try {
      return await this.open();
    } catch (error) {
      if (this.config.transport.type === 'stdio' || this.closedForGood || !isStaleSocketError(error)) throw error;
      this.log('retrying the connect after a reset connection');
      return this.open();
    }
  }

  private async open(): Promise<Live> {
    const transport = await this.createTransport();
    const client = new Client(
      { name: this.options.clientName ?? 'a3s-code-server', version: this.options.clientVersion ?? '0.1.0' },
      { capabilities: {} },
    );
    let established = false;
    client.onclose = () => {
      if (!established || this.live?.client !== client) return;
      this.live = undefined;
      // Provisional until onLost has the exit status and stderr.
      this.lastError = 'disconnected: the connection to the server was closed.';
      this.lostCleanup = this.onLost(transport);
    };
    // Errors are out of band (a stray stdout line, a failed cancellation); failures that matter reject requests.
    client.onerror = (error) => this.log(`transport error: ${error.message}`);
    try {
      await client.connect(transport, { timeout: this.config.timeoutMs });
    } catch (error) {
      let reason = await this.describeFailure(error, { client, transport });
      if (this.config.transport.type !== 'stdio') {
        // Origin and path only: userinfo and query strings may carry credentials.
        const url = new URL(this.config.transport.url);
        reason = `${url.origin}${url.pathname}: ${reason}`;
      }
      await transport.close().catch(() => undefined);
      this.lastError = `could not connect: ${reason}`;
      throw new McpConnectionError(this.name, `could not connect: ${reason}`, error);
    }
    if (this.closedForGood) {
      await transport.close().catch(() => undefined);
      throw new McpConnectionError(this.name, 'was removed.');
    }
    established = true;
    const live = { client, transport };
    this.live = live;
    this.lastError = null;
    this.lastActivity = this.options.now();
    this.log('connected');
    this.options.onStateChange?.(this.name, true, null);
    return live;
  }

  private async createTransport(): Promise<Transport> {
    const { transport, env } = this.config;
    if (transport.type === 'stdio') {
      const base = this.options.defaultCwd;
      const cwd =
        transport.cwd === undefined ? base : base === undefined ? transport.cwd : path.resolve(base, transport.cwd);
      if (cwd !== undefined) {
        const isDir = await stat(cwd).then(
          (s) => s.isDirectory(),
          () => false,
        );
        if (!isDir) {
          this.lastError = `could not connect: cwd ${cwd} is not a directory`;
          throw new McpConnectionError(this.name, `could not connect: cwd ${cwd} is not a directory.`);
        }
      }
      return new StdioProcessTransport({
        command: transport.command,
        args: transport.args,
        cwd,
        env,
        onStderrLine: (line) => this.options.onLog?.(this.name, line),
        ...(this.options.launcher ? { launcher: this.options.launcher } : {}),
      });
    }
    const requestInit = transport.headers ? { headers: transport.headers } : undefined;
    const url = new URL(transport.url);
    const checked = this.options.outbound ? { fetch: outboundFetch(this.options.outbound) } : {};
    if (transport.type === 'sse') return new SSEClientTransport(url, { requestInit, ...checked });
    return new StreamableHTTPClientTransport(url, { requestInit, ...checked });
  }

  /** The server dropped on its own: kill what is left of a stdio group and record why. */
  private async onLost(transport: Transport): Promise<void> {
    const reason = await this.describeFailure(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), {
      transport,
    });
    await transport.close().catch(() => undefined);
    this.lastError = `disconnected: ${reason}`;
    this.log(this.lastError);
    this.options.onStateChange?.(this.name, false, this.lastError);
  }

  private async drop(live: Live, reason: string): Promise<void> {
    this.live = undefined;
    this.lastError = `disconnected: ${reason}`;
    this.log(this.lastError);
    await this.closeLive(live, false);
    this.options.onStateChange?.(this.name, false, this.lastError);
  }

  private async closeLive(live: Live, polite = true): Promise<void> {
    if (polite && live.transport instanceof StreamableHTTPClientTransport) {
      const timer = new Promise((resolve) => setTimeout(resolve, TERMINATE_SESSION_MS).unref());
      await Promise.race([live.transport.terminateSession().catch(() => undefined), timer]);
    }
    await live.client.close().catch(() => undefined);
    // Client.close() closes the transport; closing again waits for the group to be gone.
    await live.transport.close().catch(() => undefined);
  }

  /** Why a request or connect failed, with a stdio server's exit status and stderr tail when it died. */
  private async describeFailure(error: unknown, live: Partial<Live> | undefined = this.live): Promise<string> {
    const transport = live?.transport;
    if (!(transport instanceof StdioProcessTransport)) {
      return error instanceof McpError && error.code === ErrorCode.ConnectionClosed
        ? 'the connection to the server was closed.'
        : messageOf(error);
    }
    const spawnError = error as NodeJS.ErrnoException;
    if (spawnError.code === 'ENOENT' && transport.pid === undefined) {
      return `command "${(this.config.transport as { command: string }).command}" was not found (spawn ENOENT).`;
    }
    if (spawnError.code === 'EACCES' && transport.pid === undefined) {
      return `command "${(this.config.transport as { command: string }).command}" is not executable (spawn EACCES).`;
    }
    const exit = transport.exit ?? (await transport.waitForExit(EXIT_STATUS_WAIT_MS));
    let reason = messageOf(error);
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      reason = exit
        ? `the server process exited (${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`}) before answering.`
        : 'the server closed its stdio pipes before answering.';
    }
    const stderr = transport.stderr().trim();
    return stderr ? `${reason} Its stderr ends with:\n${stderr.slice(-STDERR_IN_ERROR_CHARS)}` : reason;
  }

  private log(line: string): void {
    this.options.onLog?.(this.name, `[a3s] ${line}`);
  }
}
