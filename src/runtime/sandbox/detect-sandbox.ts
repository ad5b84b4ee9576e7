import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { BwrapSandbox } from './bwrap-sandbox.js';
import { CgroupLimits, type CgroupVersion } from './cgroup-limits.js';
import { NoneSandbox } from './none-sandbox.js';
import type { Sandbox, SandboxLimits } from './sandbox.js';

/** How long the trivial `bwrap ... true` may take at start. */
const PROBE_TIMEOUT_MS = 10_000;

/** What detection found: the sandbox to use, the cgroup version bounding it, and why bwrap is not used. */
export interface DetectedSandbox {
  readonly sandbox: Sandbox;
  readonly cgroups: CgroupVersion;
  /** Why bubblewrap is not usable (absent when it is). */
  readonly problem?: string;
  /** Why cgroups are not usable (commands then get only rlimit bounds, no pids.max or memory bound). */
  readonly cgroupProblem?: string;
  /** Remove the server's cgroup parent (at shutdown). */
  dispose(): Promise<void>;
}

async function findBwrap(searchPath: string): Promise<string | undefined> {
  for (const dir of [...searchPath.split(':').filter(Boolean), '/usr/bin', '/bin']) {
    const candidate = path.join(dir, 'bwrap');
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

function probe(bwrap: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(bwrap, [...BwrapSandbox.baseArgs(), '--', '/usr/bin/true'], { env: { PATH: '/usr/bin:/bin' }, timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      resolve(error ? `bwrap does not work here (user namespaces off?): ${String(stderr).trim() || error.message}` : undefined);
    });
  });
}

/**
 * Check that bwrap exists and a trivial `bwrap ... true` runs (user namespaces on), and set up the
 * server's cgroup parent. `disabled` skips the probe (the none sandbox, e.g. for a benchmark's baseline).
 */
export async function detectSandbox(options: { stateDir: string; limits: SandboxLimits; readOnlyPaths?: readonly string[]; disabled?: boolean }): Promise<DetectedSandbox> {
  const none = { sandbox: new NoneSandbox(), cgroups: 'none' as const, dispose: () => Promise.resolve() };
  if (options.disabled) return { ...none, problem: 'disabled' };
  const bwrap = await findBwrap(process.env.PATH ?? '');
  if (!bwrap) return { ...none, problem: 'bwrap (Debian package bubblewrap) is not installed' };
  const problem = await probe(bwrap);
  if (problem) return { ...none, problem };
  const { limits: cgroups, problem: cgroupProblem } = await CgroupLimits.detect();
  return {
    sandbox: new BwrapSandbox({ bwrap, stateDir: path.resolve(options.stateDir), limits: options.limits, cgroups, readOnlyPaths: options.readOnlyPaths ?? [] }),
    cgroups: cgroups.version,
    ...(cgroupProblem ? { cgroupProblem } : {}),
    dispose: () => cgroups.dispose(),
  };
}
