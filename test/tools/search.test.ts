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
  it('content mode prints path:line:text sorted by path, skipping ignored dirs and binaries, with a match footer', async () => {
    const result = await runTool(grepTool, { pattern: 'TODO' }, ws.context());
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe(
      [
        'README.md:2:TODO docs',
        'src/a.ts:3:// TODO: one',
        'src/b.ts:1:const TODO = 1;',
        '',
        '3 match(es) in 3 file(s)',
      ].join('\n'),
    );
    expect(result.metadata).toMatchObject({
      source_anchors: ['README.md', 'src/a.ts', 'src/b.ts'],
      output_mode: 'content',
      search: { matching_lines: 3, matching_files: 3, truncated: false },
      page: { returned_items: 3, next_cursor: null, truncated: false },
    });
  });

  it('supports -i, glob (any depth), path and context lines with separators', async () => {
    const result = await runTool(grepTool, { pattern: 'todo', '-i': true, glob: '*.tsx', context: 1 }, ws.context());
    expect(result.output).toBe(
      [
        'src/deep/c.tsx-2-line2',
        'src/deep/c.tsx:3:todo lower',
        'src/deep/c.tsx-4-line4',
        '--',
        'src/deep/c.tsx-6-line6',
        'src/deep/c.tsx:7:todo again',
        '',
        '2 match(es) in 1 file(s)',
      ].join('\n'),
    );
    const scoped = await runTool(grepTool, { pattern: 'function \\w+', path: 'src', glob: '*.ts' }, ws.context());
    expect(scoped.output).toBe(
      'src/a.ts:2:export function alpha() {}\nsrc/b.ts:2:function beta() {}\n\n2 match(es) in 2 file(s)',
    );
    const oneFile = await runTool(grepTool, { pattern: 'beta', path: 'src/b.ts' }, ws.context());
    expect(oneFile.output).toBe('src/b.ts:2:function beta() {}\n\n1 match(es) in 1 file(s)');
  });

  it('files_with_matches, count and summary modes are sorted pages with a footer', async () => {
    const files = await runTool(
      grepTool,
      { pattern: 'todo', '-i': true, output_mode: 'files_with_matches' },
      ws.context(),
    );
    expect(files.output).toBe('README.md\nsrc/a.ts\nsrc/b.ts\nsrc/deep/c.tsx\n\n4 of 4 matching file(s) shown');
    expect(files.metadata).toMatchObject({
      output_mode: 'files_with_matches',
      search: { matching_lines: 5, matching_files: 4 },
      page: { total_items: 4, next_cursor: null },
    });
    const count = await runTool(grepTool, { pattern: 'todo', '-i': true, output_mode: 'count' }, ws.context());
    expect(count.output).toBe('README.md:1\nsrc/a.ts:1\nsrc/b.ts:1\nsrc/deep/c.tsx:2\n\n4 of 4 matching file(s) shown');
    const summary = await runTool(
      grepTool,
      { pattern: 'todo', '-i': true, output_mode: 'summary', path: 'src/deep' },
      ws.context(),
    );
    expect(summary.output).toBe(
      'src/deep/c.tsx: 2 match(es); first at line 3: todo lower\n\n1 of 1 matching file(s) shown',
    );
  });

  it('pages the file modes with a cursor; content mode refuses a cursor', async () => {
    const first = await runTool(
      grepTool,
      { pattern: 'todo', '-i': true, output_mode: 'files_with_matches', limit: 2 },
      ws.context(),
    );
    expect(first.output).toBe(
      'README.md\nsrc/a.ts\n\n2 of 4 matching file(s) shown\nMore files available; continue with cursor=2',
    );
    expect(first.metadata).toMatchObject({
      source_anchors: ['README.md', 'src/a.ts'],
      page: { offset: 0, applied_limit: 2, returned_items: 2, next_cursor: '2', truncated: true },
    });
    const second = await runTool(
      grepTool,
      { pattern: 'todo', '-i': true, output_mode: 'files_with_matches', limit: 2, cursor: '2' },
      ws.context(),
    );
    expect(second.output).toBe('src/b.ts\nsrc/deep/c.tsx\n\n2 of 4 matching file(s) shown');
    const past = await runTool(
      grepTool,
      { pattern: 'todo', '-i': true, output_mode: 'count', cursor: '9' },
      ws.context(),
    );
    expect(past).toMatchObject({ exitCode: 1, output: 'cursor offset 9 exceeds the 4 matching file(s)' });
    const content = grepTool.parameters.safeParse({ pattern: 'x', cursor: '2' });
    expect(content.error?.issues[0]).toMatchObject({
      path: ['cursor'],
      message: 'cursor is only for output_mode files_with_matches, count or summary',
    });
    expect(grepTool.parameters.safeParse({ pattern: 'x', limit: 1001 }).success).toBe(false);
    expect(grepTool.parameters.safeParse({ pattern: 'x', output_mode: 'lines' }).success).toBe(false);
  });

  it('stops content mode at the limit and says so', async () => {
    ws.file('many.txt', Array.from({ length: 50 }, () => 'hit').join('\n'));
    const result = await runTool(grepTool, { pattern: 'hit', limit: 5 }, ws.context());
    expect(result.output.split('\n').filter((line) => line.startsWith('many.txt:'))).toHaveLength(5);
    expect(result.output).toMatch(/5 match\(es\) in 1 file\(s\)\n\(Stopped after 5 matching lines/);
    expect(result.metadata).toMatchObject({
      search: { matching_lines: 5, truncated: true },
      page: { truncated: true },
    });
  });

  it('reports no matches, an invalid regex and a missing path clearly', async () => {
    const none = await runTool(grepTool, { pattern: 'zzz_nothing' }, ws.context());
    expect(none).toMatchObject({ exitCode: 0, output: 'No matches found for pattern: zzz_nothing' });
    expect(none.metadata).toMatchObject({
      source_anchors: [],
      search: { matching_lines: 0, matching_files: 0, truncated: false },
    });
    const invalid = await runTool(grepTool, { pattern: 'foo(' }, ws.context());
    expect(invalid.exitCode).toBe(1);
    expect(invalid.output).toMatch(/^Invalid regex pattern 'foo\(': /);
    expect(invalid.errorKind).toMatchObject({ type: 'invalid_argument' });
    expect(await runTool(grepTool, { pattern: 'x', path: 'nowhere' }, ws.context())).toMatchObject({
      exitCode: 1,
      output: 'Path not found: nowhere',
    });
  });
});

describe('glob', () => {
  it('lists matching files with a footer, skipping node_modules and .git', async () => {
    const result = await runTool(globTool, { pattern: '**/*.{ts,tsx}', sort: 'path' }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: 'src/a.ts\nsrc/b.ts\nsrc/deep/c.tsx\n\n3 of 3 file(s) shown' });
    expect(result.metadata).toMatchObject({
      sort: 'path',
      page: { total_items: 3, returned_items: 3, next_cursor: null, truncated: false },
    });
    const under = await runTool(globTool, { pattern: '*.ts', path: 'src' }, ws.context());
    expect(under.output).toBe('src/a.ts\nsrc/b.ts\n\n2 of 2 file(s) shown');
    expect(under.metadata).toMatchObject({ sort: 'backend' });
    const none = await runTool(globTool, { pattern: '**/*.py' }, ws.context());
    expect(none).toMatchObject({ exitCode: 0, output: 'No files found matching pattern: **/*.py' });
  });

  it("sort backend lists a directory's files before its subdirectories; path sorts by full path", async () => {
    ws.file('src/z.ts', '');
    ws.file('src/deep/a.ts', '');
    const backend = await runTool(globTool, { pattern: 'src/**/*.ts' }, ws.context());
    expect(backend.output.split('\n\n')[0].split('\n')).toEqual(['src/a.ts', 'src/b.ts', 'src/z.ts', 'src/deep/a.ts']);
    const byPath = await runTool(globTool, { pattern: 'src/**/*.ts', sort: 'path' }, ws.context());
    expect(byPath.output.split('\n\n')[0].split('\n')).toEqual(['src/a.ts', 'src/b.ts', 'src/deep/a.ts', 'src/z.ts']);
    expect(globTool.parameters.safeParse({ pattern: '*', sort: 'mtime' }).success).toBe(false);
  });

  it('pages with a cursor', async () => {
    for (let i = 0; i < 7; i++) ws.file(`pages/f${i}.txt`, String(i));
    const first = await runTool(globTool, { pattern: 'pages/*.txt', limit: 3 }, ws.context());
    expect(first.output).toBe(
      'pages/f0.txt\npages/f1.txt\npages/f2.txt\n\n3 of 7 file(s) shown\nMore files available; continue with cursor=3',
    );
    expect(first.metadata).toMatchObject({
      page: {
        offset: 0,
        requested_limit: 3,
        applied_limit: 3,
        returned_items: 3,
        total_items: 7,
        next_cursor: '3',
        truncated: true,
      },
    });
    const second = await runTool(globTool, { pattern: 'pages/*.txt', limit: 3, cursor: '3' }, ws.context());
    expect(second.output).toBe(
      'pages/f3.txt\npages/f4.txt\npages/f5.txt\n\n3 of 7 file(s) shown\nMore files available; continue with cursor=6',
    );
    const last = await runTool(globTool, { pattern: 'pages/*.txt', limit: 3, cursor: '6' }, ws.context());
    expect(last.output).toBe('pages/f6.txt\n\n1 of 7 file(s) shown');
    expect(last.metadata).toMatchObject({ page: { returned_items: 1, total_items: 7, next_cursor: null } });
    const bad = await runTool(globTool, { pattern: 'pages/*.txt', cursor: 'abc' }, ws.context());
    expect(bad.exitCode).toBe(1);
    expect(bad.output).toMatch(/Invalid cursor/);
    expect(globTool.parameters.safeParse({ pattern: '*', limit: 0 }).success).toBe(false);
    expect(globTool.parameters.safeParse({ pattern: '*', limit: 1001 }).success).toBe(false);
  });
});

describe('ls', () => {
  it('lists sorted entries with directories suffixed by /', async () => {
    const result = await runTool(lsTool, {}, ws.context());
    expect(result.output).toBe(['.git/', 'README.md', 'dist/', 'image.bin', 'node_modules/', 'src/'].join('\n'));
    expect(result.metadata).toMatchObject({
      path: '.',
      entries: 6,
      truncated: false,
      page: { total_items: 6, next_cursor: null },
    });
    expect((await runTool(lsTool, { path: 'src' }, ws.context())).output).toBe('a.ts\nb.ts\ndeep/');
    mkdirSync(path.join(ws.root, 'empty'));
    expect((await runTool(lsTool, { path: 'empty' }, ws.context())).output).toBe('(empty directory)');
  });

  it('pages with limit and cursor', async () => {
    const first = await runTool(lsTool, { limit: 4 }, ws.context());
    expect(first.output).toBe(
      '.git/\nREADME.md\ndist/\nimage.bin\n\n4 of 6 entries shown\nMore entries available; continue with cursor=4',
    );
    expect(first.metadata).toMatchObject({ truncated: true, page: { next_cursor: '4', returned_items: 4 } });
    const second = await runTool(lsTool, { limit: 4, cursor: '4' }, ws.context());
    expect(second.output).toBe('node_modules/\nsrc/\n\n2 of 6 entries shown');
    expect(await runTool(lsTool, { cursor: 'x' }, ws.context())).toMatchObject({ exitCode: 1 });
  });

  it('errors on a missing path and on a file', async () => {
    expect(await runTool(lsTool, { path: 'nope' }, ws.context())).toMatchObject({
      exitCode: 1,
      output: 'Directory not found: nope',
    });
    const file = await runTool(lsTool, { path: 'README.md' }, ws.context());
    expect(file.exitCode).toBe(1);
    expect(file.output).toMatch(/not a directory/);
  });
});
