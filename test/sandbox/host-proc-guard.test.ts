import { mkdirSync, openSync, closeSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { BwrapSandbox } from '../../src/runtime/sandbox/bwrap-sandbox.js';
import { CgroupLimits } from '../../src/runtime/sandbox/cgroup-limits.js';
import {
  assertBwrapBindsSafe,
  HostProcBindError,
  hostProcProblem,
  lexicalHostProcProblem,
  procMountPoints,
} from '../../src/runtime/sandbox/host-proc-guard.js';
import { startSandbox } from '../../src/runtime/sandbox/start-sandbox.js';
import { tempDir } from '../support/test-server.js';

const LIMITS = { pidsMax: 32, memoryBytes: 64 * 1024 * 1024, cpuSeconds: 2, addressSpaceBytes: 1024 * 1024 * 1024 };

function sandboxWith(readOnlyPaths: string[]): BwrapSandbox {
  return new BwrapSandbox({
    bwrap: '/usr/bin/bwrap',
    stateDir: tempDir('a3s-guard-state-'),
    limits: LIMITS,
    cgroups: CgroupLimits.none(),
    readOnlyPaths,
    maxFileBytes: 1 << 20,
    fileBlockBytes: 512,
  });
}

describe('the sandbox never binds the host /proc', () => {
  it('finds the proc mounts of this machine (at least /proc)', () => {
    expect(procMountPoints()).toContain('/proc');
    expect(
      procMountPoints('36 25 0:5 / /mnt/host\\040proc rw - proc proc rw\n37 25 0:6 / /sys rw - sysfs sysfs rw\n'),
    ).toEqual(['/proc', '/mnt/host proc']);
  });

  it.each([
    '/',
    '//',
    '/proc',
    '/proc/',
    '/proc//',
    '/proc/.',
    '/proc/../proc',
    '/proc/self/environ',
    '/proc/1/environ',
    '/./proc',
    '/usr/../proc/self',
    '/proc/self/root',
  ])('refuses %j by its text (config validation)', (where) => {
    expect(lexicalHostProcProblem(where)).toMatch(/never bound/);
  });

  it.each(['/opt/node', '/usr/local', '/procfs', '/home/proc', '/opt/proc'])('accepts %j', (where) => {
    expect(lexicalHostProcProblem(where)).toBeUndefined();
    expect(hostProcProblem(where)).toBeUndefined();
  });

  it('refuses a symlink to /proc, to /proc/self/environ, to / and a path through a symlinked directory', () => {
    const dir = tempDir('a3s-guard-links-');
    symlinkSync('/proc', path.join(dir, 'toolchain'));
    symlinkSync('/proc/self/environ', path.join(dir, 'env'));
    symlinkSync('/', path.join(dir, 'root'));
    symlinkSync(dir, path.join(dir, 'loop'));
    for (const where of [
      path.join(dir, 'toolchain'),
      `${path.join(dir, 'toolchain')}/`,
      path.join(dir, 'env'),
      path.join(dir, 'root'),
      path.join(dir, 'loop', 'toolchain', 'self'),
    ]) {
      expect(lexicalHostProcProblem(where)).toBeUndefined();
      expect(hostProcProblem(where)).toMatch(/resolves to \/(proc)?/);
    }
  });

  it('refuses a directory a proc file system is mounted below (binds are recursive)', () => {
    const mounts = procMountPoints(
      '22 1 0:21 / /proc rw - proc proc rw\n40 30 0:44 / /srv/chroot/proc rw - proc proc rw\n',
    );
    expect(hostProcProblem('/srv/chroot', mounts)).toMatch(/\/srv\/chroot\/proc/);
    expect(hostProcProblem('/srv', mounts)).toMatch(/\/srv\/chroot\/proc/);
    expect(hostProcProblem('/srv/chroot/usr', mounts)).toBeUndefined();
  });

  it('the sandbox refuses such read_only_paths when built, and every bwrap bind source when a command is prepared', () => {
    expect(() => sandboxWith(['/opt', '/proc/'])).toThrow(HostProcBindError);
    const rootFd = openSync('/', 'r');
    const procFd = openSync('/proc/self', 'r');
    try {
      expect(() =>
        assertBwrapBindsSafe(['--ro-bind', '/usr', '/usr', '--bind-fd', '3', '/work'], new Map([['3', rootFd]])),
      ).toThrow(/"\/" would show/);
      expect(() =>
        assertBwrapBindsSafe(
          ['--ro-bind-try', '/etc/hosts', '/etc/hosts', '--ro-bind-fd', '3', '/x'],
          new Map([['3', procFd]]),
        ),
      ).toThrow(HostProcBindError);
      expect(() => assertBwrapBindsSafe(['--dev-bind', '/proc/1/environ', '/e'], new Map())).toThrow(HostProcBindError);
      // What the command's own arguments say after `--` is not a bind.
      expect(() =>
        assertBwrapBindsSafe(['--ro-bind', '/usr', '/usr', '--', 'cat', '--bind', '/proc'], new Map()),
      ).not.toThrow();
    } finally {
      closeSync(rootFd);
      closeSync(procFd);
    }
  });

  it('a command whose workspace is / is refused before it runs', async () => {
    const sandbox = sandboxWith([]);
    const workspaceFd = openSync('/', 'r');
    try {
      await expect(
        sandbox.prepare({
          argv: ['true'],
          workspace: '/',
          workspaceFd,
          cwd: '/',
          tenantId: 'default',
          sessionId: 'guard',
          env: {},
          network: 'none',
        }),
      ).rejects.toThrow(HostProcBindError);
    } finally {
      closeSync(workspaceFd);
    }
  });

  it('the server refuses to start with a read_only_paths symlink to /proc, naming the field', async () => {
    const dir = tempDir('a3s-guard-start-');
    mkdirSync(path.join(dir, 'data'));
    symlinkSync('/proc', path.join(dir, 'opt-tools'));
    const config = await loadConfig({
      cwd: dir,
      env: { A3S_DATA_DIR: path.join(dir, 'data'), A3S_SANDBOX_READ_ONLY_PATHS: path.join(dir, 'opt-tools') },
    });
    await expect(startSandbox(config, pino({ level: 'silent' }))).rejects.toMatchObject({
      code: 'SESSION_INITIALIZATION_ERROR',
      details: { field: 'sandbox.read_only_paths' },
    });
  });
});
