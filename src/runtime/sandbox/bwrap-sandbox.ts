import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CgroupLimits } from './cgroup-limits.js';
import { commandEnvironment } from './command-env.js';
import type { CommandSpec, PreparedCommand, Sandbox, SandboxLimits } from './sandbox.js';

/** The user a contained command runs as (mapped to the server's own uid outside). */
const SANDBOX_UID = 1000;
const SANDBOX_HOME = '/home/sandbox';
/** Size of the private /tmp of one command (it counts against the command's memory too). */
const TMP_BYTES = 512 * 1024 * 1024;

/** Read-only pieces of /etc a toolchain needs (DNS, TLS roots, loader cache, time zone, git's system config). */
const ETC_PIECES = ['resolv.conf', 'hosts', 'nsswitch.conf', 'host.conf', 'ssl', 'ca-certificates', 'ca-certificates.conf', 'alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'timezone', 'gitconfig', 'mime.types', 'protocols', 'services', 'bash.bashrc', 'profile', 'inputrc'];

const PASSWD = `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${SANDBOX_UID}:${SANDBOX_UID}:sandbox:${SANDBOX_HOME}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
const GROUP = `root:x:0:\nsandbox:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`;

/**
 * Joins the cgroups named by the first `$1` arguments, sets the CPU and address-space rlimits, then execs
 * bwrap: everything the command starts is bounded from its first instruction.
 */
const WRAPPER = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; ulimit -t "$1" && ulimit -v "$2" || exit 125; shift 2; exec "$@"';

/** A directory name for a session id (any characters) that cannot collide with another's. */
function scratchName(sessionId: string): string {
  const safe = sessionId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64);
  return `${safe}-${createHash('sha256').update(sessionId).digest('hex').slice(0, 12)}`;
}

/** Where the bubblewrap sandbox keeps what it mounts: generated passwd/group and per-session homes. */
export interface BwrapSandboxOptions {
  /** Absolute path of the bwrap binary. */
  readonly bwrap: string;
  /** Server-owned directory (`<data_dir>/sandbox`); never mounted whole. */
  readonly stateDir: string;
  readonly limits: SandboxLimits;
  readonly cgroups: CgroupLimits;
  /** Operator-configured host paths mounted read-only at the same place (config sandbox.read_only_paths). */
  readonly readOnlyPaths?: readonly string[];
}

/**
 * Bubblewrap: new user, PID, IPC, UTS, cgroup (and network unless granted) namespaces; the workspace
 * read-write at its real path; read-only /usr and the /etc pieces a toolchain needs; a private /tmp
 * and a per-session $HOME; /proc of the new PID namespace; minimal /dev. bwrap itself starts with the
 * command's environment only, so nothing of the server's is readable inside, not even at /proc/1/environ.
 */
export class BwrapSandbox implements Sandbox {
  readonly kind = 'bwrap' as const;
  private etcReady: Promise<void> | undefined;

  constructor(private readonly options: BwrapSandboxOptions) {}

  /** The base bwrap arguments every command gets (also used by detection's trivial `true`). */
  static baseArgs(): string[] {
    return [
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      '--cap-drop', 'ALL',
      '--uid', String(SANDBOX_UID),
      '--gid', String(SANDBOX_UID),
      '--hostname', 'sandbox',
      '--ro-bind', '/usr', '/usr',
      '--symlink', 'usr/bin', '/bin',
      '--symlink', 'usr/sbin', '/sbin',
      '--symlink', 'usr/lib', '/lib',
      '--symlink', 'usr/lib64', '/lib64',
      '--symlink', 'usr/lib32', '/lib32',
      '--proc', '/proc',
      '--dev', '/dev',
      '--size', String(TMP_BYTES), '--tmpfs', '/tmp',
    ];
  }

  async prepare(spec: CommandSpec): Promise<PreparedCommand> {
    const { stateDir, limits, cgroups, bwrap } = this.options;
    this.etcReady ??= this.writeEtc();
    await this.etcReady;
    const home = path.join(stateDir, 'homes', scratchName(spec.sessionId));
    await mkdir(home, { recursive: true, mode: 0o700 });
    const etc = ETC_PIECES.flatMap((name) => ['--ro-bind-try', `/etc/${name}`, `/etc/${name}`]);
    const args = [
      ...BwrapSandbox.baseArgs(),
      ...(spec.network === 'allowed' ? ['--share-net'] : []),
      ...etc,
      '--ro-bind', path.join(stateDir, 'etc', 'passwd'), '/etc/passwd',
      '--ro-bind', path.join(stateDir, 'etc', 'group'), '/etc/group',
      '--bind', home, SANDBOX_HOME,
      ...(this.options.readOnlyPaths ?? []).flatMap((where) => ['--ro-bind-try', where, where]),
      // The held descriptor of the pinned workspace (the child's fd 3), never its name: a name swapped for a symlink
      // meanwhile cannot change what is mounted.
      '--bind-fd', '3', spec.workspace,
      '--chdir', spec.cwd,
      '--',
      ...spec.argv,
    ];
    const cgroup = await cgroups.create(limits);
    const procs = cgroup?.procsFiles ?? [];
    return {
      kind: 'bwrap',
      file: '/bin/sh',
      args: ['-c', WRAPPER, 'sandbox-wrapper', String(procs.length), ...procs, String(limits.cpuSeconds), String(Math.floor(limits.addressSpaceBytes / 1024)), bwrap, ...args],
      env: commandEnvironment(SANDBOX_HOME, '/tmp', spec.env),
      // The wrapper starts in the server-owned state directory; the command's cwd is set inside (--chdir).
      cwd: stateDir,
      inheritFds: [spec.workspaceFd],
      release: async () => {
        await cgroup?.release();
      },
      ...(cgroup ? { signalCommand: (signal: NodeJS.Signals) => cgroup.signalMembers(signal) } : {}),
    };
  }

  private async writeEtc(): Promise<void> {
    const etc = path.join(this.options.stateDir, 'etc');
    await mkdir(etc, { recursive: true, mode: 0o700 });
    await writeFile(path.join(etc, 'passwd'), PASSWD);
    await writeFile(path.join(etc, 'group'), GROUP);
  }
}
