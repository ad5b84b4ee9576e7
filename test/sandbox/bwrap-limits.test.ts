import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectSandbox, type DetectedSandbox } from '../../src/runtime/sandbox/detect-sandbox.js';
import { tempDir } from '../support/test-server.js';
import { bwrapWorks } from './sandbox-helpers.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP)
  console.warn('bwrap limit tests skipped: bubblewrap (bwrap) is not installed or user namespaces are off');

function run(
  sandbox: DetectedSandbox,
  command: string,
  workspace: string,
): Promise<{ code: number | null; output: string }> {
  const workspaceFd = openSync(workspace, 'r');
  return sandbox.sandbox
    .prepare({
      argv: ['bash', '-c', command],
      workspace,
      workspaceFd,
      cwd: workspace,
      tenantId: 'default',
      sessionId: 'limits',
      env: {},
      network: 'none',
    })
    .then(
      (prepared) =>
        new Promise((resolve) => {
          const child = spawn(prepared.file, [...prepared.args], {
            env: prepared.env,
            cwd: prepared.cwd,
            timeout: 20_000,
            stdio: ['ignore', 'pipe', 'pipe', ...prepared.inheritFds],
          });
          let output = '';
          child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.on('close', (code) => {
            closeSync(workspaceFd);
            void prepared.release().then(() => resolve({ code, output }));
          });
        }),
    );
}

describe.skipIf(!HAVE_BWRAP)('bwrap sandbox limits (cgroups when writable, rlimits always)', () => {
  let detected: DetectedSandbox;
  const workspace = tempDir('a3s-limits-ws-');
  beforeAll(async () => {
    detected = await detectSandbox({
      stateDir: tempDir('a3s-limits-state-'),
      limits: { pidsMax: 32, memoryBytes: 64 * 1024 * 1024, cpuSeconds: 2, addressSpaceBytes: 4096 * 1024 * 1024 },
    });
  });
  afterAll(async () => {
    await detected?.dispose();
  });

  it('detects bwrap', () => {
    expect(detected.sandbox.kind).toBe('bwrap');
  });

  it('a CPU-bound loop is stopped by RLIMIT_CPU', async () => {
    const started = Date.now();
    const result = await run(detected, 'while :; do :; done', workspace);
    expect(result.code).not.toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('memory is bounded by the memory cgroup and every per-command cgroup is removed (when cgroups are writable)', async (ctx) => {
    if (detected.cgroups === 'none') ctx.skip();
    const memory = await run(detected, 'a=$(head -c 200000000 /dev/zero | tr "\\0" x); echo survived ${#a}', workspace);
    expect(memory.output).not.toContain('survived 200000000');
    const small = await run(detected, 'a=$(head -c 2000000 /dev/zero | tr "\\0" x); echo survived ${#a}', workspace);
    expect(small.output).toContain('survived 2000000');
    // Every per-command cgroup was removed after its command.
    const parent = readdirSync('/sys/fs/cgroup/pids').find((name) => name.startsWith(`a3s-sandbox-${process.pid}-`));
    if (parent)
      expect(readdirSync(`/sys/fs/cgroup/pids/${parent}`).filter((name) => name.startsWith('cmd-'))).toEqual([]);
  }, 20_000);
});
