import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  canMakeContainerConditions,
  startContained,
  type ContainerConditions,
} from '../deploy/container-conditions.js';
import { listening, type MainProcess } from '../support/main-process.js';
import { tempDir } from '../support/test-server.js';
import { bwrapWorks } from './sandbox-helpers.js';

const VITE_NODE = join(process.cwd(), 'node_modules', 'vite-node', 'vite-node.mjs');
const MAIN = join(process.cwd(), 'src', 'main.ts');
const TOKENS = JSON.stringify([
  { token: 'startup-token-0123456789', principal: 'op', tenantId: 'default', scopes: ['sessions'] },
]);
const CAN = canMakeContainerConditions() && bwrapWorks();
if (!CAN) console.warn('sandbox startup tests skipped: they need root (unshare, setpriv) and a working bwrap');

/** src/main.ts with tokens (so sandbox.mode defaults to required) under a container's conditions. */
function startServer(conditions: ContainerConditions, extra: Record<string, string> = {}): MainProcess {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tempDir('a3s-startup-home-'),
    A3S_LOG_LEVEL: 'info',
    A3S_PORT: '0',
    A3S_STORAGE_BACKEND: 'memory',
    A3S_DATA_DIR: tempDir('a3s-startup-data-'),
    A3S_WORKSPACE_ROOTS: tempDir('a3s-startup-ws-'),
    A3S_API_TOKENS: TOKENS,
    ...extra,
  };
  return startContained([process.execPath, VITE_NODE, MAIN], env, conditions);
}

describe.skipIf(!CAN)(
  'sandbox.mode "required" at start: a fresh /proc and a writable cgroup, or sandbox.cgroups = "optional"',
  () => {
    const procs: MainProcess[] = [];
    afterEach(async () => {
      for (const proc of procs.splice(0)) {
        if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
        await proc.exited;
      }
    });

    it('refuses to start when the container masks /proc (bwrap cannot mount a fresh procfs), saying so', async () => {
      const proc = startServer({ maskProc: true });
      procs.push(proc);
      expect(await proc.exited).toBe(1);
      expect(proc.stderr).toContain('bwrap cannot mount a fresh /proc');
      // bwrap's own words in a container ("mount too revealing" in the kernel).
      expect(proc.stderr).toContain("Can't mount proc");
      expect(proc.stderr).toContain('systempaths=unconfined');
      expect(proc.stderr).not.toContain('cannot create its namespaces');
    }, 60_000);

    it('refuses to start when /proc/sys is read-only (bwrap cannot forbid nested user namespaces), saying so', async () => {
      const proc = startServer({ readOnlyProcSys: true });
      procs.push(proc);
      expect(await proc.exited).toBe(1);
      expect(proc.stderr).toContain('bwrap cannot forbid nested user namespaces');
      expect(proc.stderr).toContain('max_user_namespaces');
      expect(proc.stderr).toContain('systempaths=unconfined');
    }, 60_000);

    it('Docker\'s default /proc (masked and read-only) with sandbox.cgroups = "optional" still refuses: the /proc part is not optional', async () => {
      const proc = startServer({ maskProc: true, readOnlyProcSys: true }, { A3S_SANDBOX_CGROUPS: 'optional' });
      procs.push(proc);
      expect(await proc.exited).toBe(1);
      expect(proc.stderr).toMatch(/bwrap cannot (mount a fresh \/proc|forbid nested user namespaces)/);
      expect(proc.stderr).toContain('systempaths=unconfined');
    }, 60_000);

    it('refuses to start without a writable cgroup (read-only cgroup file system), naming sandbox.cgroups', async () => {
      const proc = startServer({ readOnlyCgroups: true });
      procs.push(proc);
      expect(await proc.exited).toBe(1);
      expect(proc.stderr).toContain('sandbox.cgroups is "required"');
      expect(proc.stderr).toContain('A3S_SANDBOX_CGROUPS=optional');
    }, 60_000);

    it('starts with A3S_SANDBOX_CGROUPS=optional and a read-only cgroup file system, warning that only rlimits bound commands', async () => {
      const proc = startServer({ readOnlyCgroups: true }, { A3S_SANDBOX_CGROUPS: 'optional' });
      procs.push(proc);
      const url = await listening(proc);
      const warning = proc.stdout.split('\n').find((line) => line.includes('cgroups are not writable'));
      expect(warning).toBeDefined();
      expect(JSON.parse(warning as string)).toMatchObject({ level: 40, cgroups: 'optional' });
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ sandbox: 'bwrap' });
    }, 60_000);

    it('sandbox.mode = "auto" with a masked /proc starts without a sandbox and says why', async () => {
      const proc = startServer({ maskProc: true }, { A3S_SANDBOX_MODE: 'auto' });
      procs.push(proc);
      const url = await listening(proc);
      expect(proc.stdout).toContain('bwrap cannot mount a fresh /proc');
      expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({ sandbox: 'none' });
    }, 60_000);

    it('a bad A3S_SANDBOX_CGROUPS stops the start naming the variable', async () => {
      const proc = startServer({}, { A3S_SANDBOX_CGROUPS: 'sometimes' });
      procs.push(proc);
      expect(await proc.exited).toBe(2);
      expect(proc.stderr).toContain('A3S_SANDBOX_CGROUPS: sandbox.cgroups');
    }, 60_000);
  },
);
