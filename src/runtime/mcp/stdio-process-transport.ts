import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { CommandLauncher, PreparedCommand } from '../sandbox/sandbox.js';
import { groupHasLiveMembers, signalGroup } from '../tools/process-group.js';

/** Bytes of stderr a stdio server keeps for status and errors (the most recent ones). */
export const MCP_STDERR_TAIL_BYTES = 64 * 1024;
/** Grace between SIGTERM and SIGKILL when a stdio server's process group is closed. */
export const MCP_KILL_GRACE_MS = 2_000;
/** Longest stderr line passed to the log callback; the rest of the line is cut. */
const MAX_LOG_LINE_CHARS = 4_096;
/** Largest single protocol message accepted from a server's stdout. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Bound on waiting for the group to empty after the leader exited (SIGKILLed stragglers vanish at once). */
const GROUP_EXIT_WAIT_MS = 1_000;

/** Variables of the server's own environment a stdio MCP server inherits; everything else comes from its config. */
export const MCP_INHERITED_ENV = ['PATH', 'HOME', 'LANG'] as const;

/** What is spawned: the configured command, or the sandbox's wrapper with the workspace descriptor it binds. */
interface SpawnSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  readonly env: Record<string, string>;
  readonly inheritFds: readonly number[];
  /** The user to spawn as (a sandboxed server of a root server: sandbox.run_as). */
  readonly uid?: number;
  readonly gid?: number;
}

/** How to start one stdio MCP server. */
export interface StdioProcessOptions {
  readonly command: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  /** Added to the minimal inherited environment (PATH, HOME, LANG). */
  readonly env?: Readonly<Record<string, string>>;
  /** Called with every complete stderr line (cut to 4 KiB). */
  readonly onStderrLine?: (line: string) => void;
  readonly killGraceMs?: number;
  readonly stderrTailBytes?: number;
  /**
   * Starts the server in a session's sandbox (servers a session or its host added); absent for the
   * operator's global servers, which run on the host with the minimal inherited environment.
   */
  readonly launcher?: CommandLauncher;
}

/** How the server process ended. */
export interface StdioProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The minimal environment of a stdio MCP server: PATH, HOME and LANG of ours, plus its configured env. */
export function mcpServerEnv(
  extra: Readonly<Record<string, string>> = {},
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of MCP_INHERITED_ENV) {
    const value = base[name];
    // Exported shell functions are code, not configuration.
    if (value !== undefined && !value.startsWith('()')) env[name] = value;
  }
  return { ...env, ...extra };
}

/** A bounded byte ring keeping the most recent output. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 0) {
      const first = this.chunks[0] as Buffer;
      const excess = this.size - this.limit;
      this.dropped = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  toString(): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return this.dropped ? `[earlier stderr dropped]\n${text}` : text;
  }
}

/**
 * An SDK transport over a spawned process that leads its own process group. stdout carries the
 * protocol, stderr is drained into a bounded tail; when a pipe closes or the process exits, `onclose`
 * fires at once (so the SDK fails outstanding requests), and `close()` kills the whole group.
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly readBuffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  private readonly stderrTail: TailBuffer;
  private stderrLine = '';
  private closed = false;
  private exitInfo: StdioProcessExit | undefined;
  private readonly exitWaiters: Array<(exit: StdioProcessExit) => void> = [];
  private closing: Promise<void> | undefined;
  private prepared: PreparedCommand | undefined;

  constructor(private readonly options: StdioProcessOptions) {
    this.stderrTail = new TailBuffer(options.stderrTailBytes ?? MCP_STDERR_TAIL_BYTES);
  }

  /** The leader's pid, which is also the process group id; undefined before start. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the leader ended, once it has. */
  get exit(): StdioProcessExit | undefined {
    return this.exitInfo;
  }

  /** The most recent stderr output (at most the configured tail). */
  stderr(): string {
    return this.stderrTail.toString();
  }

  /** Resolves when the leader has exited, or with undefined after `timeoutMs`. */
  waitForExit(timeoutMs: number): Promise<StdioProcessExit | undefined> {
    if (this.exitInfo || !this.child) return Promise.resolve(this.exitInfo);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      timer.unref();
      this.exitWaiters.push((exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
  }

  /** Spawn the process; rejects when it cannot be started (e.g. the command does not exist). */
  async start(): Promise<void> {
    if (this.child || this.closed || this.prepared) throw new Error('StdioProcessTransport was already started');
    const { command, args = [], cwd, env, launcher } = this.options;
    let spawnArgs: SpawnSpec = { file: command, args, cwd, env: mcpServerEnv(env), inheritFds: [] };
    if (launcher) {
      this.prepared = await launcher.prepare([command, ...args], {
        ...(cwd !== undefined ? { cwd } : {}),
        ...(env ? { env } : {}),
      });
      const { uid, gid } = this.prepared;
      spawnArgs = {
        file: this.prepared.file,
        args: this.prepared.args,
        cwd: this.prepared.cwd,
        env: this.prepared.env,
        inheritFds: this.prepared.inheritFds,
        ...(uid !== undefined ? { uid, gid } : {}),
      };
    }
    try {
      await this.spawnChild(spawnArgs);
    } catch (error) {
      await this.release();
      throw error;
    }
  }

  private spawnChild(spec: SpawnSpec): Promise<void> {
    return new Promise((resolve, reject) => {
      let spawned = false;
      // detached: the server leads its own process group, so the group can be killed as a whole.
      const child = spawn(spec.file, [...spec.args], {
        cwd: spec.cwd,
        env: spec.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe', ...spec.inheritFds],
        shell: false,
        ...(spec.uid !== undefined ? { uid: spec.uid, gid: spec.gid } : {}),
      }) as ChildProcessWithoutNullStreams;
      this.child = child;
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.on('error', (error) => {
        if (!spawned) {
          this.markClosed();
          reject(error);
          return;
        }
        this.onerror?.(error);
      });
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        for (const waiter of this.exitWaiters.splice(0)) waiter(this.exitInfo);
        // Children left behind in the group must not outlive the server.
        if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
        void this.release();
        this.markClosed();
      });
      child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
      child.stdout.once('close', () => this.markClosed());
      child.stdout.on('error', (error) => this.onerror?.(error));
      child.stdin.once('close', () => this.markClosed());
      // EPIPE after the server died: the write fails and the close above already failed the requests.
      child.stdin.on('error', (error) => this.onerror?.(error));
      child.stderr.on('data', (chunk: Buffer) => this.onStderr(chunk));
      child.stderr.on('error', () => undefined);
    });
  }

  /** Write one newline-delimited JSON-RPC message to the server's stdin. */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (this.closed || !stdin || !stdin.writable)
      return Promise.reject(new Error('Not connected: the MCP server process is not running'));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Kill the whole process group (SIGTERM, SIGKILL after the grace) and resolve when the leader exited. */
  close(): Promise<void> {
    this.closing ??= this.terminate();
    return this.closing;
  }

  private async terminate(): Promise<void> {
    const child = this.child;
    const pid = child?.pid;
    if (!child || pid === undefined) {
      this.markClosed();
      return;
    }
    child.stdin.end();
    signalGroup(pid, 'SIGTERM');
    const grace = this.options.killGraceMs ?? MCP_KILL_GRACE_MS;
    const exited = await this.waitForExit(grace);
    if (!exited || (await groupHasLiveMembers(pid))) {
      signalGroup(pid, 'SIGKILL');
      await this.waitForExit(grace);
    }
    // The leader is gone; SIGKILLed members of its group vanish a moment later.
    const deadline = Date.now() + GROUP_EXIT_WAIT_MS;
    while ((await groupHasLiveMembers(pid)) && Date.now() < deadline) {
      signalGroup(pid, 'SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await this.release();
    this.markClosed();
  }

  /** Kill what is left in the sandbox's cgroup and remove it (once). */
  private async release(): Promise<void> {
    const prepared = this.prepared;
    this.prepared = undefined;
    await prepared?.release().catch(() => undefined);
  }

  private onStdout(chunk: Buffer): void {
    try {
      this.readBuffer.append(chunk);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a stray print) is reported and skipped.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private onStderr(chunk: Buffer): void {
    this.stderrTail.push(chunk);
    const onLine = this.options.onStderrLine;
    if (!onLine) return;
    const lines = (this.stderrLine + chunk.toString('utf8')).split('\n');
    this.stderrLine = (lines.pop() ?? '').slice(0, MAX_LOG_LINE_CHARS);
    for (const line of lines) onLine(line.slice(0, MAX_LOG_LINE_CHARS));
  }

  /** Fire `onclose` exactly once, as soon as the process or either protocol pipe is gone. */
  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.readBuffer.clear();
    if (this.stderrLine && this.options.onStderrLine) this.options.onStderrLine(this.stderrLine);
    this.stderrLine = '';
    this.onclose?.();
  }
}
