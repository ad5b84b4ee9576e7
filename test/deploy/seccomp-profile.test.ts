import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../src/runtime/sandbox/detect-sandbox.js';
import { resolveRunAs } from '../../src/runtime/sandbox/run-as.js';
import { tempDir } from '../support/test-server.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';

/** A seccomp rule in Docker's profile format (moby's types.Syscall). */
interface Rule {
  names: string[];
  action: string;
  errnoRet?: number;
  args: { index: number; value: number; valueTwo?: number; op: string }[] | null;
  comment?: string;
  includes: { caps?: string[]; arches?: string[]; minKernel?: string };
  excludes: { caps?: string[]; arches?: string[]; minKernel?: string };
}
interface Profile {
  defaultAction: string;
  defaultErrnoRet?: number;
  archMap: { architecture: string; subArchitectures: string[] }[];
  syscalls: Rule[];
}

const PROFILE: Profile = JSON.parse(readFileSync('deploy/seccomp-bwrap.json', 'utf8'));
/** Docker's default profile as Debian bookworm ships it (golang-github-docker-docker-dev 20.10.24+dfsg1-1+deb12u1). */
const DOCKER_DEFAULT_SHA256 = 'af8fcb4cc4e869779f98c0dfb49ac6420c8ffc95cbdf5846bcfd93489b4b24c0';
/** Where scripts/install-test-deps.sh puts that file (extracted from the Debian package). */
const DOCKER_DEFAULT_FILE = '/usr/local/share/a3s-test/docker-default-seccomp.json';
const OURS = 'a3s-code-server:';
/** The capabilities Docker gives a container by default (compose adds none): its seccomp filter is built for them. */
const DOCKER_CAPS = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];
const ACTIONS = [
  'SCMP_ACT_KILL',
  'SCMP_ACT_KILL_PROCESS',
  'SCMP_ACT_KILL_THREAD',
  'SCMP_ACT_TRAP',
  'SCMP_ACT_ERRNO',
  'SCMP_ACT_TRACE',
  'SCMP_ACT_ALLOW',
  'SCMP_ACT_LOG',
  'SCMP_ACT_NOTIFY',
];
const OPS = [
  'SCMP_CMP_NE',
  'SCMP_CMP_LT',
  'SCMP_CMP_LE',
  'SCMP_CMP_EQ',
  'SCMP_CMP_GE',
  'SCMP_CMP_GT',
  'SCMP_CMP_MASKED_EQ',
];

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function kernelAtLeast(version: string): boolean {
  const [major = 0, minor = 0] = release()
    .split('.')
    .map((part) => parseInt(part, 10));
  const [wantMajor = 0, wantMinor = 0] = version.split('.').map((part) => parseInt(part, 10));
  return major > wantMajor || (major === wantMajor && minor >= wantMinor);
}

/** Does Docker put this rule in the filter of an amd64 container with these capabilities (moby's seccomp_linux.go)? */
function applies(rule: Rule, caps: readonly string[]): boolean {
  const { includes, excludes } = rule;
  if (includes.arches?.length && !includes.arches.includes('amd64')) return false;
  if (includes.caps?.length && !includes.caps.every((cap) => caps.includes(cap))) return false;
  if (includes.minKernel && !kernelAtLeast(includes.minKernel)) return false;
  if (excludes.arches?.includes('amd64')) return false;
  if (excludes.caps?.some((cap) => caps.includes(cap))) return false;
  return true;
}

/** What the filter does with a syscall whatever its arguments: allowed, denied, or only for some arguments. */
function verdict(profile: Profile, name: string, caps: readonly string[]): 'allowed' | 'denied' | 'conditional' {
  const rules = profile.syscalls.filter((rule) => rule.names.includes(name) && applies(rule, caps));
  if (rules.some((rule) => rule.action === 'SCMP_ACT_ALLOW' && !rule.args?.length)) return 'allowed';
  if (rules.some((rule) => rule.action === 'SCMP_ACT_ALLOW')) return 'conditional';
  return profile.defaultAction === 'SCMP_ACT_ALLOW' ? 'allowed' : 'denied';
}

/** Every syscall the server's real sandboxed command (wrapper, bwrap, the command) makes, as a non-root user, counted by strace. */
async function syscallsOfSandboxedCommand(): Promise<string[]> {
  const resolved = await resolveRunAs('a3s-sandbox', 0);
  if (!resolved.user)
    throw new Error(`no a3s-sandbox user (scripts/install-test-deps.sh creates it): ${resolved.problem}`);
  const detected = await detectSandbox({
    stateDir: join(tempDir('a3s-seccomp-state-'), 'sandbox'),
    limits: { pidsMax: 64, memoryBytes: 256 * 1024 * 1024, cpuSeconds: 10, addressSpaceBytes: 4096 * 1024 * 1024 },
    runAs: resolved.user,
  });
  expect(detected.sandbox.kind).toBe('bwrap');
  const workspace = tempDir('a3s-seccomp-ws-');
  chmodSync(workspace, 0o777);
  const workspaceFd = openSync(workspace, 'r');
  const out = join(tempDir('a3s-seccomp-out-'), 'strace.txt');
  try {
    const prepared = await detected.sandbox.prepare({
      argv: ['bash', '-c', 'echo hi > f && cat f && ls /proc/self/fd >/dev/null'],
      workspace,
      workspaceFd,
      cwd: workspace,
      tenantId: 'default',
      sessionId: 'seccomp',
      env: {},
      network: 'none',
    });
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(
        'strace',
        ['-f', '-qq', '-c', '-o', out, '-u', resolved.user.name, prepared.file, ...prepared.args],
        { env: prepared.env, cwd: prepared.cwd, stdio: ['ignore', 'ignore', 'inherit', ...prepared.inheritFds] },
      );
      child.on('close', resolve);
    });
    await prepared.release();
    expect(code).toBe(0);
  } finally {
    closeSync(workspaceFd);
    await detected.dispose();
  }
  const names = readFileSync(out, 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 5 && /^\d/.test(fields[0] ?? ''))
    .map((fields) => fields.at(-1) as string)
    .filter((name) => name !== 'total');
  return [...new Set(names)].sort();
}

describe('deploy/seccomp-bwrap.json', () => {
  it("is a seccomp profile in Docker's format", () => {
    expect(ACTIONS).toContain(PROFILE.defaultAction);
    expect(PROFILE.archMap.map((arch) => arch.architecture)).toContain('SCMP_ARCH_X86_64');
    for (const arch of PROFILE.archMap) expect(arch.subArchitectures).toBeInstanceOf(Array);
    expect(PROFILE.syscalls.length).toBeGreaterThan(20);
    for (const rule of PROFILE.syscalls) {
      expect(
        Object.keys(rule).every((key) =>
          ['names', 'action', 'errnoRet', 'args', 'comment', 'includes', 'excludes'].includes(key),
        ),
      ).toBe(true);
      expect(rule.names.length).toBeGreaterThan(0);
      for (const name of rule.names) expect(name).toMatch(/^[a-z0-9_]+$/);
      expect(ACTIONS).toContain(rule.action);
      for (const arg of rule.args ?? []) {
        expect(Number.isInteger(arg.index) && arg.index >= 0 && arg.index < 6).toBe(true);
        expect(OPS).toContain(arg.op);
      }
    }
  });

  it("is Docker's default profile unchanged plus one rule of ours", () => {
    const ours = PROFILE.syscalls.filter((rule) => rule.comment?.startsWith(OURS));
    expect(ours).toHaveLength(1);
    expect(PROFILE.syscalls.at(-1)).toBe(ours[0]);
    const base = { ...PROFILE, syscalls: PROFILE.syscalls.slice(0, -1) };
    expect(createHash('sha256').update(canonical(base)).digest('hex')).toBe(DOCKER_DEFAULT_SHA256);
    if (existsSync(DOCKER_DEFAULT_FILE)) expect(base).toEqual(JSON.parse(readFileSync(DOCKER_DEFAULT_FILE, 'utf8')));
    expect(ours[0]).toMatchObject({ action: 'SCMP_ACT_ALLOW', args: [], includes: {}, excludes: {} });
    expect([...(ours[0] as Rule).names].sort()).toEqual([
      'clone',
      'mount',
      'pivot_root',
      'sethostname',
      'umount2',
      'unshare',
    ]);
  });

  it.skipIf(!bwrapWorks() || spawnSync('strace', ['-V']).status !== 0 || process.getuid?.() !== 0)(
    "allows every syscall the server's sandboxed command makes, each addition is one bwrap needs, and Docker's default alone denies them",
    async () => {
      const used = await syscallsOfSandboxedCommand();
      expect(used).toEqual(expect.arrayContaining(['execve', 'clone', 'unshare', 'mount', 'pivot_root']));
      const refused = used.filter((name) => verdict(PROFILE, name, DOCKER_CAPS) !== 'allowed');
      expect(refused).toEqual([]);
      const base: Profile = {
        ...PROFILE,
        syscalls: PROFILE.syscalls.filter((rule) => !rule.comment?.startsWith(OURS)),
      };
      const added = (PROFILE.syscalls.at(-1) as Rule).names;
      for (const name of added) {
        expect(used).toContain(name);
        expect(verdict(base, name, DOCKER_CAPS)).not.toBe('allowed');
      }
    },
    60_000,
  );
});
