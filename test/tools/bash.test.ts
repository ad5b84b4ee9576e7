import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../src/runtime/tools/builtin/bash.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

let ws: TestWorkspace;
beforeEach(() => {
  ws = createTestWorkspace();
});
afterEach(() => ws.cleanup());

/** True while the process exists and is not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // Without /proc we cannot tell a zombie (exited, not yet reaped) from a live process.
  if (!existsSync('/proc/self/stat')) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function firstPid(output: string): number {
  const match = /PID=(\d+)/.exec(output);
  if (!match) throw new Error(`no PID in ${JSON.stringify(output)}`);
  return Number(match[1]);
}

describe('bash', () => {
  it('runs in the workspace, streams lines through onOutput and returns combined output', async () => {
    const result = await runTool(
      bashTool,
      { command: 'pwd; echo out1; echo err1 >&2; sleep 0.1; printf "no-newline"' },
      ws.context(),
    );
    expect(result.exitCode).toBe(0);
    expect(result.metadata).toMatchObject({ exit_code: 0, timed_out: false, cancelled: false });
    expect(result.output.split('\n').sort()).toEqual([ws.root, 'err1', 'no-newline', 'out1'].sort());
    expect([...ws.deltas].sort()).toEqual([`${ws.root}\n`, 'err1\n', 'no-newline\n', 'out1\n'].sort());
    expect(ws.deltas[ws.deltas.length - 1]).toBe('no-newline\n');
  });

  it('returns the exit code of the command', async () => {
    const result = await runTool(bashTool, { command: 'echo failing; exit 3' }, ws.context());
    expect(result).toMatchObject({ exitCode: 3, output: 'failing\n', metadata: { exit_code: 3 } });
  });

  it('kills the whole process group on timeout', async () => {
    const started = Date.now();
    const result = await runTool(
      bashTool,
      { command: 'sleep 30 & echo PID=$!; sleep 30', timeout: 1_000 },
      ws.context(),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.exitCode).not.toBe(0);
    expect(result.metadata).toMatchObject({ timed_out: true, cancelled: false });
    expect(result.output).toMatch(/\[Command timed out after 1000ms\]$/);
    expect(result.errorKind).toEqual({ type: 'timeout', op: 'bash', duration_ms: 1000 });
    expect(isAlive(firstPid(result.output))).toBe(false);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const started = Date.now();
    const result = await runTool(
      bashTool,
      { command: "trap '' TERM; sleep 30 & echo PID=$!; sleep 30", timeout: 1_000 },
      ws.context(),
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(3_000);
    expect(elapsed).toBeLessThan(10_000);
    expect(result.metadata).toMatchObject({ timed_out: true, signal: 'SIGKILL' });
    expect(isAlive(firstPid(result.output))).toBe(false);
  });

  it('kills the whole process group when the signal aborts', async () => {
    const controller = new AbortController();
    const pending = runTool(bashTool, { command: 'sleep 30 & echo PID=$!; wait' }, ws.context(controller.signal));
    await waitFor(() => ws.deltas.some((delta) => delta.startsWith('PID=')));
    controller.abort();
    const result = await pending;
    expect(result.exitCode).not.toBe(0);
    expect(result.metadata).toMatchObject({ timed_out: false, cancelled: true });
    expect(result.output).toMatch(/cancelled/);
    expect(result.errorKind).toEqual({ type: 'cancelled', op: 'bash' });
    expect(isAlive(firstPid(result.output))).toBe(false);
  });

  it('does not start when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(bashTool, { command: 'echo hi' }, ws.context(controller.signal));
    expect(result.exitCode).toBe(1);
    expect(ws.deltas).toEqual([]);
  });

  it('returns promptly and cleans up background processes left behind', async () => {
    const started = Date.now();
    const result = await runTool(bashTool, { command: 'sleep 30 & echo PID=$!' }, ws.context());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.exitCode).toBe(0);
    expect(isAlive(firstPid(result.output))).toBe(false);
  });

  it('keeps at most 10 MiB of output', async () => {
    const result = await runTool(
      bashTool,
      { command: "head -c 12000000 /dev/zero | tr '\\0' a; echo; echo END" },
      ws.context(),
    );
    expect(result.exitCode).toBe(0);
    expect(result.output.length).toBeLessThanOrEqual(10 * 1024 * 1024 + 100);
    expect(result.output).toMatch(/characters of output omitted/);
    expect(result.output.endsWith('END\n')).toBe(true);
    expect(result.metadata?.omitted_chars).toBeGreaterThan(0);
  });

  it("runs with an environment built from scratch: nothing of the server's leaks", async () => {
    // Not a filter of the server's environment: a harmless-looking name is absent too.
    process.env.A3S_TEST_API_KEY = 'should-not-leak';
    process.env.DATABASE_URL = 'postgres://u:secret@db/app';
    try {
      const result = await runTool(
        bashTool,
        { command: 'echo "key=${A3S_TEST_API_KEY:-unset} db=${DATABASE_URL:-unset}"' },
        ws.context(),
      );
      expect(result.output).toBe('key=unset db=unset\n');
    } finally {
      delete process.env.A3S_TEST_API_KEY;
      delete process.env.DATABASE_URL;
    }
  });
});
