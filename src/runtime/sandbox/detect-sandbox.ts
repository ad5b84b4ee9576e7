import { execFile, spawn } from 'node:child_process';
import { access, chmod, constants, lstat, mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { BwrapSandbox } from './bwrap-sandbox.js';
import { CgroupLimits, type CgroupVersion } from './cgroup-limits.js';
import { NoneSandbox } from './none-sandbox.js';
import { searchableBy, type RunAsUser } from './run-as.js';
import type { Sandbox, SandboxLimits } from './sandbox.js';

/** How long the trivial `bwrap ... true` may take at start. */
const PROBE_TIMEOUT_MS = 10_000;

/** What detection found: the sandbox to use, the cgroup version bounding it, and why bwrap is not used. */
export interface DetectedSandbox {
  readonly sandbox: Sandbox;
  readonly cgroups: CgroupVersion;
  /** Why bubblewrap is not usable (absent when it is). */
  readonly problem?: string;
  /** Which part the problem is in (absent when bwrap works, or detection was disabled). */
  readonly problemPart?: SandboxProblemPart;
  /** Why cgroups are not usable (commands then get only rlimit bounds, no pids.max or memory bound). */
  readonly cgroupProblem?: string;
  /** What detection changed on disk for run_as (logged at start). */
  readonly notes?: readonly string[];
  /** Remove the server's cgroup parent (at shutdown). */
  dispose(): Promise<void>;
}

async function findProgram(name: string, searchPath: string): Promise<string | undefined> {
  for (const dir of [...searchPath.split(':').filter(Boolean), '/usr/bin', '/bin']) {
    const candidate = path.join(dir, name);
    if (!path.isAbsolute(candidate)) continue;
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

function run(
  file: string,
  args: readonly string[],
  user?: RunAsUser,
): Promise<{ error?: Error; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      [...args],
      { env: { PATH: '/usr/bin:/bin' }, timeout: PROBE_TIMEOUT_MS, ...(user ? { uid: user.uid, gid: user.gid } : {}) },
      (error, stdout, stderr) =>
        resolve({ ...(error ? { error } : {}), stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** Which part of bwrap failed at start: its namespaces, or the fresh /proc of its PID namespace. */
export type SandboxProblemPart = 'bwrap' | 'namespaces' | 'proc' | 'run_as';

/**
 * Three trivial `bwrap ... true`, so the problem names the part that failed: the namespaces alone; then
 * `--disable-userns`, which writes /proc/sys/user/max_user_namespaces (read-only in a container by default); then
 * the fresh /proc of the sandbox's PID namespace. A container masks parts of the host's /proc (Docker's default;
 * Kubernetes' default procMount), and the kernel then refuses a new procfs ("mount too revealing": bwrap says "Can't
 * mount proc on /newroot/proc: Operation not permitted"), even when seccomp allows the mount.
 */
async function probe(
  bwrap: string,
  user: RunAsUser | undefined,
): Promise<{ problem: string; part: SandboxProblemPart } | undefined> {
  const unmask =
    "a container masks parts of /proc and makes /proc/sys read-only: run it with systempaths=unconfined, or procMount: Unmasked in Kubernetes; the host's /proc is never bound instead";
  const steps = [
    {
      part: 'namespaces',
      args: BwrapSandbox.baseArgs({ freshProc: false, disableUserns: false }),
      says: 'bwrap cannot create its namespaces (user namespaces off, or blocked by seccomp: in a container use deploy/seccomp-bwrap.json)',
    },
    {
      part: 'proc',
      args: BwrapSandbox.baseArgs({ freshProc: false }),
      says: `bwrap cannot forbid nested user namespaces in the sandbox (it writes /proc/sys/user/max_user_namespaces; ${unmask})`,
    },
    {
      part: 'proc',
      args: BwrapSandbox.baseArgs(),
      says: `bwrap cannot mount a fresh /proc for the sandbox (${unmask})`,
    },
  ] as const;
  for (const step of steps) {
    const { error, stderr } = await run(bwrap, [...step.args, '--', '/usr/bin/true'], user);
    if (error) return { part: step.part, problem: `${step.says}: ${stderr.trim() || error.message}` };
  }
  return undefined;
}

/**
 * Can a process spawned as run_as join a cgroup through a cgroup.procs descriptor the server opened? The kernel checks
 * the opener's credentials (Linux 5.16, and the stable kernels that took that fix); before, it checked the writer's.
 */
async function joinsAs(cgroups: CgroupLimits, limits: SandboxLimits, user: RunAsUser): Promise<string | undefined> {
  const cgroup = await cgroups.create(limits);
  if (!cgroup) return undefined;
  const handles = await Promise.all(cgroup.procsFiles.map((file) => open(file, 'w')));
  try {
    const script = handles.map((_, index) => `echo $$ >&${index + 3}`).join(' && ');
    const failed = await new Promise<string | undefined>((resolve) => {
      const child = spawn('/bin/sh', ['-c', script], {
        env: { PATH: '/usr/bin:/bin' },
        uid: user.uid,
        gid: user.gid,
        stdio: ['ignore', 'ignore', 'pipe', ...handles.map((handle) => handle.fd)],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', (error) => resolve(error.message));
      child.on('close', (code) => resolve(code === 0 ? undefined : stderr.trim() || `exit ${code}`));
    });
    return (
      failed &&
      `a process of sandbox.run_as "${user.name}" cannot join its cgroup through the server's descriptor (kernel older than 5.16?): ${failed}`
    );
  } finally {
    await Promise.all(handles.map((handle) => handle.close()));
    await cgroup.release();
  }
}

/** Bytes per block of `ulimit -f` in /bin/sh (the wrapper's shell): 512 for dash and POSIX-mode bash, read back from the kernel. */
export async function fileBlockBytes(): Promise<number> {
  const { stdout } = await run('/bin/sh', ['-c', 'ulimit -f 1 && exec cat /proc/self/limits']);
  const match = /^Max file size\s+(\d+)/m.exec(stdout);
  return match ? Number(match[1]) : 512;
}

/**
 * With run_as, bwrap opens the home and the generated passwd by path as that user: the state directory becomes 0711
 * (it passes through, lists nothing), and the data directory above it gains search permission for others when it lacks
 * it and is the server's own (every directory the server keeps in it is 0700). Answers what changed, or the problem.
 */
async function reachableStateDir(stateDir: string, user: RunAsUser): Promise<{ notes: string[]; problem?: string }> {
  const notes: string[] = [];
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await chmod(stateDir, 0o711);
  const dataDir = path.dirname(stateDir);
  if (!(await searchableBy(dataDir, user))) {
    const stats = await lstat(dataDir);
    if (stats.isDirectory() && stats.uid === process.getuid?.() && (stats.mode & 0o001) === 0) {
      await chmod(dataDir, (stats.mode & 0o7777) | 0o001);
      notes.push(
        `data directory ${dataDir}: search permission for others added (mode ${((stats.mode & 0o7777) | 0o001).toString(8)}) so sandbox.run_as "${user.name}" reaches its homes in ${stateDir}`,
      );
    }
  }
  if (!(await searchableBy(stateDir, user))) {
    return {
      notes,
      problem: `sandbox.run_as "${user.name}" (uid ${user.uid}) cannot reach ${stateDir}: a directory above it lacks search permission for that user`,
    };
  }
  return { notes };
}

/** Detection's options: the state directory, the per-command limits, and run_as when the server is root. */
export interface DetectOptions {
  readonly stateDir: string;
  readonly limits: SandboxLimits;
  readonly readOnlyPaths?: readonly string[];
  /** The largest file one command may write (limits.sandbox_home_bytes). */
  readonly maxFileBytes?: number;
  /** sandbox.run_as, resolved (root servers only): the wrapper and bwrap are spawned as this user. */
  readonly runAs?: RunAsUser;
  readonly disabled?: boolean;
}

/**
 * Check that bwrap exists and a trivial `bwrap ... true` runs (user namespaces on; as run_as when given), and set up
 * the server's cgroup parent. `disabled` skips the probe (the none sandbox, e.g. for a benchmark's baseline).
 */
export async function detectSandbox(options: DetectOptions): Promise<DetectedSandbox> {
  const none = { sandbox: new NoneSandbox(), cgroups: 'none' as const, dispose: () => Promise.resolve() };
  if (options.disabled) return { ...none, problem: 'disabled' };
  const bwrap = await findProgram('bwrap', process.env.PATH ?? '');
  if (!bwrap) return { ...none, problem: 'bwrap (Debian package bubblewrap) is not installed', problemPart: 'bwrap' };
  const { runAs } = options;
  let notes: string[] = [];
  if (runAs) {
    const reached = await reachableStateDir(path.resolve(options.stateDir), runAs);
    notes = reached.notes;
    if (reached.problem) return { ...none, problem: reached.problem, problemPart: 'run_as', notes };
  }
  const failed = await probe(bwrap, runAs);
  if (failed)
    return {
      ...none,
      problem: runAs ? `${failed.problem} (as sandbox.run_as "${runAs.name}")` : failed.problem,
      problemPart: failed.part,
      notes,
    };
  const detected = await CgroupLimits.detect();
  let { limits: cgroups } = detected;
  let cgroupProblem = detected.problem;
  if (runAs && cgroups.version !== 'none') {
    const joinProblem = await joinsAs(cgroups, options.limits, runAs).catch((error: unknown) => String(error));
    if (joinProblem) {
      await cgroups.dispose();
      cgroups = CgroupLimits.none();
      cgroupProblem = joinProblem;
    }
  }
  return {
    sandbox: new BwrapSandbox({
      bwrap,
      stateDir: path.resolve(options.stateDir),
      limits: options.limits,
      cgroups,
      readOnlyPaths: options.readOnlyPaths ?? [],
      maxFileBytes: options.maxFileBytes ?? Number.MAX_SAFE_INTEGER,
      fileBlockBytes: await fileBlockBytes(),
      ...(runAs ? { runAs } : {}),
    }),
    cgroups: cgroups.version,
    ...(cgroupProblem ? { cgroupProblem } : {}),
    notes,
    dispose: () => cgroups.dispose(),
  };
}
