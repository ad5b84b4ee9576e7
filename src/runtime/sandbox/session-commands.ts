import { fchown, fstat } from 'node:fs';
import { promisify } from 'node:util';
import { pinDirectory, WorkspaceDirectory, type WorkspaceAccess } from '../workspace/workspace-directory.js';
import type { ToolOrigin } from '../invocation/tool-call-state.js';
import { SessionDiskGuard, type DiskBounds } from './disk-guard.js';
import { NoneSandbox } from './none-sandbox.js';
import type { RunAsUser } from './run-as.js';
import {
  CommandRefusedError,
  type CommandLauncher,
  type PreparedCommand,
  type Sandbox,
  type SandboxNetwork,
} from './sandbox.js';

const fstatAsync = promisify(fstat);
const fchownAsync = promisify(fchown);

/** The server's sandbox as sessions use it: the detected one, and how host-direct calls run. */
export interface ServerSandbox {
  readonly sandbox: Sandbox;
  /** `none`: host-direct calls run unsandboxed (config sandbox.host_direct); `sandbox`: like every other call. */
  readonly hostDirect: 'sandbox' | 'none';
  /** A root server's sandbox.run_as: contained commands run as it, and what tenants' commands use belongs to it. */
  readonly runAs?: RunAsUser;
  /** Disk bounds of contained commands (limits.sandbox_home_bytes, limits.min_free_disk_bytes); absent: unbounded. */
  readonly disk?: DiskBounds;
}

/** One session's command settings, decided when the session was built. */
export interface SessionCommandSettings {
  /** The session's owner tenant: its $HOME is keyed by tenant and session id. */
  readonly tenantId: string;
  readonly sessionId: string;
  /** The pinned workspace: each command holds a lease of its descriptor until the command is released. */
  readonly workspace: WorkspaceAccess;
  /** The creator had host_direct: without a working sandbox its commands may run on the host. */
  readonly hostCommands: boolean;
  readonly network: SandboxNetwork;
  /** SessionOptions.commandEnv, validated. */
  readonly env: Readonly<Record<string, string>>;
  /** Told the disk the session's contained commands use (home plus workspace growth) after each measurement. */
  onStored?(bytes: number): void;
}

const NONE = new NoneSandbox();

/**
 * Decides, per call origin, which sandbox a session's command runs in: host-direct calls unsandboxed
 * only when config says so; otherwise the server's sandbox; and with no working sandbox, commands of a
 * session whose creator lacked host_direct are refused (so a tenant approving its own confirmation
 * never runs a command on the host).
 */
export class SessionCommands {
  private guard: SessionDiskGuard | undefined;
  /** The workspace directory was checked for run_as's ownership (once per session). */
  private adopted = false;

  constructor(
    private readonly server: ServerSandbox,
    private readonly settings: SessionCommandSettings,
  ) {}

  /**
   * The session was closed (not passivated): its $HOME is removed and its disk no longer counts for the tenant.
   * Its commands have ended by now (the run was stopped, its MCP servers too).
   */
  async close(): Promise<void> {
    const { sandbox } = this.server;
    const { tenantId, sessionId } = this.settings;
    this.guard?.stop();
    this.guard = undefined;
    await sandbox.removeHome?.(tenantId, sessionId);
    this.settings.onStored?.(0);
  }

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

  private async prepare(
    origin: ToolOrigin,
    argv: readonly string[],
    options: { cwd?: string; env?: Readonly<Record<string, string>> } = {},
  ): Promise<PreparedCommand> {
    const { settings, server } = this;
    let sandbox: Sandbox = server.sandbox;
    if (origin === 'host_direct' && server.hostDirect === 'none') sandbox = NONE;
    else if (sandbox.kind === 'none' && !settings.hostCommands && origin !== 'host_direct') {
      throw new CommandRefusedError(
        'Commands are refused in this session: this server has no working sandbox (bubblewrap) and the session was created without the host_direct scope.',
      );
    }
    // Throws WorkspaceChangedError when the pinned directory is gone from its place: nothing starts.
    const lease = settings.workspace.acquire();
    const guard = sandbox.homeOf ? this.diskGuard(sandbox) : undefined;
    let prepared: PreparedCommand;
    try {
      if (sandbox.homeOf && this.server.runAs && !this.adopted) await this.adoptWorkspace(lease.fd, this.server.runAs);
      await guard?.admit(lease.fd);
      prepared = await sandbox.prepare({
        argv,
        workspace: lease.path,
        workspaceFd: lease.fd,
        ...(lease.hidden ? { hidden: lease.hidden } : {}),
        cwd: options.cwd ?? lease.path,
        tenantId: settings.tenantId,
        sessionId: settings.sessionId,
        env: { ...settings.env, ...options.env },
        network: settings.network,
      });
    } catch (error) {
      lease.release();
      throw error;
    }
    return {
      ...prepared,
      release: () =>
        prepared.release().finally(() => {
          // Measured after the command, in the background; the lease is returned once the measurement holds its own.
          guard?.measureAfter();
          lease.release();
        }),
    };
  }

  private diskGuard(sandbox: Sandbox): SessionDiskGuard | undefined {
    const { disk } = this.server;
    if (!disk || !sandbox.homeOf) return undefined;
    const { tenantId, sessionId, workspace, onStored } = this.settings;
    this.guard ??= new SessionDiskGuard(disk, {
      workspace,
      home: sandbox.homeOf(tenantId, sessionId),
      ...(onStored ? { onMeasured: onStored } : {}),
    });
    return this.guard;
  }

  /**
   * Commands run as run_as: a workspace directory that is root's (the server's) becomes run_as's, through the held
   * descriptor, so they can write in it. Only the directory itself: what is in it keeps its owner (docs/security.md).
   */
  private async adoptWorkspace(fd: number, runAs: RunAsUser): Promise<void> {
    const stats = await fstatAsync(fd);
    if (stats.uid === 0) await fchownAsync(fd, runAs.uid, runAs.gid);
    this.adopted = true;
  }
}

/** The launcher used when a tool context carries none (contexts built by hand in unit tests): no containment. */
export const UNCONTAINED_LAUNCHER: CommandLauncher = {
  prepare: async (argv, options) => {
    const cwd = options?.cwd ?? process.cwd();
    const lease = new WorkspaceDirectory(pinDirectory(cwd)).acquire();
    const prepared = await NONE.prepare({
      argv,
      workspace: cwd,
      workspaceFd: lease.fd,
      cwd,
      tenantId: 'none',
      sessionId: 'none',
      env: options?.env ?? {},
      network: 'allowed',
    });
    return { ...prepared, release: () => prepared.release().finally(() => lease.release()) };
  },
};

/** No sandbox at all: sessions created without host_direct are refused commands (the fail-closed default). */
export const UNSANDBOXED: ServerSandbox = { sandbox: NONE, hostDirect: 'none' };
