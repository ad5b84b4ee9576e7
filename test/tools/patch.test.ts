import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { patchTool } from '../../src/runtime/tools/builtin/patch.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

let ws: TestWorkspace;
beforeEach(() => {
  ws = createTestWorkspace();
});
afterEach(() => ws.cleanup());

const read = (rel: string): string => readFileSync(path.join(ws.root, rel), 'utf8');

describe('patch {file_path, diff}', () => {
  it('applies hunks to file_path and reports the seed message and metadata', async () => {
    ws.file('src/a.ts', 'one\ntwo\nthree\nfour\nfive\n');
    const diff = [
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -1,3 +1,3 @@',
      ' one',
      '-two',
      '+TWO',
      ' three',
      '@@ -4,2 +4,2 @@',
      ' four',
      '-five',
      '+FIVE',
      '',
    ].join('\n');
    const result = await runTool(patchTool, { file_path: 'src/a.ts', diff }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: 'Applied 2 hunk(s) to src/a.ts' });
    expect(result.metadata).toMatchObject({
      file_path: 'src/a.ts',
      before: 'one\ntwo\nthree\nfour\nfive\n',
      after: 'one\nTWO\nthree\nfour\nFIVE\n',
    });
    expect(read('src/a.ts')).toBe('one\nTWO\nthree\nfour\nFIVE\n');
  });

  it('accepts headerless hunks, creates with /dev/null and deletes with +++ /dev/null', async () => {
    ws.file('notes.md', 'intro\nx\n');
    expect(
      (await runTool(patchTool, { file_path: 'notes.md', diff: '@@ -1,2 +1,2 @@\n-intro\n+INTRO\n x\n' }, ws.context()))
        .exitCode,
    ).toBe(0);
    expect(read('notes.md')).toBe('INTRO\nx\n');
    const created = await runTool(
      patchTool,
      { file_path: 'new/file.txt', diff: '--- /dev/null\n+++ b/new/file.txt\n@@ -0,0 +1,2 @@\n+fresh\n+file\n' },
      ws.context(),
    );
    expect(created.output).toBe('Applied 1 hunk(s) to new/file.txt');
    expect(read('new/file.txt')).toBe('fresh\nfile\n');
    ws.file('old.txt', 'bye\n');
    expect(
      (
        await runTool(
          patchTool,
          { file_path: 'old.txt', diff: '--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n' },
          ws.context(),
        )
      ).exitCode,
    ).toBe(0);
    expect(existsSync(path.join(ws.root, 'old.txt'))).toBe(false);
  });

  it('requires file_path and diff, and refuses a diff of several files', async () => {
    expect(patchTool.parameters.safeParse({ diff: '@@ -1 +1 @@\n-a\n+b\n' }).success).toBe(false);
    expect(patchTool.parameters.safeParse({ file_path: 'a.txt', patch: '@@ -1 +1 @@\n-a\n+b\n' }).success).toBe(false);
    ws.file('a.txt', 'a\n');
    ws.file('b.txt', 'b\n');
    const many = await runTool(
      patchTool,
      {
        file_path: 'a.txt',
        diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n',
      },
      ws.context(),
    );
    expect(many).toMatchObject({ exitCode: 1, metadata: { reason: 'many_files' } });
    expect(read('a.txt')).toBe('a\n');
  });

  it('is all-or-nothing: a failing hunk names the file and hunk and changes nothing', async () => {
    ws.file('b.txt', 'b1\nb2\nb3\nb4\nb5\nb6\nb7\nb8\n');
    const diff = [
      '@@ -1,2 +1,2 @@',
      '-b1',
      '+B1',
      ' b2',
      '@@ -6,3 +6,3 @@',
      ' b6',
      '-NOT THERE',
      '+b7!',
      ' b8',
      '',
    ].join('\n');
    const result = await runTool(patchTool, { file_path: 'b.txt', diff }, ws.context());
    expect(result.exitCode).toBe(1);
    expect(result.output).toBe(
      'Hunk @@ -6,3 +6,3 @@ does not apply to b.txt: its context or removed lines do not match the file. No files were changed.',
    );
    expect(read('b.txt')).toBe('b1\nb2\nb3\nb4\nb5\nb6\nb7\nb8\n');
  });

  it('names its other errors: missing file, creating an existing file, unparsable diff, outside path', async () => {
    const missing = await runTool(patchTool, { file_path: 'x.txt', diff: '@@ -1 +1 @@\n-a\n+b\n' }, ws.context());
    expect(missing.output).toMatch(/File not found: x\.txt/);
    ws.file('y.txt', 'y\n');
    const exists = await runTool(
      patchTool,
      { file_path: 'y.txt', diff: '--- /dev/null\n+++ b/y.txt\n@@ -0,0 +1 @@\n+y\n' },
      ws.context(),
    );
    expect(exists.output).toMatch(/y\.txt already exists/);
    const garbage = await runTool(patchTool, { file_path: 'y.txt', diff: '@@ -1,2 +1,2 @@\n-y\n' }, ws.context());
    expect(garbage.output).toMatch(/Could not parse the patch/);
    expect((await runTool(patchTool, { file_path: 'y.txt', diff: 'just words' }, ws.context())).exitCode).toBe(1);
    const outside = await runTool(
      patchTool,
      { file_path: '../outside/secret.txt', diff: '@@ -1 +1 @@\n-top secret\n+x\n' },
      ws.context(),
    );
    expect(outside.output).toMatch(/outside the workspace/);
    expect(readFileSync(path.join(ws.outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });
});
