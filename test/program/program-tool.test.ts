import { workspaceFilesFor } from '../tools/tool-test-context.js';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { globTool } from '../../src/runtime/tools/builtin/glob.js';
import { grepTool } from '../../src/runtime/tools/builtin/grep.js';
import { lsTool } from '../../src/runtime/tools/builtin/ls.js';
import { programTool } from '../../src/runtime/tools/builtin/program.js';
import { readTool } from '../../src/runtime/tools/builtin/read.js';
import type {
  AnyToolDefinition,
  NestedCallResult,
  NestedInvoker,
  ToolContext,
  ToolResult,
} from '../../src/runtime/tools/define-tool.js';

type Handler = (args: unknown, ctx: ToolContext) => Promise<ToolResult>;

/** A nested invoker that records calls and runs real read/grep/ls/glob (bash and git are canned). */
function recordingNested(
  base: Omit<ToolContext, 'nested'>,
): NestedInvoker & { calls: { name: string; args: unknown }[] } {
  const real =
    (tool: AnyToolDefinition): Handler =>
    async (args, ctx) => {
      const parsed = tool.parameters.safeParse(args);
      return parsed.success
        ? tool.execute(parsed.data, ctx)
        : { output: `Invalid arguments for ${tool.name}: ${parsed.error.message}`, exitCode: 1 };
    };
  const handlers: Record<string, Handler> = {
    read: real(readTool),
    grep: real(grepTool),
    ls: real(lsTool),
    glob: real(globTool),
    bash: async (args) => ({
      output: `${String((args as { command: string }).command).replace(/^echo /, '')}\n`,
      exitCode: 0,
    }),
    git: async () => ({ output: 'On branch main\nnothing to commit, working tree clean', exitCode: 0 }),
  };
  const calls: { name: string; args: unknown }[] = [];
  return {
    calls,
    async call(name, args, id): Promise<NestedCallResult> {
      calls.push({ name, args });
      const handler = handlers[name];
      const result = handler ? await handler(args, base) : { output: `Unknown tool "${name}"`, exitCode: 1 };
      return { id: id ?? `child-${calls.length}`, name, truncated: false, ...result };
    },
    describe: (name) => (name in handlers ? { readOnly: name !== 'bash' } : undefined),
  };
}

let base: string;
let workspace: string;
let nested: ReturnType<typeof recordingNested>;
let context: ToolContext;

function write(rel: string, content: string): void {
  const abs = path.join(workspace, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

function execute(args: unknown, ctx: ToolContext = context): Promise<ToolResult> {
  return programTool.execute(programTool.parameters.parse({ type: 'script', ...(args as object) }), ctx);
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), 'a3s-program-')));
  workspace = path.join(base, 'ws');
  mkdirSync(workspace);
  writeFileSync(path.join(base, 'outside.js'), 'async function run() { return "outside"; }');
  write('README.md', '# A3S Code Server\n\nA3S is a control plane.\n');
  write('src/main.ts', 'export const name = "A3S";\n');
  const plain: Omit<ToolContext, 'nested'> = {
    workspace,
    files: workspaceFilesFor(workspace),
    signal: new AbortController().signal,
    sessionId: 'session-1',
    runId: 'run-1',
    toolCallId: 'call-1',
    onOutput: () => undefined,
  };
  nested = recordingNested(plain);
  context = { ...plain, nested };
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const SEED = `
async function run(ctx, inputs) {
  const readme = await ctx.readFile('README.md');
  const hits = await ctx.grep('A3S', { path: '.' });
  const echo = await ctx.bash('echo hi');
  const status = await ctx.git({ command: 'status' });
  const listing = await ctx.ls('.');
  const again = await ctx.tool('grep', { pattern: 'Server', path: 'README.md' });
  console.log('checked', inputs.what);
  return {
    title: readme.split('\\n')[0],
    hitLines: hits.split('\\n'),
    echo: echo.trim(),
    clean: status.output.includes('clean'),
    listed: listing.includes('README.md'),
    again: again.output,
  };
}
`;

describe('program tool', () => {
  it('runs the seed example through the nested invoker and reports result, logs and tool calls', async () => {
    const result = await execute({ source: SEED, inputs: { what: 'readme' } });
    expect(result.exitCode).toBe(0);
    const expected = {
      title: '# A3S Code Server',
      // The seed's ctx.grep returns grep's output string, its match footer included.
      hitLines: [
        'README.md:1:# A3S Code Server',
        'README.md:3:A3S is a control plane.',
        'src/main.ts:1:export const name = "A3S";',
        '',
        '3 match(es) in 2 file(s)',
      ],
      echo: 'hi',
      clean: true,
      listed: true,
      again: 'README.md:1:# A3S Code Server\n\n1 match(es) in 1 file(s)',
    };
    const sizes = (result.metadata?.program as { tool_calls: { output_bytes: number }[] }).tool_calls.map(
      (call) => call.output_bytes,
    );
    const list = ['read', 'grep', 'bash', 'git', 'ls', 'grep']
      .map((name, i) => `${i + 1}. ${name} (ok, exit_code=0, output_bytes=${sizes[i]})`)
      .join('\n');
    expect(result.output).toBe(
      `Program script completed.\n\nTool calls: 6\n${list}\n\nResult:\n${JSON.stringify(expected, null, 2)}\n\nLogs:\nchecked readme`,
    );
    expect(nested.calls.map((call) => call.name)).toEqual(['read', 'grep', 'bash', 'git', 'ls', 'grep']);
    expect(result.metadata?.script_result).toEqual(expected);
    const program = result.metadata?.program as {
      tool_calls: { tool_name: string; success: boolean; args: unknown; exit_code: number; duration_ms: number }[];
      logs: string;
    };
    expect(program).toMatchObject({
      name: 'script',
      language: 'javascript',
      runtime: 'embedded-quickjs',
      success: true,
      logs: 'checked readme',
    });
    expect(program.tool_calls.every((call) => call.success)).toBe(true);
    expect(program.tool_calls.map((call) => [call.tool_name, call.exit_code])).toEqual([
      ['read', 0],
      ['grep', 0],
      ['bash', 0],
      ['git', 0],
      ['ls', 0],
      ['grep', 0],
    ]);
    expect(program.tool_calls[0].args).toEqual({ file_path: 'README.md' });
  });

  it('runs a script from a workspace file, confined to the workspace', async () => {
    write('scripts/count.js', 'export default async function run(ctx) { return await ctx.glob("**/*.ts"); }');
    const result = await execute({ path: 'scripts/count.js' });
    // ctx.glob returns glob's output string: one path per line, then the page footer.
    expect(result).toMatchObject({ exitCode: 0, metadata: { script_result: 'src/main.ts\n\n1 of 1 file(s) shown' } });

    const escape = await execute({ path: '../outside.js' });
    expect(escape.exitCode).toBe(1);
    expect(escape.output).toContain('outside the workspace');
    const missing = await execute({ path: 'scripts/none.js' });
    expect(missing).toMatchObject({ exitCode: 1, output: 'File not found: scripts/none.js' });
    write('dir.js/keep.txt', '');
    const directory = await execute({ path: 'dir.js' });
    expect(directory.exitCode).toBe(1);
    const notScript = await execute({ path: 'README.md' });
    expect(notScript).toMatchObject({ exitCode: 1, output: 'program script path must point to a .js or .mjs file' });
    expect(nested.calls.map((call) => call.name)).toEqual(['glob']);
  });

  it('fails with exit code 1 and the error, listing the tool calls made, when the script throws', async () => {
    const result = await execute({
      source:
        'async function run(ctx) {\n  await ctx.ls({});\n  console.log("about to fail");\n  throw new Error("no luck");\n}',
    });
    expect(result.exitCode).toBe(1);
    const bytes = Buffer.byteLength(
      (await execute({ source: 'async function run(ctx) { return await ctx.ls("."); }' })).metadata
        ?.script_result as string,
    );
    expect(result.output).toBe(
      `program script error:\nError: no luck\n    at run (program.js:4)\n\nTool calls: 1\n1. ls (ok, exit_code=0, output_bytes=${bytes})\n\nLogs:\nabout to fail`,
    );
    expect(result.metadata).toEqual({
      program: {
        name: 'script',
        language: 'javascript',
        runtime: 'embedded-quickjs',
        success: false,
        tool_calls: [expect.objectContaining({ tool_name: 'ls', success: true, exit_code: 0, output_bytes: bytes })],
        logs: 'about to fail',
        error: 'Error: no luck\n    at run (program.js:4)',
        failure: 'script',
      },
    });
  });

  it('applies allowed_tools and limits', async () => {
    const refused = await execute({
      source: 'async function run(ctx) { try { await ctx.bash("echo no"); } catch (e) { return e.message; } }',
      allowed_tools: ['read', 'grep'],
    });
    expect(refused.metadata?.script_result).toBe(
      "tool 'bash' is not allowed for this PTC script; allowed tools: read, grep",
    );
    const slow = await execute({ source: 'function run() { for (;;) {} }', limits: { timeoutMs: 200 } });
    expect(slow).toMatchObject({ exitCode: 1, output: 'program script timed out after 200 ms' });
    const calls = await execute({
      source: 'async function run(ctx) { await ctx.ls({}); await ctx.ls({}); }',
      limits: { maxToolCalls: 1 },
    });
    expect(calls.output).toContain('program script error:\nError: PTC script exceeded maxToolCalls=1');
    const recursive = await execute({
      source: "async function run(ctx) { await ctx.tool('program', { source: 'x' }); }",
    });
    expect(recursive.output).toContain('recursive program calls are not allowed');
    expect(nested.calls.map((call) => call.name)).toEqual(['ls']);
  });

  it('caps the shown result at maxOutputBytes while metadata keeps the value', async () => {
    const result = await execute({
      source: 'function run() { return Array.from({ length: 400 }, (_, i) => i); }',
      limits: { maxOutputBytes: 2048 },
    });
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain(
      '[result shown up to limits.maxOutputBytes (2048 bytes); the full value is in metadata.script_result]',
    );
    expect(result.metadata?.script_result).toHaveLength(400);
  });

  it('needs the tool invoker', async () => {
    const { nested: _omitted, ...withoutNested } = context;
    const result = await execute({ source: 'function run() { return 1; }' }, withoutNested);
    expect(result).toMatchObject({ exitCode: 1, output: 'program needs the tool invoker' });
  });

  it('stops when the call is cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await execute(
      { source: 'function run() { for (;;) {} }' },
      { ...context, signal: controller.signal },
    );
    expect(result).toMatchObject({ exitCode: 1, output: 'program script cancelled by caller' });
  });

  it("has the seed's strict schema: type required, exactly one of source or path, language defaulted", () => {
    const parsed = programTool.parameters.parse({ type: 'script', source: 'function run() {}' });
    expect(parsed).toMatchObject({ type: 'script', language: 'javascript' });
    expect(() => programTool.parameters.parse({ source: 'function run() {}' })).toThrow();
    expect(() => programTool.parameters.parse({ type: 'script', source: 'x', allowedTools: ['read'] })).toThrow();
    expect(() => programTool.parameters.parse({ type: 'script' })).toThrow(/exactly one of source or path/);
    expect(() => programTool.parameters.parse({ type: 'script', source: 'x', path: 'y' })).toThrow(
      /exactly one of source or path/,
    );
    expect(() => programTool.parameters.parse({ source: 'x', language: 'python' })).toThrow();
    expect(() => programTool.parameters.parse({ source: 'x', unexpected_field: true })).toThrow();
    expect(() =>
      programTool.parameters.parse({ type: 'script', source: 'x', limits: { timeoutMs: 600_001 } }),
    ).toThrow();
    expect(() => programTool.parameters.parse({ source: 'x', limits: { memoryBytes: 1 } })).toThrow();
    expect(programTool.orchestrator).toBe('program');
    expect(programTool.readOnly).toBe(false);
    expect(programTool.description).toContain('async function run(ctx, inputs)');
    const schema = JSON.stringify(z.toJSONSchema(programTool.parameters, { target: 'draft-7', io: 'input' }));
    expect(schema).not.toContain('"description":""');
  });
});
