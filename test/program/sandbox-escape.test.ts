import { describe, expect, it } from 'vitest';
import { run } from './program-test-support.js';

// Everything here must end cleanly: ok:false with a clear error, or a result proving the absence of a
// host capability. The host process (this test runner) must be unaffected.
describe('program sandbox', () => {
  it('has no process, require, module system, network, timers or host globals', async () => {
    const outcome = await run(`function run() {
      return [
        typeof process, typeof require, typeof module, typeof exports, typeof __filename, typeof fetch,
        typeof XMLHttpRequest, typeof setTimeout, typeof setInterval, typeof queueMicrotask, typeof std,
        typeof os, typeof Deno, typeof Bun, typeof WebAssembly, typeof hostCall, typeof hostLog,
      ];
    }`);
    expect(outcome.result).toEqual(Array.from({ length: 17 }, () => 'undefined'));
  });

  it('lists nothing host-ish on globalThis', async () => {
    const outcome = await run('function run() { return Object.getOwnPropertyNames(globalThis); }');
    const names = outcome.result as string[];
    expect(names).toEqual(expect.arrayContaining(['Object', 'JSON', 'Promise', 'console']));
    for (const forbidden of [
      'process',
      'require',
      'fetch',
      'XMLHttpRequest',
      'setTimeout',
      'setInterval',
      'std',
      'os',
      'module',
      'global',
      'Buffer',
      'hostCall',
      'hostLog',
      'run_',
    ]) {
      expect(names, forbidden).not.toContain(forbidden);
    }
  });

  it('refuses dynamic import() and static imports', async () => {
    const dynamic = await run(
      "async function run() { return import('fs').then(() => 'loaded', (e) => 'refused: ' + e.message); }",
    );
    expect(dynamic.result).toBe("refused: could not load module 'fs'");
    const uncaught = await run("async function run() { return await import('node:child_process'); }");
    expect(uncaught).toMatchObject({ ok: false, failure: 'script' });
    const staticImport = await run("import fs from 'fs';\nasync function run() { return 1; }");
    expect(staticImport.ok).toBe(false);
    expect(staticImport.error).toMatch(/^SyntaxError/);
  });

  it('cannot reach the host through constructors or prototypes', async () => {
    const viaFunction = await run("this.constructor.constructor('return process')();\nfunction run() { return 1; }");
    expect(viaFunction.ok).toBe(false);
    expect(viaFunction.error).toMatch(/^ReferenceError: 'process' is not defined/);

    const probes = await run(`async function run(ctx) {
      const viaCtx = [ctx.grep.constructor('return typeof process')(), await ctx.readFile.constructor('return typeof require')()];
      const viaGlobal = ctx.constructor.constructor('return Object.getOwnPropertyNames(this).includes("process")')();
      let protoSet;
      try { Object.prototype.__proto__ = { polluted: true }; protoSet = 'set'; } catch (e) { protoSet = e.name; }
      Object.prototype.pollutedFromSandbox = true;
      Array.prototype.pollutedFromSandbox = true;
      const frozen = Object.isFrozen(ctx);
      let ctxWrite;
      try { 'use strict'; ctx.bash = () => 'hijacked'; ctxWrite = ctx.bash === undefined ? 'gone' : typeof ctx.bash({}).then; } catch (e) { ctxWrite = e.name; }
      return { viaCtx, viaGlobal, protoSet, frozen, ctxWrite, proto: Object.getPrototypeOf(Object.prototype) };
    }`);
    expect(probes.result).toEqual({
      viaCtx: ['undefined', 'undefined'],
      viaGlobal: false,
      protoSet: 'TypeError',
      frozen: true,
      ctxWrite: 'function',
      proto: null,
    });
    // The VM's prototypes are not the host's.
    expect(({} as Record<string, unknown>).pollutedFromSandbox).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>).pollutedFromSandbox).toBeUndefined();
  });

  it('stops an infinite loop at limits.timeoutMs', async () => {
    const started = Date.now();
    const outcome = await run('function run() { while (true) {} }');
    expect(outcome).toMatchObject({
      ok: false,
      failure: 'timeout',
      error: 'program exceeded limits.timeoutMs (300 ms)',
    });
    expect(Date.now() - started).toBeLessThan(5000);
    const caught = await run(
      'function run() { try { while (true) {} } catch (e) { return "escaped the interrupt"; } }',
    );
    expect(caught).toMatchObject({ ok: false, failure: 'timeout' });
  });

  it('stops native work that never yields to the interrupt handler (catastrophic regex) at the deadline', async () => {
    const started = Date.now();
    const outcome = await run('function run() { return /(a+)+$/.test("a".repeat(40) + "b"); }');
    expect(outcome).toMatchObject({
      ok: false,
      failure: 'timeout',
      error: 'program exceeded limits.timeoutMs (300 ms)',
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops allocation loops at limits.memoryBytes (or the deadline for lazily allocated arrays)', async () => {
    // QuickJS allocates `new Array(1e6)` lazily, so this loop may run into the deadline before the heap limit.
    const lazy = await run('function run() { const arr = []; for (;;) { arr.push(new Array(1e6)); } }');
    expect(lazy.ok).toBe(false);
    expect(['memory', 'timeout']).toContain(lazy.failure);

    const strings = await run('function run() { let s = "x"; for (;;) s = s + s; }');
    expect(strings).toMatchObject({ ok: false, failure: 'memory' });
    expect(strings.error).toMatch(/^program exceeded limits\.memoryBytes \(16777216 bytes\)/);

    const arrays = await run(
      'function run() { const arr = []; for (;;) arr.push(Array.from({ length: 1e5 }, (_, i) => i)); }',
      { limits: { timeoutMs: 5000 } },
    );
    expect(arrays).toMatchObject({ ok: false, failure: 'memory' });
  });

  it('stops deep recursion and deeply nested source at the stack limit', async () => {
    const recursion = await run('function run() { function f(n) { return f(n + 1) + 1; } return f(0); }');
    expect(recursion).toMatchObject({ ok: false, failure: 'stack' });
    expect(recursion.error).toMatch(/^program exceeded limits\.stackBytes \(524288 bytes\)/);
    expect(recursion.error!.split('\n').length).toBeLessThan(20);

    const nested = await run('function run() { return eval("(".repeat(100000) + "1" + ")".repeat(100000)); }', {
      limits: { timeoutMs: 5000 },
    });
    expect(nested).toMatchObject({ ok: false, failure: 'stack' });
  });

  it('an abort signal stops a running loop at once', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 150);
    const outcome = await run('function run() { for (;;) {} }', {
      limits: { timeoutMs: 60_000 },
      signal: controller.signal,
    });
    expect(outcome).toMatchObject({ ok: false, failure: 'cancelled', error: 'program was cancelled' });
    expect(Date.now() - started).toBeLessThan(5000);

    const before = new AbortController();
    before.abort();
    const notStarted = await run('function run() { return 1; }', { signal: before.signal });
    expect(notStarted).toMatchObject({ ok: false, failure: 'cancelled' });
  });

  it('ends a promise that can never resolve', async () => {
    const orphan = await run('async function run() { await new Promise(() => {}); }');
    expect(orphan).toMatchObject({ ok: false, failure: 'stalled' });
    expect(orphan.error).toContain('can never settle');

    // A tool call that never answers: the deadline ends the program, the call is recorded as unfinished.
    const started = Date.now();
    const hung = await run('async function run(ctx) { return await ctx.bash({ command: "sleep 1000" }); }', {
      tools: { bash: () => new Promise(() => undefined) },
    });
    expect(hung).toMatchObject({ ok: false, failure: 'timeout', error: 'program exceeded limits.timeoutMs (300 ms)' });
    expect(hung.toolCalls).toEqual([
      {
        name: 'bash',
        args: { command: 'sleep 1000' },
        exitCode: -1,
        success: false,
        outputBytes: 0,
        durationMs: expect.any(Number),
      },
    ]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('keeps working after all of the above', async () => {
    const outcome = await run('async function run(ctx, inputs) { return inputs.x + 1; }', { inputs: { x: 1 } });
    expect(outcome).toMatchObject({ ok: true, result: 2 });
  });
});
