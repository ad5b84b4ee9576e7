import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool } from '../../src/runtime/tools/builtin/edit.js';
import { readTool } from '../../src/runtime/tools/builtin/read.js';
import { writeTool } from '../../src/runtime/tools/builtin/write.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

let ws: TestWorkspace;
beforeEach(() => {
  ws = createTestWorkspace();
});
afterEach(() => ws.cleanup());

describe('read', () => {
  it('numbers lines cat -n style', async () => {
    ws.file('a.txt', 'alpha\nbeta\r\ngamma\n');
    const result = await runTool(readTool, { file_path: 'a.txt' }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: '     1\talpha\n     2\tbeta\n     3\tgamma' });
  });

  it('windows with offset and limit and says when more lines follow', async () => {
    ws.file('n.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    // offset is 0-based: offset 3 starts at line 4.
    const result = await runTool(readTool, { file_path: 'n.txt', offset: 3, limit: 3 }, ws.context());
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe(
      '     4\tline 4\n     5\tline 5\n     6\tline 6\n\n... (more lines available; continue with offset=6)',
    );
    expect(result.metadata).toEqual({
      source_anchors: ['n.txt'],
      range: {
        offset: 3,
        requested_limit: 3,
        applied_limit: 3,
        returned_lines: 3,
        next_offset: 6,
        eof: false,
        total_lines: null,
        limit_clamped: false,
        output_bytes: Buffer.byteLength(result.output),
      },
    });
    const tail = await runTool(readTool, { file_path: 'n.txt', offset: 8 }, ws.context());
    expect(tail.output).toBe('     9\tline 9\n    10\tline 10');
    expect(tail.metadata).toMatchObject({
      range: {
        offset: 8,
        requested_limit: null,
        applied_limit: 2000,
        returned_lines: 2,
        next_offset: null,
        eof: true,
        total_lines: 10,
      },
    });
    expect(readTool.parameters.safeParse({ file_path: 'n.txt', limit: 2001 }).success).toBe(false);
    expect(readTool.parameters.safeParse({ file_path: 'n.txt', offset: -1 }).success).toBe(false);
  });

  it('defaults to 2000 lines and cuts long lines', async () => {
    ws.file('big.txt', `${'x'.repeat(2500)}\n${Array.from({ length: 2100 }, (_, i) => String(i)).join('\n')}\n`);
    const result = await runTool(readTool, { file_path: 'big.txt' }, ws.context());
    const lines = result.output.split('\n');
    expect(lines[0]).toBe(`     1\t${'x'.repeat(2000)}... [line truncated, 500 more chars]`);
    expect(result.output).toContain('  2000\t1998');
    expect(result.output).not.toContain('  2001\t');
    expect(result.output).toContain('\n\n... (more lines available; continue with offset=2000)');
  });

  it('errors on missing file, directory, binary file and offset past the end', async () => {
    expect(await runTool(readTool, { file_path: 'nope.txt' }, ws.context())).toMatchObject({
      exitCode: 1,
      output: 'File not found: nope.txt',
    });
    mkdirSync(path.join(ws.root, 'dir'));
    const dir = await runTool(readTool, { file_path: 'dir' }, ws.context());
    expect(dir.exitCode).toBe(1);
    expect(dir.output).toMatch(/is a directory/);
    ws.file('bin.dat', Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    const bin = await runTool(readTool, { file_path: 'bin.dat' }, ws.context());
    expect(bin.exitCode).toBe(1);
    expect(bin.output).toMatch(/binary file/);
    ws.file('short.txt', 'one\ntwo\n');
    const past = await runTool(readTool, { file_path: 'short.txt', offset: 5 }, ws.context());
    expect(past).toMatchObject({ exitCode: 1, output: 'Offset 5 exceeds file length (2 lines)' });
    expect((await runTool(readTool, { file_path: 'short.txt', offset: 2 }, ws.context())).output).toBe(
      'Offset 2 exceeds file length (2 lines)',
    );
  });

  it('reads across 64 KiB chunks: multi-byte characters split at a boundary, windows deep in the file, the exact last line', async () => {
    // 'é' is two bytes: 100 lines of about 2 KB make 200 KB, so chunk boundaries fall inside characters and lines.
    const line = (n: number): string => `${n}:${'é'.repeat(1000 + (n % 7))}`;
    ws.file('wide.txt', `${Array.from({ length: 100 }, (_, i) => line(i + 1)).join('\n')}\nlast`);
    const deep = await runTool(readTool, { file_path: 'wide.txt', offset: 98, limit: 5 }, ws.context());
    expect(deep.exitCode).toBe(0);
    expect(deep.output).toBe(`    99\t${line(99)}\n   100\t${line(100)}\n   101\tlast`);
    const all = await runTool(readTool, { file_path: 'wide.txt' }, ws.context());
    expect(all.output.split('\n').map((row) => row.split('\t')[1])).toEqual([
      ...Array.from({ length: 100 }, (_, i) => line(i + 1)),
      'last',
    ]);
    const window = await runTool(readTool, { file_path: 'wide.txt', offset: 1, limit: 1 }, ws.context());
    expect(window.output).toBe(`     2\t${line(2)}\n\n... (more lines available; continue with offset=2)`);
    // Exactly `limit` lines and nothing after them: no "more lines" note.
    ws.file('three.txt', 'a\nb\nc\n');
    expect((await runTool(readTool, { file_path: 'three.txt', limit: 3 }, ws.context())).output).toBe(
      '     1\ta\n     2\tb\n     3\tc',
    );
  });

  it('refuses a FIFO at once instead of waiting for a writer', async () => {
    const fifo = path.join(ws.root, 'pipe');
    execFileSync('mkfifo', [fifo]);
    expect(await runTool(readTool, { file_path: 'pipe' }, ws.context())).toMatchObject({
      exitCode: 1,
      output: 'pipe is not a regular file.',
    });
  });

  it('reads an empty file', async () => {
    ws.file('empty.txt', '');
    expect(await runTool(readTool, { file_path: 'empty.txt' }, ws.context())).toMatchObject({
      exitCode: 0,
      output: '(File is empty.)',
    });
  });
});

describe('write', () => {
  it('creates parent directories and reports bytes and lines', async () => {
    const result = await runTool(writeTool, { file_path: 'deep/er/new.txt', content: 'héllo\nworld' }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: 'Wrote 12 bytes (2 lines) to deep/er/new.txt' });
    expect(readFileSync(path.join(ws.root, 'deep/er/new.txt'), 'utf8')).toBe('héllo\nworld');
    expect(result.metadata).toEqual({ file_path: 'deep/er/new.txt', created: true, after: 'héllo\nworld' });
  });

  it('overwrites an existing file (before and after in metadata) and refuses a directory', async () => {
    ws.file('a.txt', 'old');
    const result = await runTool(writeTool, { file_path: path.join(ws.root, 'a.txt'), content: 'new\n' }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: 'Wrote 4 bytes (1 lines) to a.txt' });
    expect(result.metadata).toEqual({ file_path: 'a.txt', created: false, after: 'new\n', before: 'old' });
    mkdirSync(path.join(ws.root, 'd'));
    const dir = await runTool(writeTool, { file_path: 'd', content: 'x' }, ws.context());
    expect(dir.exitCode).toBe(1);
    expect(dir.output).toMatch(/is a directory/);
  });

  it('appends, creating the file, and reports offset, appended bytes and resulting size', async () => {
    const first = await runTool(
      writeTool,
      { file_path: 'log.txt', content: 'one\n', mode: 'append', expected_offset: 0 },
      ws.context(),
    );
    expect(first).toMatchObject({ exitCode: 0, output: 'Wrote 4 bytes (1 lines) to log.txt' });
    expect(first.metadata).toEqual({
      file_path: 'log.txt',
      created: true,
      after: 'one\n',
      mode: 'append',
      offset: 0,
      appended_bytes: 4,
      resulting_size: 4,
      already_applied: false,
    });
    const second = await runTool(writeTool, { file_path: 'log.txt', content: 'two\n', mode: 'append' }, ws.context());
    expect(second.metadata).toMatchObject({
      created: false,
      after: 'one\ntwo\n',
      offset: 4,
      appended_bytes: 4,
      resulting_size: 8,
      already_applied: false,
    });
    expect(readFileSync(path.join(ws.root, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('append with expected_offset: a retried chunk is not written twice; a wrong offset is a version conflict', async () => {
    const args = { file_path: 'chunks.txt', content: 'B', mode: 'append', expected_offset: 1 };
    ws.file('chunks.txt', 'A');
    expect((await runTool(writeTool, args, ws.context())).metadata).toMatchObject({
      offset: 1,
      already_applied: false,
      resulting_size: 2,
    });
    const retry = await runTool(writeTool, args, ws.context());
    expect(retry).toMatchObject({
      exitCode: 0,
      output: 'Wrote 1 bytes (1 lines) to chunks.txt (already applied at offset 1; nothing was written)',
    });
    expect(retry.metadata).toMatchObject({
      offset: 1,
      appended_bytes: 0,
      resulting_size: 2,
      already_applied: true,
      after: 'AB',
    });
    expect(readFileSync(path.join(ws.root, 'chunks.txt'), 'utf8')).toBe('AB');
    const conflict = await runTool(writeTool, { ...args, content: 'C', expected_offset: 5 }, ws.context());
    expect(conflict.exitCode).toBe(1);
    expect(conflict.output).toMatch(/^chunks\.txt is 2 bytes, not expected_offset 5/);
    expect(conflict.errorKind).toEqual({ type: 'version_conflict', path: 'chunks.txt', expected: '5', actual: '2' });
    expect(readFileSync(path.join(ws.root, 'chunks.txt'), 'utf8')).toBe('AB');
  });

  it('validates mode and expected_offset before writing (0 is tolerated with overwrite)', () => {
    const parse = (args: unknown) => writeTool.parameters.safeParse(args);
    expect(parse({ file_path: 'a', content: 'x', expected_offset: 0 }).success).toBe(true);
    const bad = parse({ file_path: 'a', content: 'x', expected_offset: 3 });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({
      path: ['expected_offset'],
      message: 'expected_offset is only valid with mode "append" (0 is tolerated with overwrite)',
    });
    expect(parse({ file_path: 'a', content: 'x', mode: 'prepend' }).success).toBe(false);
    expect(parse({ file_path: 'a', content: 'x', mode: 'append', expected_offset: -1 }).success).toBe(false);
    expect(existsSync(path.join(ws.root, 'a'))).toBe(false);
  });

  it('cuts huge contents in metadata and says so', async () => {
    const big = 'x'.repeat(300 * 1024);
    const result = await runTool(writeTool, { file_path: 'big.txt', content: big }, ws.context());
    expect(result.metadata?.after_truncated).toBe(true);
    expect((result.metadata?.after as string).length).toBe(256 * 1024);
    expect(readFileSync(path.join(ws.root, 'big.txt'), 'utf8')).toBe(big);
  });
});

describe('edit', () => {
  it('replaces a unique occurrence literally (no $ patterns), with the seed metadata', async () => {
    ws.file('a.ts', 'const a = 1;\nconst b = 2;\n');
    const result = await runTool(
      editTool,
      { file_path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = "$&$1";' },
      ws.context(),
    );
    expect(result).toMatchObject({ exitCode: 0, output: 'Replaced 1 occurrence(s) in a.ts' });
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('const a = 1;\nconst b = "$&$1";\n');
    expect(result.metadata).toEqual({
      file_path: 'a.ts',
      before: 'const a = 1;\nconst b = 2;\n',
      after: 'const a = 1;\nconst b = "$&$1";\n',
      dry_run: false,
      replacement_count: 1,
      expected_replacements: null,
      max_replacements: null,
    });
  });

  it('refuses an ambiguous match unless replace_all', async () => {
    ws.file('a.ts', 'foo();\nfoo();\nfoo();\n');
    const ambiguous = await runTool(
      editTool,
      { file_path: 'a.ts', old_string: 'foo()', new_string: 'bar()' },
      ws.context(),
    );
    expect(ambiguous.exitCode).toBe(1);
    expect(ambiguous.output).toMatch(/^old_string found 3 times in a\.ts\. Use replace_all=true/);
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('foo();\nfoo();\nfoo();\n');
    const all = await runTool(
      editTool,
      { file_path: 'a.ts', old_string: 'foo()', new_string: 'bar()', replace_all: true },
      ws.context(),
    );
    expect(all).toMatchObject({ exitCode: 0, output: 'Replaced 3 occurrence(s) in a.ts' });
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('bar();\nbar();\nbar();\n');
  });

  it('dry_run counts without writing; expected_replacements and max_replacements bound the edit', async () => {
    ws.file('a.ts', 'x x x\n');
    const dry = await runTool(
      editTool,
      { file_path: 'a.ts', old_string: 'x', new_string: 'y', replace_all: true, dry_run: true },
      ws.context(),
    );
    expect(dry).toMatchObject({
      exitCode: 0,
      output: 'Dry run: would replace 3 occurrence(s) in a.ts; nothing was written',
    });
    expect(dry.metadata).toMatchObject({ dry_run: true, replacement_count: 3, before: 'x x x\n', after: 'y y y\n' });
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('x x x\n');
    expect(editTool.readOnlyFor?.({ dry_run: true })).toBe(true);
    expect(editTool.readOnlyFor?.({ dry_run: false })).toBe(false);

    const mismatch = await runTool(
      editTool,
      { file_path: 'a.ts', old_string: 'x', new_string: 'y', expected_replacements: 2 },
      ws.context(),
    );
    expect(mismatch).toMatchObject({
      exitCode: 1,
      output: 'Expected 2 replacement(s) but old_string found 3 time(s) in a.ts; nothing was written.',
    });
    const tooMany = await runTool(
      editTool,
      { file_path: 'a.ts', old_string: 'x', new_string: 'y', replace_all: true, max_replacements: 2 },
      ws.context(),
    );
    expect(tooMany).toMatchObject({
      exitCode: 1,
      output: 'old_string found 3 times in a.ts, more than max_replacements (2); nothing was written.',
    });
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('x x x\n');
    // expected_replacements confirms the count and replaces them all, without replace_all.
    const expected = await runTool(
      editTool,
      { file_path: 'a.ts', old_string: 'x', new_string: 'y', expected_replacements: 3, max_replacements: 3 },
      ws.context(),
    );
    expect(expected).toMatchObject({
      exitCode: 0,
      output: 'Replaced 3 occurrence(s) in a.ts',
      metadata: { expected_replacements: 3, max_replacements: 3 },
    });
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('y y y\n');
  });

  it('names its errors: file not found, old_string not found, identical strings; empty old_string fails validation', async () => {
    const missing = await runTool(
      editTool,
      { file_path: 'missing.ts', old_string: 'a', new_string: 'b' },
      ws.context(),
    );
    expect(missing).toMatchObject({
      exitCode: 1,
      output: 'File not found: missing.ts',
      errorKind: { type: 'not_found', path: 'missing.ts' },
    });
    ws.file('a.ts', 'hello\n');
    const notFound = await runTool(editTool, { file_path: 'a.ts', old_string: 'bye', new_string: 'x' }, ws.context());
    expect(notFound.exitCode).toBe(1);
    expect(notFound.output).toMatch(/^old_string not found in a\.ts/);
    const same = await runTool(editTool, { file_path: 'a.ts', old_string: 'hello', new_string: 'hello' }, ws.context());
    expect(same.exitCode).toBe(1);
    expect(same.output).toMatch(/identical/);
    const empty = editTool.parameters.safeParse({ file_path: 'a.ts', old_string: '', new_string: 'x' });
    expect(empty.success).toBe(false);
    expect(empty.error?.issues[0].path).toEqual(['old_string']);
    for (const bound of ['max_replacements', 'expected_replacements']) {
      expect(
        editTool.parameters.safeParse({ file_path: 'a.ts', old_string: 'a', new_string: 'b', [bound]: 0 }).success,
        bound,
      ).toBe(false);
    }
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('hello\n');
  });
});
