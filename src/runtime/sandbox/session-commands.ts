import { pinDirectory, WorkspaceDirectory, type WorkspaceAccess } from '../workspace/workspace-directory.js';
import type { ToolOrigin } from '../invocation/tool-call-state.js';
import { NoneSandbox } from './none-sandbox.js';
import { CommandRefusedError, type CommandLauncher, type PreparedCommand, type Sandbox, type SandboxNetwork } from './sandbox.js';

/** The server's sandbox as sessions use it: the detected one, and how host-direct calls run. */
export interface ServerSandbox {
  readonly sandbox: Sandbox;
  /** `none`: host-direct calls run unsandboxed (config sandbox.host_direct); `sandbox`: like every other call. */
  readonly hostDirect: 'sandbox' | 'none';
}

/** One session's command settings, decided when the session was built. */
export interface SessionCommandSettings {
  readonly sessionId: string;
  /** The pinned workspace: each command holds a lease of its descriptor until the command is released. */
  readonly workspace: WorkspaceAccess;
  /** The creator had host_direct: without a working sandbox its commands may run on the host. */
  readonly hostCommands: boolean;
  readonly network: SandboxNetwork;
  /** SessionOptions.commandEnv, validated. */
  readonly env: Readonly<Record<string, string>>;
}

const NONE = new NoneSandbox();

/**
 * Decides, per call origin, which sandbox a session's command runs in: host-direct calls unsandboxed
 * only when config says so; otherwise the server's sandbox; and with no working sandbox, commands of a
 * session whose creator lacked host_direct are refused (so a tenant approving its own confirmation
 * never runs a command on the host).
 */
export class SessionCommands {
  constructor(
    private readonly server: ServerSandbox,
    private readonly settings: SessionCommandSettings,
  ) {}

  /** The sandbox the session's (non-host-direct) commands run in. */
  get kind(): 'bwrap' | 'none' {
    return this.server.sandbox.kind;
  }

  /** The network the session's contained commands get. */
  get network(): SandboxNetwork {
    return this.settings.network;
  }

  /** The launcher for calls of this origin. */
  forOrigin(origin: ToolOrigin): CommandLauncher {
    return { prepare: (argv, options) => this.prepare(origin, argv, options) };
  }

  private async prepare(origin: ToolOrigin, argv: readonly string[], options: { cwd?: string; env?: Readonly<Record<string, string>> } = {}): Promise<PreparedCommand> {
    const { settings, server } = this;
    let sandbox: Sandbox = server.sandbox;
    if (origin === 'host_direct' && server.hostDirect === 'none') sandbox = NONE;
    else if (sandbox.kind === 'none' && !settings.hostCommands && origin !== 'host_direct') {
      throw new CommandRefusedError('Commands are refused in this session: this server has no working sandbox (bubblewrap) and the session was created without the host_direct scope.');
    }
    // Throws WorkspaceChangedError when the pinned directory is gone from its place: nothing starts.
    const lease = settings.workspace.acquire();
    let prepared: PreparedCommand;
    try {
      prepared = await sandbox.prepare({
        argv,
        workspace: lease.path,
        workspaceFd: lease.fd,
        cwd: options.cwd ?? lease.path,
        sessionId: settings.sessionId,
        env: { ...settings.env, ...options.env },
        network: settings.network,
      });
    } catch (error) {
      lease.release();
      throw error;
    }
    return { ...prepared, release: () => prepared.release().finally(() => lease.release()) };
  }
}

/** The launcher used when a tool context carries none (contexts built by hand in unit tests): no containment. */
export const UNCONTAINED_LAUNCHER: CommandLauncher = {
  prepare: async (argv, options) => {
    const cwd = options?.cwd ?? process.cwd();
    const lease = new WorkspaceDirectory(pinDirectory(cwd)).acquire();
    const prepared = await NONE.prepare({ argv, workspace: cwd, workspaceFd: lease.fd, cwd, sessionId: 'none', env: options?.env ?? {}, network: 'allowed' });
    return { ...prepared, release: () => prepared.release().finally(() => lease.release()) };
  },
};

/** No sandbox at all: sessions created without host_direct are refused commands (the fail-closed default). */
export const UNSANDBOXED: ServerSandbox = { sandbox: NONE, hostDirect: 'none' };
