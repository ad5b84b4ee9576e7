import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { MainProcess } from '../support/main-process.js';

/**
 * What a container does to a process that matters to the sandbox, made on this machine in a private mount namespace
 * (`unshare -m`, as root) before the process starts:
 * - `maskProc`: Docker's masked paths (`/proc/keys`, `/proc/timer_list`, ... covered, `/proc/acpi` and `/proc/scsi` by
 *   an empty tmpfs): the kernel then refuses bwrap a fresh procfs, as in a container without `systempaths=unconfined`;
 * - `readOnlyProcSys`: Docker's read-only `/proc/sys`, `/proc/bus`, `/proc/fs`, `/proc/irq` (also lifted by
 *   `systempaths=unconfined`);
 * - `readOnlyCgroups`: `/sys/fs/cgroup` read-only (Docker mounts the container's cgroup file system so);
 * - `pidNamespace`: the process is pid 1 of its own PID namespace with its own /proc, as a container's command is
 *   (`unshare --pid --fork --mount-proc`); `serverPid` then finds its pid on this machine;
 * - `uid`/`gid`: the process runs as that user (the image's `USER node`, uid 1000), after the mounts.
 */
export interface ContainerConditions {
  readonly maskProc?: boolean;
  readonly readOnlyProcSys?: boolean;
  readonly readOnlyCgroups?: boolean;
  readonly pidNamespace?: boolean;
  readonly uid?: number;
  readonly gid?: number;
}

const MASKED_FILES = [
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
];
const MASKED_DIRS = ['/proc/acpi', '/proc/scsi'];
const READ_ONLY = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys'];

/** The shell script that sets the conditions up and then execs its arguments. */
function setupScript(conditions: ContainerConditions): string {
  const steps: string[] = [];
  if (conditions.maskProc) {
    for (const file of MASKED_FILES.filter((where) => existsSync(where))) steps.push(`mount --bind /dev/null ${file}`);
    for (const dir of MASKED_DIRS.filter((where) => existsSync(where))) steps.push(`mount -t tmpfs -o ro tmpfs ${dir}`);
  }
  if (conditions.readOnlyProcSys) {
    for (const dir of READ_ONLY.filter((where) => existsSync(where)))
      steps.push(`mount --bind ${dir} ${dir} && mount -o remount,bind,ro ${dir}`);
  }
  if (conditions.readOnlyCgroups) steps.push('mount -t tmpfs -o ro,mode=755 tmpfs /sys/fs/cgroup');
  const user =
    conditions.uid === undefined
      ? ''
      : `setpriv --reuid ${conditions.uid} --regid ${conditions.gid ?? conditions.uid} --clear-groups `;
  return [...steps, `exec ${user}"$@"`].join(' && ');
}

/** Start `argv` under the container's conditions with only `env`; output collected as startMain does. */
export function startContained(
  argv: readonly string[],
  env: Record<string, string>,
  conditions: ContainerConditions,
  cwd: string = process.cwd(),
): MainProcess {
  const pid = conditions.pidNamespace ? ['--pid', '--fork', '--mount-proc'] : [];
  const child = spawn(
    'unshare',
    ['--mount', '--propagation', 'private', ...pid, 'sh', '-c', setupScript(conditions), 'container', ...argv],
    { env, cwd },
  );
  const proc: MainProcess = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
  child.stdout.on('data', (data: Buffer) => (proc.stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (proc.stderr += data.toString()));
  return proc;
}

/**
 * The pid on this machine of the process startContained started: the child's own, or with `pidNamespace` the one
 * child of unshare (pid 1 inside).
 */
export function serverPid(proc: MainProcess, conditions: ContainerConditions): number {
  const own = proc.child.pid as number;
  if (!conditions.pidNamespace) return own;
  const children = readFileSync(`/proc/${own}/task/${own}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  if (children.length !== 1) throw new Error(`unshare ${own} has children [${children.join(', ')}], expected one`);
  return Number(children[0]);
}

/** True when this machine can make the conditions (root, unshare and setpriv): the tests that need them skip otherwise. */
export function canMakeContainerConditions(): boolean {
  return process.getuid?.() === 0 && existsSync('/usr/bin/unshare') && existsSync('/usr/bin/setpriv');
}
