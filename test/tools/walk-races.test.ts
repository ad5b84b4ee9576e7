import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyToolDefinition, ToolResult } from '../../src/runtime/tools/define-tool.js';
import { globTool } from '../../src/runtime/tools/builtin/glob.js';
import { grepTool } from '../../src/runtime/tools/builtin/grep.js';
import { lsTool } from '../../src/runtime/tools/builtin/ls.js';
import { startDirectorySwapper } from '../support/directory-swapper.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

const RACE_MS = 3000;
const SECRET_NAME = 'secret-other-tenant.txt';

let ws: TestWorkspace;
let marker: string;
beforeEach(() => {
  ws = createTestWorkspace();
  // Another tenant's directory next to the workspace, and what must never be seen of it.
  marker = `OTHER-TENANT-SECRET-${randomUUID()}`;
  writeFileSync(path.join(ws.outside, SECRET_NAME), `${marker}\nneedle in the other tenant\n`);
  ws.file('sub/inside-a.txt', 'needle a\n');
  ws.file('sub/deep/inside-b.txt', 'needle b\n');
  ws.file('nest/sub2/inside-c.txt', 'needle c\n');
  for (let i = 0; i < 40; i++) ws.file(`tree/d${i % 5}/f${i}.txt`, `needle ${i}\n`);
});
afterEach(() => ws.cleanup());

type Call = [AnyToolDefinition, Record<string, unknown>];

const CALLS: Call[] = [
  [lsTool, { path: 'sub' }],
  [lsTool, { path: 'nest/sub2' }],
  [lsTool, { path: 'sub/deep' }],
  [grepTool, { pattern: 'needle|SECRET' }],
  [grepTool, { pattern: 'needle|SECRET', path: 'sub' }],
  [grepTool, { pattern: 'needle|SECRET', path: 'nest', output_mode: 'files_with_matches' }],
  [grepTool, { pattern: 'needle|SECRET', glob: 'sub/*', output_mode: 'count' }],
  [grepTool, { pattern: '.', glob: `sub/${SECRET_NAME}` }],
  [grepTool, { pattern: '.', path: `sub/${SECRET_NAME}` }],
  [grepTool, { pattern: 'needle', glob: '*.txt', output_mode: 'summary' }],
  [globTool, { pattern: '**/*' }],
  [globTool, { pattern: 'sub/**' }],
  [globTool, { pattern: `sub/${SECRET_NAME}` }],
  [globTool, { pattern: 'nest/sub2/*' }],
  [globTool, { pattern: '**/*.txt', path: 'sub' }],
];

/** What a call showed, less the names it was asked about (messages echo the path or pattern given). */
function shown(result: ToolResult, args: Record<string, unknown>): string {
  let text = `${result.output}\n${JSON.stringify(result.metadata ?? {})}`;
  for (const value of Object.values(args))
    if (typeof value === 'string' && value.length > 1) text = text.split(value).join('<arg>');
  return text;
}

function fdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

describe('ls, grep and glob while a directory is swapped for a symlink to another tenant', () => {
  it('never list or read outside the workspace, and keep finding what is inside', async () => {
    // The first call takes the workspace lease (one descriptor, held on): count after it.
    await runTool(lsTool, {}, ws.context());
    const fdsBefore = fdCount();
    const swappers = [
      startDirectorySwapper(path.join(ws.root, 'sub'), ws.outside, 'mv'),
      startDirectorySwapper(path.join(ws.root, 'nest/sub2'), ws.outside, 'rename'),
    ];
    const seen: string[] = [];
    const deadline = Date.now() + RACE_MS;
    try {
      while (Date.now() < deadline) {
        // 30 calls at once per round (each call twice), on the swapped directories and around them.
        const round = [...CALLS, ...CALLS].map(async ([tool, args]) =>
          shown(await runTool(tool, args, ws.context()), args),
        );
        seen.push(...(await Promise.all(round)));
      }
    } finally {
      const swaps = await Promise.all(swappers.map((swapper) => swapper.stop()));
      expect(swaps.every((count) => count > 0)).toBe(true);
    }
    for (const text of seen) {
      expect(text).not.toContain(marker);
      expect(text).not.toContain(SECRET_NAME);
      expect(text).not.toContain('other tenant');
      expect(text).not.toContain('top secret');
      // (An escape error names the link's target, which the attacker wrote; nothing below it is shown.)
      expect(text).not.toContain(`${ws.outside}/`);
    }
    // The race was real: the swapped directories were found, with their own files, some of the time.
    expect(seen.some((text) => text.includes('sub/inside-a.txt'))).toBe(true);
    expect(seen.some((text) => text.includes('nest/sub2/inside-c.txt'))).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(30);
    // Every directory the walks opened is closed again.
    expect(fdCount()).toBeLessThanOrEqual(fdsBefore + 2);
    expect(readFileSync(path.join(ws.outside, SECRET_NAME), 'utf8')).toContain(marker);
  });
});

describe('symlinks met by ls, grep and glob', () => {
  beforeEach(() => {
    symlinkSync('/', path.join(ws.root, 'root-link'));
    symlinkSync('/proc/self', path.join(ws.root, 'proc-link'));
    symlinkSync('/proc/self/environ', path.join(ws.root, 'environ-link'));
    symlinkSync('..', path.join(ws.root, 'parent-link'));
    symlinkSync(ws.outside, path.join(ws.root, 'tenant-link'));
    symlinkSync('loop-b', path.join(ws.root, 'loop-a'));
    symlinkSync('loop-a', path.join(ws.root, 'loop-b'));
    symlinkSync('.', path.join(ws.root, 'self-link'));
    mkdirSync(path.join(ws.root, 'real'));
    ws.file('real/kept.txt', 'needle kept\n');
    symlinkSync('real', path.join(ws.root, 'alias'));
    symlinkSync(path.join(ws.root, 'real'), path.join(ws.root, 'abs-alias'));
    symlinkSync('real/kept.txt', path.join(ws.root, 'kept-link.txt'));
  });

  it('walks do not follow links: nothing of /, /proc/self, the parent or another tenant is listed or read', async () => {
    // A variable of the server's own environment, as /proc/self/environ would give it.
    const environ =
      readFileSync('/proc/self/environ', 'utf8')
        .split('\0')
        .find((entry) => entry.startsWith('PATH=')) ?? 'PATH=';
    const calls: [AnyToolDefinition, Record<string, unknown>][] = [
      [grepTool, { pattern: 'PATH=|root:|needle|SECRET', output_mode: 'files_with_matches' }],
      [grepTool, { pattern: 'PATH=|root:|needle|SECRET' }],
      [grepTool, { pattern: 'PATH=', glob: 'proc-link/environ' }],
      [grepTool, { pattern: 'PATH=', glob: 'environ-link' }],
      [grepTool, { pattern: 'root:', glob: 'root-link/etc/passwd' }],
      [grepTool, { pattern: 'root:', glob: '{/etc,x}/passwd' }],
      [grepTool, { pattern: '.', glob: `tenant-link/${SECRET_NAME}` }],
      [grepTool, { pattern: '.', glob: `parent-link/outside/${SECRET_NAME}` }],
      [globTool, { pattern: '**/*' }],
      [globTool, { pattern: 'root-link/etc/*' }],
      [globTool, { pattern: 'proc-link/*' }],
      [globTool, { pattern: 'tenant-link/*' }],
      [globTool, { pattern: `parent-link/outside/${SECRET_NAME}` }],
      [globTool, { pattern: 'loop-a/**' }],
    ];
    const outputs = await Promise.all(calls.map(([tool, args]) => runTool(tool, args, ws.context())));
    outputs.forEach((result, index) => {
      const text = shown(result, calls[index][1]);
      expect(text).not.toContain(environ);
      expect(text).not.toContain('root:x:0');
      expect(text).not.toContain(marker);
      expect(text).not.toContain(SECRET_NAME);
    });
    const [files, , , , , escaped] = outputs;
    expect(files.output.split('\n\n')[0].split('\n')).toEqual([
      'nest/sub2/inside-c.txt',
      'real/kept.txt',
      'sub/deep/inside-b.txt',
      'sub/inside-a.txt',
      ...Array.from({ length: 40 }, (_, i) => `tree/d${i % 5}/f${i}.txt`).sort(),
    ]);
    // A brace alternative that names an absolute path is refused like an absolute pattern.
    expect(escaped).toMatchObject({ exitCode: 1 });
    expect(escaped.output).toMatch(/is outside the workspace/);
  });

  it('paths through links that leave the workspace are refused', async () => {
    for (const [tool, args] of [
      [lsTool, { path: 'root-link' }],
      [lsTool, { path: 'proc-link' }],
      [lsTool, { path: 'parent-link' }],
      [lsTool, { path: 'tenant-link' }],
      [grepTool, { pattern: 'PATH=', path: 'environ-link' }],
      [grepTool, { pattern: 'PATH=', path: 'proc-link' }],
      [grepTool, { pattern: '.', path: 'parent-link' }],
      [globTool, { pattern: '*', path: 'root-link' }],
      [globTool, { pattern: '*', path: 'tenant-link' }],
    ] as const) {
      const result = await runTool(tool, args, ws.context());
      expect(result.exitCode).toBe(1);
      expect(result.output).toMatch(/is outside the workspace/);
    }
    const loop = await runTool(lsTool, { path: 'loop-a' }, ws.context());
    expect(loop).toMatchObject({ exitCode: 1, output: 'Too many levels of symbolic links: loop-a' });
  });

  it('links that stay inside keep working', async () => {
    const listing = await runTool(lsTool, {}, ws.context());
    // Links are listed as names (not as directories), as before.
    expect(listing.output.split('\n')).toEqual(
      expect.arrayContaining(['alias', 'abs-alias', 'kept-link.txt', 'root-link', 'real/', 'sub/']),
    );
    expect(await runTool(lsTool, { path: 'alias' }, ws.context())).toMatchObject({
      exitCode: 0,
      output: 'kept.txt',
      metadata: { path: 'real' },
    });
    expect(await runTool(lsTool, { path: 'abs-alias' }, ws.context())).toMatchObject({
      exitCode: 0,
      output: 'kept.txt',
    });
    expect((await runTool(lsTool, { path: 'self-link' }, ws.context())).output).toContain('real/');
    // A search path through a link searches its target, shown by its real path.
    expect((await runTool(grepTool, { pattern: 'needle', path: 'alias' }, ws.context())).output).toBe(
      'real/kept.txt:1:needle kept\n\n1 match(es) in 1 file(s)',
    );
    expect((await runTool(grepTool, { pattern: 'needle', path: 'kept-link.txt' }, ws.context())).output).toBe(
      'real/kept.txt:1:needle kept\n\n1 match(es) in 1 file(s)',
    );
    expect((await runTool(globTool, { pattern: '*', path: 'abs-alias' }, ws.context())).output).toBe(
      'real/kept.txt\n\n1 of 1 file(s) shown',
    );
    // A pattern's literal base through a link is followed (confined), shown by the name given.
    expect((await runTool(globTool, { pattern: 'alias/*.txt' }, ws.context())).output).toBe(
      'alias/kept.txt\n\n1 of 1 file(s) shown',
    );
    expect((await runTool(globTool, { pattern: 'alias/kept.txt' }, ws.context())).output).toBe(
      'alias/kept.txt\n\n1 of 1 file(s) shown',
    );
    expect((await runTool(grepTool, { pattern: 'needle', glob: 'alias/*' }, ws.context())).output).toBe(
      'alias/kept.txt:1:needle kept\n\n1 match(es) in 1 file(s)',
    );
  });

  it('cancellation stops a walk and releases what it opened', async () => {
    for (let i = 0; i < 300; i++) ws.file(`big/d${i % 30}/f${i}.txt`, 'needle\n');
    await runTool(lsTool, {}, ws.context());
    const fdsBefore = fdCount();
    const controller = new AbortController();
    controller.abort();
    expect(await runTool(grepTool, { pattern: 'needle' }, ws.context(controller.signal))).toMatchObject({
      exitCode: 1,
      output: 'grep was cancelled.',
    });
    expect(await runTool(globTool, { pattern: '**/*' }, ws.context(controller.signal))).toMatchObject({
      exitCode: 1,
      output: 'glob was cancelled.',
    });
    const late = new AbortController();
    const pending = runTool(grepTool, { pattern: 'needle', output_mode: 'count' }, ws.context(late.signal));
    setImmediate(() => late.abort());
    expect((await pending).output).toBe('grep was cancelled.');
    expect(fdCount()).toBe(fdsBefore);
  });
});
