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
    const result = await runTool(readTool, { file_path: 'n.txt', offset: 4, limit: 3 }, ws.context());
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain('     4\tline 4\n     5\tline 5\n     6\tline 6');
    expect(result.output).toContain('offset=7');
    const tail = await runTool(readTool, { file_path: 'n.txt', offset: 9 }, ws.context());
    expect(tail.output).toBe('     9\tline 9\n    10\tline 10');
  });

  it('defaults to 2000 lines and cuts long lines', async () => {
    ws.file('big.txt', `${'x'.repeat(2500)}\n${Array.from({ length: 2100 }, (_, i) => String(i)).join('\n')}\n`);
    const result = await runTool(readTool, { file_path: 'big.txt' }, ws.context());
    const lines = result.output.split('\n');
    expect(lines[0]).toBe(`     1\t${'x'.repeat(2000)}... [line truncated, 500 more chars]`);
    expect(result.output).toContain('  2000\t1998');
    expect(result.output).not.toContain('  2001\t');
    expect(result.output).toContain('offset=2001');
  });

  it('errors on missing file, directory, binary file and offset past the end', async () => {
    expect(await runTool(readTool, { file_path: 'nope.txt' }, ws.context())).toMatchObject({ exitCode: 1, output: 'File not found: nope.txt' });
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
    expect(past.exitCode).toBe(1);
    expect(past.output).toMatch(/past the end .* 2 lines/);
  });

  it('reads across 64 KiB chunks: multi-byte characters split at a boundary, windows deep in the file, the exact last line', async () => {
    // 'é' is two bytes: 100 lines of about 2 KB make 200 KB, so chunk boundaries fall inside characters and lines.
    const line = (n: number): string => `${n}:${'é'.repeat(1000 + (n % 7))}`;
    ws.file('wide.txt', `${Array.from({ length: 100 }, (_, i) => line(i + 1)).join('\n')}\nlast`);
    const deep = await runTool(readTool, { file_path: 'wide.txt', offset: 99, limit: 5 }, ws.context());
    expect(deep.exitCode).toBe(0);
    expect(deep.output).toBe(`    99\t${line(99)}\n   100\t${line(100)}\n   101\tlast`);
    const all = await runTool(readTool, { file_path: 'wide.txt' }, ws.context());
    expect(all.output.split('\n').map((row) => row.split('\t')[1])).toEqual([...Array.from({ length: 100 }, (_, i) => line(i + 1)), 'last']);
    const window = await runTool(readTool, { file_path: 'wide.txt', offset: 2, limit: 1 }, ws.context());
    expect(window.output).toContain(`     2\t${line(2)}\n\n(Showing lines 2-2`);
    // Exactly `limit` lines and nothing after them: no "more lines" note.
    ws.file('three.txt', 'a\nb\nc\n');
    expect((await runTool(readTool, { file_path: 'three.txt', limit: 3 }, ws.context())).output).toBe('     1\ta\n     2\tb\n     3\tc');
  });

  it('refuses a FIFO at once instead of waiting for a writer', async () => {
    const fifo = path.join(ws.root, 'pipe');
    execFileSync('mkfifo', [fifo]);
    expect(await runTool(readTool, { file_path: 'pipe' }, ws.context())).toMatchObject({ exitCode: 1, output: 'pipe is not a regular file.' });
  });

  it('reads an empty file', async () => {
    ws.file('empty.txt', '');
    expect(await runTool(readTool, { file_path: 'empty.txt' }, ws.context())).toMatchObject({ exitCode: 0, output: '(File is empty.)' });
  });
});

describe('write', () => {
  it('creates parent directories and reports bytes', async () => {
    const result = await runTool(writeTool, { file_path: 'deep/er/new.txt', content: 'héllo\n' }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: 'Wrote 7 bytes to deep/er/new.txt' });
    expect(readFileSync(path.join(ws.root, 'deep/er/new.txt'), 'utf8')).toBe('héllo\n');
    expect(result.metadata).toMatchObject({ created: true });
  });

  it('overwrites an existing file and refuses a directory', async () => {
    ws.file('a.txt', 'old');
    const result = await runTool(writeTool, { file_path: path.join(ws.root, 'a.txt'), content: 'new' }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: 'Wrote 3 bytes to a.txt', metadata: { created: false } });
    mkdirSync(path.join(ws.root, 'd'));
    const dir = await runTool(writeTool, { file_path: 'd', content: 'x' }, ws.context());
    expect(dir.exitCode).toBe(1);
    expect(dir.output).toMatch(/is a directory/);
  });
});

describe('edit', () => {
  it('replaces a unique occurrence literally (no $ patterns)', async () => {
    ws.file('a.ts', 'const a = 1;\nconst b = 2;\n');
    const result = await runTool(editTool, { file_path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = "$&$1";' }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: 'Edited a.ts: replaced 1 occurrence.' });
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('const a = 1;\nconst b = "$&$1";\n');
  });

  it('refuses an ambiguous match unless replace_all', async () => {
    ws.file('a.ts', 'foo();\nfoo();\nfoo();\n');
    const ambiguous = await runTool(editTool, { file_path: 'a.ts', old_string: 'foo()', new_string: 'bar()' }, ws.context());
    expect(ambiguous.exitCode).toBe(1);
    expect(ambiguous.output).toMatch(/appears 3 times in a\.ts/);
    expect(ambiguous.output).toMatch(/replace_all/);
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('foo();\nfoo();\nfoo();\n');
    const all = await runTool(editTool, { file_path: 'a.ts', old_string: 'foo()', new_string: 'bar()', replace_all: true }, ws.context());
    expect(all).toMatchObject({ exitCode: 0, output: 'Edited a.ts: replaced 3 occurrences.' });
    expect(readFileSync(path.join(ws.root, 'a.ts'), 'utf8')).toBe('bar();\nbar();\nbar();\n');
  });

  it('names its errors: file not found, old_string not found, identical strings, empty old_string', async () => {
    expect(await runTool(editTool, { file_path: 'missing.ts', old_string: 'a', new_string: 'b' }, ws.context())).toMatchObject({
      exitCode: 1,
      output: 'File not found: missing.ts',
    });
    ws.file('a.ts', 'hello\n');
    const notFound = await runTool(editTool, { file_path: 'a.ts', old_string: 'bye', new_string: 'x' }, ws.context());
    expect(notFound.exitCode).toBe(1);
    expect(notFound.output).toMatch(/old_string was not found in a\.ts/);
    const same = await runTool(editTool, { file_path: 'a.ts', old_string: 'hello', new_string: 'hello' }, ws.context());
    expect(same.exitCode).toBe(1);
    expect(same.output).toMatch(/identical/);
    const empty = await runTool(editTool, { file_path: 'a.ts', old_string: '', new_string: 'x' }, ws.context());
    expect(empty.exitCode).toBe(1);
    expect(existsSync(path.join(ws.root, 'a.ts'))).toBe(true);
  });
});
