import { describe, expect, it } from 'vitest';
import { runProgram } from '../../src/runtime/program/quickjs-sandbox.js';
import type { ProgramOutcome } from '../../src/runtime/program/program-types.js';
import { TEST_LIMITS } from './program-test-support.js';

// Every run frees its VM: a leaked handle makes the runtime's disposal fail, which the outcome reports
// as a sandbox failure; leaked workers or wasm memories would show as growing memory.
const SCRIPTS: { source: string; ok: boolean }[] = [
  {
    source:
      'async function run(ctx) { const big = "x".repeat(4 * 1024 * 1024); const r = await ctx.grep({ pattern: "a" }); return big.length + r.exitCode; }',
    ok: true,
  },
  { source: 'async function run(ctx) { console.log("bye"); throw new Error("planned"); }', ok: false },
  {
    source: 'async function run(ctx) { ctx.bash({ command: "late" }); return "returned before the call finished"; }',
    ok: true,
  },
  {
    source: 'async function run(ctx) { try { await ctx.tool("program", {}); } catch (e) { return e.message; } }',
    ok: true,
  },
  { source: 'async function run() { await new Promise(() => {}); }', ok: false },
  { source: 'function run( {', ok: false },
];

async function runOne(index: number): Promise<ProgramOutcome> {
  const script = SCRIPTS[index % SCRIPTS.length];
  const outcome = await runProgram({
    source: script.source,
    inputs: { index },
    limits: { ...TEST_LIMITS, timeoutMs: 10_000 },
    callTool: (name) => new Promise((resolve) => setTimeout(() => resolve({ output: name, exitCode: 0 }), 1)),
    signal: new AbortController().signal,
  });
  expect(outcome.failure === 'sandbox' ? outcome.error : outcome.ok, `script ${index % SCRIPTS.length}`).toBe(
    script.ok,
  );
  return outcome;
}

async function runMany(count: number, concurrency: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await runOne(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

describe('program sandbox churn', () => {
  it('runs 200 programs without leaking handles, workers or memory', async () => {
    await runMany(16, 8);
    const before = process.memoryUsage().rss;
    await runMany(200, 8);
    const growth = process.memoryUsage().rss - before;
    // Each program takes at least 16 MiB of wasm memory; 200 leaked ones would be gigabytes.
    console.log(`rss growth over 200 programs: ${(growth / 1024 / 1024).toFixed(1)} MiB`);
    expect(growth).toBeLessThan(256 * 1024 * 1024);
  }, 120_000);
});
