import { chmod, mkdir, open, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { CgroupLimits } from './cgroup-limits.js';
import { commandEnvironment, SANDBOX_PATH } from './command-env.js';
import { assertBwrapBindsSafe, assertNoHostProc, procMountPoints } from './host-proc-guard.js';
import type { RunAsUser } from './run-as.js';
import type { CommandSpec, PreparedCommand, Sandbox, SandboxLimits, ServerCommandSpec } from './sandbox.js';
import { SandboxHomes } from './sandbox-homes.js';

/** The user a contained command runs as inside (mapped to the server's own uid outside, or to run_as's when the server is root). */
const SANDBOX_UID = 1000;
const SANDBOX_HOME = '/home/sandbox';
/** Size of the private /tmp of one command (it counts against the command's memory too). */
const TMP_BYTES = 512 * 1024 * 1024;

/** Read-only pieces of /etc a toolchain needs (DNS, TLS roots, loader cache, time zone, git's system config). */
const ETC_PIECES = [
  'resolv.conf',
  'hosts',
  'nsswitch.conf',
  'host.conf',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'timezone',
  'gitconfig',
  'mime.types',
  'protocols',
  'services',
  'bash.bashrc',
  'profile',
  'inputrc',
];

const PASSWD = `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${SANDBOX_UID}:${SANDBOX_UID}:sandbox:${SANDBOX_HOME}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
const GROUP = `root:x:0:\nsandbox:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`;

/**
 * Joins the command's cgroups through the descriptors the server opened for it (fd 4, and 5 on cgroup v1: the kernel
 * checks the opener's rights, so this works as run_as too) and closes them, refuses to go on as root when the
 * command is meant to run as run_as (`$2` names a root-owned file: `test -O` is true only for its owner), sets the
 * CPU, address-space and file-size rlimits, then execs bwrap: everything the command starts is bounded from its
 * first instruction.
 */
const WRAPPER =
  'n=$1; [ "$n" -lt 1 ] || echo $$ >&4 || exit 125; [ "$n" -lt 2 ] || echo $$ >&5 || exit 125; exec 4>&- 5>&-; [ "$2" = - ] || ! [ -O "$2" ] || exit 126; ulimit -t "$3" && ulimit -v "$4" && ulimit -f "$5" || exit 125; shift 5; exec "$@"';

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
  /** The largest file one command may write (RLIMIT_FSIZE; limits.sandbox_home_bytes). */
  readonly maxFileBytes: number;
  /** Bytes per block of `ulimit -f` in the wrapper's /bin/sh (512 for dash and POSIX-mode bash). */
  readonly fileBlockBytes: number;
  /** When the server runs as root: the user the wrapper and bwrap are spawned as (sandbox.run_as). */
  readonly runAs?: RunAsUser;
}

/**
 * Commands run as run_as see files root left in a workspace (before run_as, or made by the operator) as another
 * user's, and git refuses such a repository ("dubious ownership"). Inside the sandbox the only repositories are the
 * workspace's (the tenant's own, whose config ran in its sandbox before as well), so git trusts them: safe.directory
 * in git's command-line scope (GIT_CONFIG_COUNT; commandEnv can never set GIT_*). Writing still needs the files to be
 * run_as's (docs/security.md).
 */
const TRUST_WORKSPACE_REPOSITORIES = {
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'safe.directory',
  GIT_CONFIG_VALUE_0: '*',
};

/**
 * Bubblewrap: new user, PID, IPC, UTS, cgroup (and network unless granted) namespaces; the workspace
 * read-write at its real path; read-only /usr and the /etc pieces a toolchain needs; a private /tmp
 * and a $HOME of the tenant's session; /proc of the new PID namespace; minimal /dev. bwrap itself starts with the
 * command's environment only, so nothing of the server's is readable inside, not even at /proc/1/environ. A root
 * server spawns it as sandbox.run_as (so nothing a command leaves behind is root's: a setuid bit it sets is run_as's).
 */
export class BwrapSandbox implements Sandbox {
  readonly kind = 'bwrap' as const;
  private etcReady: Promise<void> | undefined;
  private readonly homes: SandboxHomes;

  /** Where proc file systems are mounted on the host (read once): no bind may show one. */
  private readonly procMounts = procMountPoints();

  constructor(private readonly options: BwrapSandboxOptions) {
    this.homes = new SandboxHomes(path.join(options.stateDir, 'homes'), options.runAs);
    assertNoHostProc(options.readOnlyPaths ?? [], this.procMounts);
  }

  /**
   * The base bwrap arguments every command gets (also used by detection's trivial `true`): a user namespace in which
   * the command cannot create another (`--disable-userns`: no nested namespaces to rearrange mounts in).
   * `freshProc: false` leaves out the fresh /proc, `disableUserns: false` the nested-namespace ban (detection's probes only).
   */
  static baseArgs(options: { readonly freshProc?: boolean; readonly disableUserns?: boolean } = {}): string[] {
    return [
      '--unshare-all',
      '--unshare-user',
      // Writes /proc/sys/user/max_user_namespaces in the sandbox's user namespace: needs a writable /proc/sys.
      ...(options.disableUserns === false ? [] : ['--disable-userns']),
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
      '--uid',
      String(SANDBOX_UID),
      '--gid',
      String(SANDBOX_UID),
      '--hostname',
      'sandbox',
      '--ro-bind',
      '/usr',
      '/usr',
      '--symlink',
      'usr/bin',
      '/bin',
      '--symlink',
      'usr/sbin',
      '/sbin',
      '--symlink',
      'usr/lib',
      '/lib',
      '--symlink',
      'usr/lib64',
      '/lib64',
      '--symlink',
      'usr/lib32',
      '/lib32',
      // A procfs of the sandbox's own PID namespace, never a bind of the host's (host-proc-guard.ts). Left out only by
      // detection's first probes, which check the namespaces apart from the container's /proc.
      ...(options.freshProc === false ? [] : ['--proc', '/proc']),
      '--dev',
      '/dev',
      '--size',
      String(TMP_BYTES),
      '--tmpfs',
      '/tmp',
    ];
  }

  async prepare(spec: CommandSpec): Promise<PreparedCommand> {
    const { stateDir, limits, cgroups, bwrap, runAs } = this.options;
    this.etcReady ??= this.writeEtc();
    await this.etcReady;
    const home = await this.homes.ensure(spec.tenantId, spec.sessionId);
    const etc = ETC_PIECES.flatMap((name) => ['--ro-bind-try', `/etc/${name}`, `/etc/${name}`]);
    const args = [
      ...BwrapSandbox.baseArgs(),
      ...(spec.network === 'allowed' ? ['--share-net'] : []),
      ...etc,
      '--ro-bind',
      path.join(stateDir, 'etc', 'passwd'),
      '/etc/passwd',
      '--ro-bind',
      path.join(stateDir, 'etc', 'group'),
      '/etc/group',
      '--bind',
      home,
      SANDBOX_HOME,
      ...(this.options.readOnlyPaths ?? []).flatMap((where) => ['--ro-bind-try', where, where]),
      // The held descriptor of the pinned workspace (the child's fd 3), never its name: a name swapped for a symlink
      // meanwhile cannot change what is mounted.
      '--bind-fd',
      '3',
      spec.workspace,
      // The server's data directory, when it lies in the workspace (the default ./.a3s), is covered: nothing of it is
      // readable, writable or linkable inside.
      ...(spec.hidden ?? []).flatMap((dir) => ['--perms', '0555', '--size', '4096', '--tmpfs', dir]),
      '--chdir',
      spec.cwd,
      '--',
      ...spec.argv,
    ];
    // Every bind source, the workspace's descriptor included, is checked: nothing shows the host's procfs.
    assertBwrapBindsSafe(args, new Map([['3', spec.workspaceFd]]), this.procMounts);
    const cgroup = await cgroups.create(limits);
    // Opened by the server: the wrapper, spawned as run_as already, joins through them (fds 4 and 5).
    let joins: FileHandle[];
    try {
      joins = await Promise.all((cgroup?.procsFiles ?? []).map((file) => open(file, 'w')));
    } catch (error) {
      await cgroup?.release();
      throw error;
    }
    return {
      kind: 'bwrap',
      file: '/bin/sh',
      args: [
        '-c',
        WRAPPER,
        'sandbox-wrapper',
        String(joins.length),
        runAs ? path.join(stateDir, 'etc', 'passwd') : '-',
        String(limits.cpuSeconds),
        String(Math.floor(limits.addressSpaceBytes / 1024)),
        String(Math.max(1, Math.floor(this.options.maxFileBytes / this.options.fileBlockBytes))),
        bwrap,
        ...args,
      ],
      env: runAs
        ? { ...commandEnvironment(SANDBOX_HOME, '/tmp', spec.env), ...TRUST_WORKSPACE_REPOSITORIES }
        : commandEnvironment(SANDBOX_HOME, '/tmp', spec.env),
      // The wrapper starts at / (it must not leak the data directory's path as $PWD); the command's cwd is set inside (--chdir).
      cwd: '/',
      inheritFds: [spec.workspaceFd, ...joins.map((handle) => handle.fd)],
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      release: async () => {
        await Promise.all(joins.map((handle) => handle.close().catch(() => undefined)));
        await cgroup?.release();
      },
      ...(cgroup ? { signalCommand: (signal: NodeJS.Signals) => cgroup.signalMembers(signal) } : {}),
    };
  }

  /**
   * A server command (change capture's git): the base namespaces (no network), the workspace's held descriptor
   * bound read-only (`--ro-bind-fd`: nothing the command does can change it; read-write only for a revert's
   * restore, `workspaceWritable`), the one server directory bound
   * read-write, no $HOME (a private /tmp only), exactly the given environment, the wrapper's rlimits (no cgroup).
   */
  async prepareServerCommand(spec: ServerCommandSpec): Promise<PreparedCommand> {
    const { stateDir, limits, bwrap, runAs } = this.options;
    this.etcReady ??= this.writeEtc();
    await this.etcReady;
    const args = [
      ...BwrapSandbox.baseArgs(),
      '--ro-bind',
      path.join(stateDir, 'etc', 'passwd'),
      '/etc/passwd',
      '--ro-bind',
      path.join(stateDir, 'etc', 'group'),
      '/etc/group',
      spec.workspaceWritable ? '--bind-fd' : '--ro-bind-fd',
      '3',
      spec.workspace,
      ...(spec.hidden ?? []).flatMap((dir) => ['--perms', '0555', '--size', '4096', '--tmpfs', dir]),
      spec.storeReadOnly ? '--ro-bind' : '--bind',
      spec.writable.host,
      spec.writable.inside,
      '--chdir',
      spec.workspace,
      '--',
      ...spec.argv,
    ];
    assertBwrapBindsSafe(args, new Map([['3', spec.workspaceFd]]), this.procMounts);
    return {
      kind: 'bwrap',
      file: '/bin/sh',
      args: [
        '-c',
        WRAPPER,
        'sandbox-wrapper',
        '0',
        runAs ? path.join(stateDir, 'etc', 'passwd') : '-',
        String(limits.cpuSeconds),
        String(Math.floor(limits.addressSpaceBytes / 1024)),
        String(Math.max(1, Math.floor(this.options.maxFileBytes / this.options.fileBlockBytes))),
        bwrap,
        ...args,
      ],
      env: { ...spec.env, PATH: SANDBOX_PATH, HOME: '/tmp', TMPDIR: '/tmp', LANG: 'C.UTF-8' },
      cwd: '/',
      inheritFds: [spec.workspaceFd],
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      release: () => Promise.resolve(),
    };
  }

  homeOf(tenantId: string, sessionId: string): string {
    return this.homes.pathOf(tenantId, sessionId);
  }

  removeHome(tenantId: string, sessionId: string): Promise<void> {
    return this.homes.remove(tenantId, sessionId);
  }

  /** The generated passwd and group (public content: readable by run_as, whose bwrap opens them by path). */
  private async writeEtc(): Promise<void> {
    const etc = path.join(this.options.stateDir, 'etc');
    await mkdir(etc, { recursive: true, mode: 0o700 });
    if (this.options.runAs) await chmod(etc, 0o711);
    await writeFile(path.join(etc, 'passwd'), PASSWD, { mode: 0o644 });
    await writeFile(path.join(etc, 'group'), GROUP, { mode: 0o644 });
  }
}
