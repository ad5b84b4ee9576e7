/** Which sandbox runs model-chosen commands: bubblewrap, or none (commands run on the host). */
export type SandboxKind = 'bwrap' | 'none';

/** Whether a contained command may use the network: `allowed` shares the host's network, loopback included. */
export type SandboxNetwork = 'none' | 'allowed';

/** Resource bounds of one contained command (wall time is the tool's timeout, enforced by the caller). */
export interface SandboxLimits {
  /** Processes and threads the command may have at once (cgroup pids.max). */
  readonly pidsMax: number;
  /** Memory of all its processes together (cgroup memory.max / memory.limit_in_bytes). */
  readonly memoryBytes: number;
  /** CPU seconds per process (RLIMIT_CPU). */
  readonly cpuSeconds: number;
  /** Address space per process (RLIMIT_AS). */
  readonly addressSpaceBytes: number;
}

/** One command to contain: what to run, where, for which session, with which extra environment. */
export interface CommandSpec {
  /** Program and arguments (no shell unless argv[0] is one). */
  readonly argv: readonly string[];
  /** Canonical workspace directory: the only host directory the command can write (where it is mounted inside). */
  readonly workspace: string;
  /**
   * A descriptor of the pinned workspace the server holds for the command's lifetime: what is mounted (bwrap
   * --bind-fd) or entered (no sandbox), never the name, so a swapped name cannot change what the command gets.
   */
  readonly workspaceFd: number;
  /** Directories inside the workspace the command must not see (the server's data directory): covered by an empty tmpfs. */
  readonly hidden?: readonly string[];
  /** Working directory, the workspace or inside it. */
  readonly cwd: string;
  /** The session's owner tenant and the session the command runs for (its private $HOME is kept per tenant and session). */
  readonly tenantId: string;
  readonly sessionId: string;
  /** Variables added to the built-from-scratch environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly network: SandboxNetwork;
}

/** What to spawn for a prepared command; `release` must be called once the process and its pipes are gone. */
export interface PreparedCommand {
  readonly kind: SandboxKind;
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  /**
   * Descriptors the child gets at fd 3, 4, ... (after stdin, stdout, stderr): the workspace's (bwrap --bind-fd 3), then
   * the command's cgroup.procs files opened by the server (the wrapper joins its cgroup through them).
   */
  readonly inheritFds: readonly number[];
  /**
   * Spawn the process as this user and group (Node's spawn `uid`/`gid`): sandbox.run_as when the server is root.
   * Every spawn site passes them; the sandbox wrapper refuses to run as root when they are set and were not used.
   */
  readonly uid?: number;
  readonly gid?: number;
  /** Kill whatever is left of the command (its cgroup) and remove its per-command resources. */
  release(): Promise<void>;
  /**
   * Send `signal` to the command's own processes but not the sandbox's (signalling bwrap would kill
   * everything at once, so a TERM trap could not run); false when none was found. Absent: signal the group.
   */
  signalCommand?(signal: NodeJS.Signals): boolean;
}

/**
 * A command the server itself runs over a session's workspace (change capture's git), never a model's: the pinned
 * workspace read-only, one server-owned directory read-write, no network, no $HOME, an environment of `env` only.
 */
export interface ServerCommandSpec {
  readonly argv: readonly string[];
  /** Canonical workspace directory (mounted read-only at this path; the working directory). */
  readonly workspace: string;
  /** The held descriptor of the pinned workspace (bwrap --ro-bind-fd), never its name. */
  readonly workspaceFd: number;
  /** Bind the workspace read-write (bwrap --bind-fd): only a revert's restore writes it. Default read-only. */
  readonly workspaceWritable?: boolean;
  /** Directories inside the workspace covered by an empty tmpfs (the server's data directory). */
  readonly hidden?: readonly string[];
  /** The one server directory the command may write, bound at `inside`. */
  readonly writable: { readonly host: string; readonly inside: string };
  /** Bind that server directory read-only instead (a fork's copy reads the shadow store and writes the workspace). */
  readonly storeReadOnly?: boolean;
  /** The whole environment (PATH is added). */
  readonly env: Readonly<Record<string, string>>;
}

/** Turns a command into a contained process description. */
export interface Sandbox {
  readonly kind: SandboxKind;
  prepare(spec: CommandSpec): Promise<PreparedCommand>;
  /** Prepare a server command (ServerCommandSpec); absent on the no-sandbox kind, whose caller runs it on the host. */
  prepareServerCommand?(spec: ServerCommandSpec): Promise<PreparedCommand>;
  /** The host path of the session's private $HOME (bwrap; created by its first command); absent when commands use the server's HOME. */
  homeOf?(tenantId: string, sessionId: string): string;
  /** Remove a session's private $HOME and everything in it (the session was closed or purged). */
  removeHome?(tenantId: string, sessionId: string): Promise<void>;
}

/** What a tool gets to start a model-chosen command: the session's sandbox decision for this call's origin. */
export interface CommandLauncher {
  /** Prepare `argv` to run in `cwd` (default: the workspace); rejects with CommandRefusedError when commands are refused. */
  prepare(
    argv: readonly string[],
    options?: { cwd?: string; env?: Readonly<Record<string, string>> },
  ): Promise<PreparedCommand>;
}

/** The session may not run commands here (no working sandbox and a creator without host_direct). */
export class CommandRefusedError extends Error {
  override readonly name = 'CommandRefusedError';
}

/** Why a command was refused for disk: the session's own usage, or the free space of a file system. */
export type DiskQuotaDetails =
  | { readonly kind: 'usage'; readonly usedBytes: number; readonly limitBytes: number }
  | { readonly kind: 'free_disk'; readonly freeBytes: number; readonly minFreeBytes: number; readonly path: string };

/** The session's commands used their disk (limits.sandboxHomeBytes), or a file system is nearly full: DISK_QUOTA_EXCEEDED. */
export class DiskQuotaExceededError extends CommandRefusedError {
  readonly code = 'DISK_QUOTA_EXCEEDED' as const;

  constructor(
    message: string,
    readonly details: DiskQuotaDetails,
  ) {
    super(message);
  }
}
