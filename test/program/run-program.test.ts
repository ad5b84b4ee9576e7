import { describe, expect, it } from 'vitest';
import { runProgram } from '../../src/runtime/program/quickjs-sandbox.js';
import { fakeRead, run, TEST_LIMITS } from './program-test-support.js';

const README = '# A3S Code Server\n\nA control plane for coding agents.\nA3S runs tools.\n';

const SEED = `
async function run(ctx, inputs) {
  const readme = await ctx.readFile('README.md');
  const hits = await ctx.grep('A3S', { path: '.' });
  const echo = await ctx.bash('echo hi');
  const status = await ctx.git({ command: 'status' });
  const listing = await ctx.ls();
  const again = await ctx.tool('grep', { pattern: 'Server', path: 'README.md' });
  const proxied = await ctx.tools.glob({ pattern: '*.md' });
  const page = await ctx.read('README.md', { offset: 3 });
  console.log('readme has', readme.split('\\n').length, 'lines');
  return {
    title: readme.split('\\n')[0],
    hits,
    echo: echo.trim(),
    gitExit: status.exitCode,
    entries: listing,
    again: again.exitCode,
    proxied: proxied.name + ':' + proxied.exitCode,
    pageText: page.text,
    label: inputs.label,
  };
}
`;

describe('runProgram', () => {
  it('runs the seed example: every ctx method goes through callTool, in order, and the summary comes back', async () => {
    const outcome = await run(SEED, {
      inputs: { label: 'seed' },
      tools: {
        read: fakeRead({ 'README.md': README }),
        grep: () => ({
          output: 'README.md:1:# A3S Code Server\nREADME.md:4:A3S runs tools.',
          exitCode: 0,
          metadata: { matches: 2 },
        }),
        bash: () => ({ output: 'hi\n', exitCode: 0 }),
        git: () => ({ output: 'On branch main', exitCode: 0 }),
        ls: () => ({ output: 'README.md\nsrc/', exitCode: 0 }),
      },
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.ok).toBe(true);
    expect(outcome.result).toEqual({
      title: '# A3S Code Server',
      hits: 'README.md:1:# A3S Code Server\nREADME.md:4:A3S runs tools.',
      echo: 'hi',
      gitExit: 0,
      entries: 'README.md\nsrc/',
      again: 0,
      proxied: 'glob:0',
      pageText: 'A control plane for coding agents.\nA3S runs tools.',
      label: 'seed',
    });
    expect(outcome.logs).toBe('readme has 4 lines');
    expect(outcome.calls).toEqual([
      { name: 'read', args: { file_path: 'README.md' } },
      { name: 'grep', args: { path: '.', pattern: 'A3S' } },
      { name: 'bash', args: { command: 'echo hi' } },
      { name: 'git', args: { command: 'status' } },
      { name: 'ls', args: { path: '.' } },
      { name: 'grep', args: { pattern: 'Server', path: 'README.md' } },
      { name: 'glob', args: { pattern: '*.md' } },
      { name: 'read', args: { offset: 3, file_path: 'README.md' } },
    ]);
    expect(outcome.toolCalls.map((call) => [call.name, call.exitCode])).toEqual([
      ['read', 0],
      ['grep', 0],
      ['bash', 0],
      ['git', 0],
      ['ls', 0],
      ['grep', 0],
      ['glob', 0],
      ['read', 0],
    ]);
    for (const call of outcome.toolCalls) expect(call.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('accepts the seed entry points: export default async function run and export default function run', async () => {
    expect(
      (await run('export default async function run(ctx, inputs) { return inputs.n; }', { inputs: { n: 3 } })).result,
    ).toBe(3);
    expect((await run('export default function run() { return "sync"; }')).result).toBe('sync');
  });

  it('cuts each tool output handed to the script at maxOutputBytes (on a UTF-8 boundary) and records output_bytes', async () => {
    const outcome = await run(
      'async function run(ctx) { const r = await ctx.tool("bash", { command: "x" }); return [r.output, await ctx.bash("y")]; }',
      {
        limits: { maxOutputBytes: 5 },
        tools: { bash: () => ({ output: 'abcé€xyz', exitCode: 0 }) },
      },
    );
    expect(outcome.result).toEqual(['abcé', 'abcé']);
    expect(outcome.toolCalls.map((call) => call.outputBytes)).toEqual([5, 5]);
  });

  it('passes inputs (null by default), accepts a sync run and returns JSON values', async () => {
    expect((await run('function run(ctx, inputs) { return inputs; }')).result).toBeNull();
    expect((await run('function run(ctx, inputs) { return inputs.n * 2; }', { inputs: { n: 21 } })).result).toBe(42);
    expect((await run('async function run() { return undefined; }')).result).toBeNull();
    const json = await run(
      'async function run() { return { a: [1, "two", null, true], d: new Date(0), f: () => 1, nan: NaN }; }',
    );
    expect(json.result).toEqual({ a: [1, 'two', null, true], d: '1970-01-01T00:00:00.000Z', nan: null });
    const arrow = await run('const run = async (ctx, inputs) => inputs.map((x) => x + 1);', { inputs: [1, 2] });
    expect(arrow.result).toEqual([2, 3]);
  });

  it('supports async/await with concurrent tool calls, recorded in call order', async () => {
    const outcome = await run(
      `async function run(ctx) {
        const results = await Promise.all([ctx.tool('grep', { pattern: 'a' }), ctx.tools.glob({ pattern: '*.ts' }), ctx.read('x')]);
        return results.map((r) => r.exitCode);
      }`,
      { tools: { read: () => ({ output: 'nope', exitCode: 1 }) } },
    );
    expect(outcome.result).toEqual([0, 0, 1]);
    expect(outcome.toolCalls.map((call) => call.name)).toEqual(['grep', 'glob', 'read']);
  });

  it('resolves tool calls with {name, output, text, exitCode, metadata}; a failing tool is a result, not an exception', async () => {
    const outcome = await run('async function run(ctx) { return await ctx.tool("grep", { pattern: "(" }); }', {
      tools: {
        grep: () => ({ output: 'Invalid regular expression', exitCode: 1, metadata: { reason: 'invalid_regex' } }),
      },
    });
    expect(outcome.result).toEqual({
      name: 'grep',
      output: 'Invalid regular expression',
      text: null,
      exitCode: 1,
      metadata: { reason: 'invalid_regex' },
    });
  });

  it('captures console output, one line per call, bounded by maxOutputBytes', async () => {
    const small = await run(
      'function run() { console.log("a", 1, { b: [2] }); console.error(new Error("bad")); console.info("x"); return 0; }',
    );
    expect(small.logs.split('\n')[0]).toBe('a 1 {"b":[2]}');
    expect(small.logs).toContain('Error: bad');
    expect(small.logs.endsWith('x')).toBe(true);

    const flood = await run(
      'function run() { for (let i = 0; i < 5000; i++) console.log("line " + i + " " + "y".repeat(50)); return "done"; }',
      {
        // A generous deadline: 5000 console calls must not race the 300 ms test timeout on a busy machine.
        limits: { maxOutputBytes: 2048, timeoutMs: 10_000 },
      },
    );
    expect(flood.result).toBe('done');
    expect(flood.logs.startsWith('line 0 ')).toBe(true);
    expect(flood.logs).toMatch(/\[logs truncated at limits\.maxOutputBytes \(2048 bytes\); \d+ more bytes dropped\]$/);
    expect(Buffer.byteLength(flood.logs)).toBeLessThan(2048 + 200);
  });

  it('readFile returns the text without line numbers, paging through long files, and throws when the read fails', async () => {
    const long = Array.from({ length: 25 }, (_, i) => `line ${i + 1}\twith tab`).join('\n');
    const outcome = await run(
      `async function run(ctx) {
        const text = await ctx.readFile('long.txt');
        const empty = await ctx.readFile('empty.txt');
        let error;
        try { await ctx.readFile('missing.txt'); } catch (e) { error = e.message; }
        return { text, empty, error };
      }`,
      { tools: { read: fakeRead({ 'long.txt': long, 'empty.txt': '' }, 10) } },
    );
    expect(outcome.result).toEqual({
      text: long,
      empty: '',
      error: 'readFile("missing.txt") failed: File not found: missing.txt',
    });
    expect(outcome.calls.map((call) => call.args)).toEqual([
      { file_path: 'long.txt' },
      { file_path: 'long.txt', offset: 11 },
      { file_path: 'long.txt', offset: 21 },
      { file_path: 'empty.txt' },
      { file_path: 'missing.txt' },
    ]);
  });

  it('enforces allowed_tools on the host side, naming the tool and the allowed list', async () => {
    const outcome = await run(
      `async function run(ctx) {
        const errors = [];
        for (const call of [() => ctx.bash('rm -rf /'), () => ctx.tool('write', {}), () => ctx.readFile('a')]) {
          try { await call(); } catch (e) { errors.push(e.message); }
        }
        const ok = await ctx.tool('grep', { pattern: 'x' });
        return { errors, grep: ok.exitCode };
      }`,
      { allowedTools: ['grep', 'glob'] },
    );
    expect(outcome.result).toEqual({
      errors: [
        "tool 'bash' is not allowed for this PTC script; allowed tools: grep, glob",
        "tool 'write' is not allowed for this PTC script; allowed tools: grep, glob",
        "tool 'read' is not allowed for this PTC script; allowed tools: grep, glob",
      ],
      grep: 0,
    });
    expect(outcome.calls.map((call) => call.name)).toEqual(['grep']);
  });

  it('enforces maxToolCalls: the call over the limit fails inside the VM and is never made', async () => {
    const caught = await run(
      `async function run(ctx) {
        await ctx.grep({ pattern: 'a' });
        await ctx.grep({ pattern: 'b' });
        try { await ctx.grep({ pattern: 'c' }); } catch (e) { return e.message; }
      }`,
      { limits: { maxToolCalls: 2 } },
    );
    expect(caught.result).toBe('PTC script exceeded maxToolCalls=2 (limits.maxToolCalls); "grep" was not called');
    expect(caught.calls).toHaveLength(2);

    const uncaught = await run('async function run(ctx) { for (;;) await ctx.ls({}); }', {
      limits: { maxToolCalls: 3 },
    });
    expect(uncaught.ok).toBe(false);
    expect(uncaught.failure).toBe('tool_calls');
    expect(uncaught.error).toContain('PTC script exceeded maxToolCalls=3');
    expect(uncaught.toolCalls).toHaveLength(3);
  });

  it('refuses recursive program calls with the exact message, even when program is allowed', async () => {
    const outcome = await run(
      `async function run(ctx) {
        try { await ctx.tool('program', { source: 'function run() {}' }); } catch (e) { return e.message; }
      }`,
      { allowedTools: ['program', 'grep'] },
    );
    expect(outcome.result).toBe('recursive program calls are not allowed');
    expect(outcome.calls).toEqual([]);
    const uncaught = await run("async function run(ctx) { await ctx.tool('program', {}); }");
    expect(uncaught.ok).toBe(false);
    expect(uncaught.error).toContain('recursive program calls are not allowed');
  });

  it('reports a throwing script with its message and stack (script line numbers), logs kept', async () => {
    const outcome = await run(
      'async function run(ctx) {\n  console.log("before");\n  helper();\n}\nfunction helper() {\n  throw new TypeError("boom");\n}\n',
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.failure).toBe('script');
    expect(outcome.error?.split('\n')[0]).toBe('TypeError: boom');
    expect(outcome.error).toContain('at helper (program.js:6)');
    expect(outcome.error).not.toContain('sandbox-prelude');
    expect(outcome.logs).toBe('before');
    const thrownValue = await run('function run() { throw { code: 7 }; }');
    expect(thrownValue.error).toBe('Uncaught {"code":7}');
  });

  it('reports syntax errors, a missing run and unserialisable results clearly', async () => {
    const syntax = await run('async function run(ctx) {\n  return 1 +;\n}');
    expect(syntax.ok).toBe(false);
    expect(syntax.error).toMatch(/^SyntaxError: .+\n\s+at program\.js:2/);
    const missing = await run('const x = 1;');
    expect(missing.error).toContain('the program must define a function run(ctx, inputs)');
    const bigint = await run('function run() { return { n: 10n }; }');
    expect(bigint.error).toMatch(/^run\(\) returned a value that cannot be converted to JSON: TypeError/);
    const cyclic = await run('function run() { const a = {}; a.self = a; return a; }');
    expect(cyclic.error).toContain('cannot be converted to JSON');
  });

  it('bounds the JSON result by maxOutputBytes', async () => {
    const outcome = await run('function run() { return "x".repeat(5000); }', { limits: { maxOutputBytes: 4096 } });
    expect(outcome).toMatchObject({ ok: false, failure: 'output' });
    expect(outcome.error).toBe(
      'program result is 5002 bytes of JSON, over limits.maxOutputBytes (4096 bytes); return a smaller value',
    );
  });

  it('turns a throwing callTool into an error inside the VM', async () => {
    const outcome = await run(
      'async function run(ctx) { try { await ctx.grep({}); } catch (e) { return e.message; } }',
      {
        tools: {
          grep: () => {
            throw new Error('invoker exploded');
          },
        },
      },
    );
    expect(outcome.result).toBe('tool "grep" failed: invoker exploded');
    expect(outcome.toolCalls[0]).toMatchObject({ name: 'grep', exitCode: 1 });
  });

  it('rejects invalid limits and inputs that are not JSON', async () => {
    const base = {
      source: 'function run() {}',
      inputs: null,
      callTool: async () => ({ output: '', exitCode: 0 }),
      signal: new AbortController().signal,
    };
    await expect(runProgram({ ...base, limits: { ...TEST_LIMITS, timeoutMs: 0 } })).rejects.toThrow(
      /limits\.timeoutMs must be an integer from 1 to 600000/,
    );
    await expect(runProgram({ ...base, limits: { ...TEST_LIMITS, stackBytes: 64 * 1024 * 1024 } })).rejects.toThrow(
      /limits\.stackBytes/,
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const outcome = await runProgram({ ...base, inputs: cyclic, limits: TEST_LIMITS });
    expect(outcome).toMatchObject({ ok: false, failure: 'script' });
    expect(outcome.error).toMatch(/^inputs cannot be converted to JSON/);
  });
});
