import type { McpServerConfig } from '../../protocol/mcp.js';
import type { OutboundFetchOptions } from '../outbound/outbound-fetch.js';
import type { CommandLauncher } from '../sandbox/sandbox.js';

/** What a connection needs from its owner. */
export interface McpConnectionOptions {
  /** Clock for activity times (ms since the epoch). */
  readonly now: () => number;
  /** Receives the server's stderr lines and connection notes. */
  readonly onLog?: (server: string, line: string) => void;
  /**
   * Called when the server connects (reason null) or disconnects: 'idle', 'removed', 'disconnected',
   * or the failure when it dropped on its own (crash, pipe closed, HTTP stream gone).
   */
  readonly onStateChange?: (server: string, connected: boolean, reason: string | null) => void;
  /** Directory a stdio server starts in when its config names none (relative `cwd`s resolve against it). */
  readonly defaultCwd?: string;
  readonly clientName?: string;
  readonly clientVersion?: string;
  /** Starts stdio servers in a session's sandbox (absent: on the host, for the operator's global servers). */
  readonly launcher?: CommandLauncher;
  /**
   * HTTP and SSE servers a tenant named: every request's URL is checked and pinned to its checked address
   * (outboundFetch). Absent for the operator's global servers, which may call anything.
   */
  readonly outbound?: OutboundFetchOptions;
}

/** Options of one tool call. */
export interface McpCallOptions {
  readonly signal?: AbortSignal;
  /** Overrides the server's configured timeout for this call. */
  readonly timeoutMs?: number;
}

/** The live state of one server, before the owning layer adds its source. */
export interface McpConnectionStatus {
  readonly name: string;
  readonly transport: McpServerConfig['transport']['type'];
  readonly connected: boolean;
  readonly toolCount: number;
  readonly error: string | null;
  readonly lastActivityMs: number | null;
}
