import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { globTool } from '../../src/runtime/tools/builtin/glob.js';
import { grepTool } from '../../src/runtime/tools/builtin/grep.js';
import { lsTool } from '../../src/runtime/tools/builtin/ls.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

let ws: TestWorkspace;
beforeEach(() => {
  ws = createTestWorkspace();
  ws.file('src/a.ts', 'import x from "y";\nexport function alpha() {}\n// TODO: one\n');
  ws.file('src/b.ts', 'const TODO = 1;\nfunction beta() {}\n');
  ws.file('src/deep/c.tsx', 'line1\nline2\ntodo lower\nline4\nline5\nline6\ntodo again\n');
  ws.file('README.md', '# Title\nTODO docs\n');
  ws.file('node_modules/pkg/index.ts', 'TODO in deps\n');
  ws.file('.git/config', 'TODO in git\n');
  ws.file('dist/out.js', 'TODO in dist\n');
  ws.file('image.bin', Buffer.from([0x00, 0x54, 0x4f, 0x44, 0x4f]));
});
afterEach(() => ws.cleanup());

describe('grep', () => {
  it('content mode prints path:line:text sorted by path, skipping ignored dirs and binaries', async () => {
    const result = await runTool(grepTool, { pattern: 'TODO' }, ws.context());
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe(['README.md:2:TODO docs', 'src/a.ts:3:// TODO: one', 'src/b.ts:1:const TODO = 1;'].join('\n'));
  });

  it('supports -i, glob (any depth), path and context lines with separators', async () => {
    const result = await runTool(grepTool, { pattern: 'todo', '-i': true, glob: '*.tsx', context: 1 }, ws.context());
    expect(result.output).toBe(
      ['src/deep/c.tsx-2-line2', 'src/deep/c.tsx:3:todo lower', 'src/deep/c.tsx-4-line4', '--', 'src/deep/c.tsx-6-line6', 'src/deep/c.tsx:7:todo again'].join('\n'),
    );
    const scoped = await runTool(grepTool, { pattern: 'function \\w+', path: 'src', glob: '*.ts' }, ws.context());
    expect(scoped.output).toBe('src/a.ts:2:export function alpha() {}\nsrc/b.ts:2:function beta() {}');
    const oneFile = await runTool(grepTool, { pattern: 'beta', path: 'src/b.ts' }, ws.context());
    expect(oneFile.output).toBe('src/b.ts:2:function beta() {}');
  });

  it('files_with_matches and count modes', async () => {
    const files = await runTool(grepTool, { pattern: 'todo', '-i': true, output_mode: 'files_with_matches' }, ws.context());
    expect(files.output).toBe('README.md\nsrc/a.ts\nsrc/b.ts\nsrc/deep/c.tsx');
    const count = await runTool(grepTool, { pattern: 'todo', '-i': true, output_mode: 'count' }, ws.context());
    expect(count.output).toBe('README.md:1\nsrc/a.ts:1\nsrc/b.ts:1\nsrc/deep/c.tsx:2');
  });

  it('stops at the limit and says so', async () => {
    ws.file('many.txt', Array.from({ length: 50 }, () => 'hit').join('\n'));
    const result = await runTool(grepTool, { pattern: 'hit', limit: 5 }, ws.context());
    expect(result.output.split('\n').filter((line) => line.startsWith('many.txt:'))).toHaveLength(5);
    expect(result.output).toMatch(/Stopped after 5 matches/);
    expect(result.metadata).toMatchObject({ truncated: true, matches: 5 });
    const files = await runTool(grepTool, { pattern: 'todo', '-i': true, output_mode: 'files_with_matches', limit: 2 }, ws.context());
    expect(files.output).toMatch(/^README\.md\nsrc\/a\.ts\n\n\(Stopped after 2 files/);
  });

  it('reports no matches, an invalid regex and a missing path clearly', async () => {
    expect(await runTool(grepTool, { pattern: 'zzz_nothing' }, ws.context())).toMatchObject({ exitCode: 0, output: 'No matches found.' });
    const invalid = await runTool(grepTool, { pattern: 'foo(' }, ws.context());
    expect(invalid.exitCode).toBe(1);
    expect(invalid.output).toMatch(/^Invalid regular expression "foo\(":/);
    expect(await runTool(grepTool, { pattern: 'x', path: 'nowhere' }, ws.context())).toMatchObject({ exitCode: 1, output: 'Path not found: nowhere' });
  });
});

describe('glob', () => {
  it('lists matching files sorted, skipping node_modules and .git', async () => {
    const result = await runTool(globTool, { pattern: '**/*.{ts,tsx}' }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: 'src/a.ts\nsrc/b.ts\nsrc/deep/c.tsx' });
    const under = await runTool(globTool, { pattern: '*.ts', path: 'src' }, ws.context());
    expect(under.output).toBe('src/a.ts\nsrc/b.ts');
    expect((await runTool(globTool, { pattern: '**/*.py' }, ws.context())).output).toBe('No files found.');
  });

  it('pages with an opaque cursor', async () => {
    for (let i = 0; i < 7; i++) ws.file(`pages/f${i}.txt`, String(i));
    const first = await runTool(globTool, { pattern: 'pages/*.txt', limit: 3 }, ws.context());
    expect(first.output).toBe('pages/f0.txt\npages/f1.txt\npages/f2.txt\nnext_cursor: 3');
    const second = await runTool(globTool, { pattern: 'pages/*.txt', limit: 3, cursor: '3' }, ws.context());
    expect(second.output).toBe('pages/f3.txt\npages/f4.txt\npages/f5.txt\nnext_cursor: 6');
    const last = await runTool(globTool, { pattern: 'pages/*.txt', limit: 3, cursor: '6' }, ws.context());
    expect(last.output).toBe('pages/f6.txt');
    expect(last.metadata).toMatchObject({ count: 1, total: 7 });
    const bad = await runTool(globTool, { pattern: 'pages/*.txt', cursor: 'abc' }, ws.context());
    expect(bad.exitCode).toBe(1);
    expect(bad.output).toMatch(/Invalid cursor/);
  });
});

describe('ls', () => {
  it('lists sorted entries with directories suffixed by /', async () => {
    const result = await runTool(lsTool, {}, ws.context());
    expect(result.output).toBe(['.git/', 'README.md', 'dist/', 'image.bin', 'node_modules/', 'src/'].join('\n'));
    expect((await runTool(lsTool, { path: 'src' }, ws.context())).output).toBe('a.ts\nb.ts\ndeep/');
    mkdirSync(path.join(ws.root, 'empty'));
    expect((await runTool(lsTool, { path: 'empty' }, ws.context())).output).toBe('(empty directory)');
  });

  it('errors on a missing path and on a file', async () => {
    expect(await runTool(lsTool, { path: 'nope' }, ws.context())).toMatchObject({ exitCode: 1, output: 'Directory not found: nope' });
    const file = await runTool(lsTool, { path: 'README.md' }, ws.context());
    expect(file.exitCode).toBe(1);
    expect(file.output).toMatch(/not a directory/);
  });
});
