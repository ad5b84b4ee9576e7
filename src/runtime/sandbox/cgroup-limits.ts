import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { SandboxLimits } from './sandbox.js';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** Parents are named `a3s-sandbox-<server pid>-<n>`. */
const PARENT_PREFIX = 'a3s-sandbox-';
let instances = 0;
/** How long release waits for killed members to leave a command's cgroup before removing it anyway. */
const DRAIN_WAIT_MS = 2_000;

/** One command's cgroup(s): the files its first process writes its pid into, and how to kill and remove them. */
export interface CommandCgroup {
  /** `cgroup.procs` files (one per hierarchy on v1, one on v2) the command's first process joins. */
  readonly procsFiles: readonly string[];
  /** Kill every process still in the cgroup(s), then remove them. */
  release(): Promise<void>;
  /** Signal the members that are not bwrap itself; false when there were none. */
  signalMembers(signal: NodeJS.Signals): boolean;
}

/** Which cgroup hierarchy bounds commands: v2 (unified), v1 (pids + memory hierarchies), or none. */
export type CgroupVersion = 'v2' | 'v1' | 'none';

async function ownPath(controller: string | null): Promise<string> {
  const text = await readFile('/proc/self/cgroup', 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [, controllers, where] = line.split(':');
    if (where === undefined) continue;
    if (controller === null ? controllers === '' : controllers?.split(',').includes(controller)) return where;
  }
  return '/';
}

async function killMembers(dir: string): Promise<void> {
  const deadline = Date.now() + DRAIN_WAIT_MS;
  for (;;) {
    const text = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    const pids = text
      .split('\n')
      .filter((line) => /^\d+$/.test(line))
      .map(Number);
    if (pids.length === 0 || Date.now() > deadline) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await delay(10);
  }
}

function signalNonSandbox(dir: string, signal: NodeJS.Signals): boolean {
  let text = '';
  try {
    text = readFileSync(path.join(dir, 'cgroup.procs'), 'utf8');
  } catch {
    return false;
  }
  let signalled = false;
  for (const line of text.split('\n')) {
    if (!/^\d+$/.test(line)) continue;
    let comm = '';
    try {
      comm = readFileSync(`/proc/${line}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm === 'bwrap') continue;
    try {
      process.kill(Number(line), signal);
      signalled = true;
    } catch {
      // already gone
    }
  }
  return signalled;
}

/** Remove empty parents left by servers that died without disposing theirs (their pid is gone). */
async function removeStaleParents(dirs: readonly string[]): Promise<void> {
  for (const dir of dirs) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const pid = Number(/^a3s-sandbox-(\d+)(?:-\d+)?$/.exec(name)?.[1]);
      if (!pid || pid === process.pid || existsSync(`/proc/${pid}`)) continue;
      const parent = path.join(dir, name);
      for (const child of await readdir(parent).catch(() => [] as string[])) {
        if (child.startsWith('cmd-')) await rmdir(path.join(parent, child)).catch(() => undefined);
      }
      await rmdir(parent).catch(() => undefined);
    }
  }
}

async function removeDir(dir: string): Promise<void> {
  const deadline = Date.now() + DRAIN_WAIT_MS;
  for (;;) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      // EBUSY while killed members are still leaving.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || Date.now() > deadline) return;
      await delay(10);
    }
  }
}

/** A directory made in a cgroup file system has its controllers' files; one elsewhere (not a cgroup) has none. */
function expectFile(file: string): void {
  if (!existsSync(file))
    throw new Error(`${file} is missing: ${path.dirname(file)} is not in a cgroup file system with that controller`);
}

async function expectControllers(dir: string, wanted: readonly string[]): Promise<void> {
  const text = await readFile(path.join(dir, 'cgroup.controllers'), 'utf8').catch(() => '');
  const missing = wanted.filter((name) => !text.split(/\s+/).includes(name));
  if (missing.length > 0) throw new Error(`${dir}: controllers ${missing.join(', ')} are not delegated to it`);
}

/**
 * Enable pids and memory for the children of our own (delegated) cgroup. v2 allows that only in a cgroup
 * without processes of its own, so on EBUSY the server first moves itself into a leaf beside the parent.
 */
async function enableV2Controllers(own: string, name: string): Promise<void> {
  const control = path.join(own, 'cgroup.subtree_control');
  try {
    await writeFile(control, '+pids +memory');
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EBUSY') throw error;
  }
  const leaf = path.join(own, `${name}-server`);
  await mkdir(leaf, { recursive: true });
  await writeFile(path.join(leaf, 'cgroup.procs'), String(process.pid));
  await writeFile(control, '+pids +memory');
}

/**
 * Per-command cgroups under one parent this server owns (`a3s-sandbox-<pid>` below its own cgroup):
 * pids.max bounds fork bombs (RLIMIT_NPROC does not, inside a user namespace as root), memory.max bounds
 * memory, and release kills every member, so nothing a command started outlives it.
 */
export class CgroupLimits {
  private counter = 0;

  private constructor(
    readonly version: CgroupVersion,
    /** v2: [parent]; v1: [pids parent, memory parent]. */
    private readonly parents: readonly string[],
  ) {}

  /** No cgroups: commands get only their rlimits. */
  static none(): CgroupLimits {
    return new CgroupLimits('none', []);
  }

  /** Find a writable hierarchy and create the server's parent; `none` when cgroups cannot be used. */
  static async detect(): Promise<{ limits: CgroupLimits; problem?: string }> {
    // One parent per server (several may run in one process, e.g. tests): its own name, removed at dispose.
    instances += 1;
    const name = `${PARENT_PREFIX}${process.pid}-${instances}`;
    try {
      if (existsSync(path.join(CGROUP_ROOT, 'cgroup.controllers'))) {
        const own = path.join(CGROUP_ROOT, await ownPath(null));
        await enableV2Controllers(own, name);
        const parent = path.join(own, name);
        await mkdir(parent, { recursive: true });
        await writeFile(path.join(parent, 'cgroup.subtree_control'), '+pids +memory');
        await expectControllers(parent, ['pids', 'memory']);
        return { limits: new CgroupLimits('v2', [parent]) };
      }
      const pids = path.join(CGROUP_ROOT, 'pids', await ownPath('pids'), name);
      const memory = path.join(CGROUP_ROOT, 'memory', await ownPath('memory'), name);
      await removeStaleParents([path.dirname(pids), path.dirname(memory)]);
      await mkdir(pids, { recursive: true });
      await mkdir(memory, { recursive: true });
      expectFile(path.join(pids, 'pids.max'));
      expectFile(path.join(memory, 'memory.limit_in_bytes'));
      return { limits: new CgroupLimits('v1', [pids, memory]) };
    } catch (error) {
      return { limits: new CgroupLimits('none', []), problem: error instanceof Error ? error.message : String(error) };
    }
  }

  /** A cgroup limited as asked for one command; undefined without cgroups. */
  async create(limits: SandboxLimits): Promise<CommandCgroup | undefined> {
    if (this.version === 'none') return undefined;
    this.counter += 1;
    const leaf = `cmd-${this.counter}`;
    const dirs = this.parents.map((parent) => path.join(parent, leaf));
    try {
      for (const dir of dirs) await mkdir(dir);
      if (this.version === 'v2') {
        const [dir] = dirs as [string];
        await writeFile(path.join(dir, 'pids.max'), String(limits.pidsMax));
        await writeFile(path.join(dir, 'memory.max'), String(limits.memoryBytes));
        await writeFile(path.join(dir, 'memory.swap.max'), '0').catch(() => undefined);
      } else {
        const [pids, memory] = dirs as [string, string];
        await writeFile(path.join(pids, 'pids.max'), String(limits.pidsMax));
        await writeFile(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      }
    } catch (error) {
      await Promise.all(dirs.map((dir) => removeDir(dir)));
      throw error;
    }
    const version = this.version;
    return {
      procsFiles: dirs.map((dir) => path.join(dir, 'cgroup.procs')),
      signalMembers: (signal) => signalNonSandbox(dirs[0] as string, signal),
      release: async () => {
        for (const dir of dirs) {
          if (version === 'v2') await writeFile(path.join(dir, 'cgroup.kill'), '1').catch(() => undefined);
          await killMembers(dir);
          await removeDir(dir);
        }
      },
    };
  }

  /** Remove the server's parent cgroup(s) (at shutdown; children are removed after each command). */
  async dispose(): Promise<void> {
    for (const parent of this.parents) await removeDir(parent);
  }
}
