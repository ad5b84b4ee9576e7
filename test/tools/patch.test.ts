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

describe('patch', () => {
  it('applies a multi-file git-style diff, creating and deleting files', async () => {
    ws.file('src/a.ts', 'one\ntwo\nthree\n');
    ws.file('old.txt', 'bye\n');
    const patch = [
      'diff --git a/src/a.ts b/src/a.ts',
      'index 1111111..2222222 100644',
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -1,3 +1,3 @@',
      ' one',
      '-two',
      '+TWO',
      ' three',
      '--- /dev/null',
      '+++ b/src/new.ts',
      '@@ -0,0 +1,2 @@',
      '+fresh',
      '+file',
      '--- a/old.txt',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-bye',
      '',
    ].join('\n');
    const result = await runTool(patchTool, { patch }, ws.context());
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe('Applied patch to 3 files:\n  M src/a.ts\n  A src/new.ts\n  D old.txt');
    expect(read('src/a.ts')).toBe('one\nTWO\nthree\n');
    expect(read('src/new.ts')).toBe('fresh\nfile\n');
    expect(existsSync(path.join(ws.root, 'old.txt'))).toBe(false);
  });

  it('accepts plain headers, a hunk at a shifted line and file_path for headerless hunks', async () => {
    ws.file('notes.md', 'intro\nx\ny\nz\n');
    const shifted = '--- notes.md\n+++ notes.md\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n';
    expect((await runTool(patchTool, { patch: shifted }, ws.context())).exitCode).toBe(0);
    expect(read('notes.md')).toBe('intro\nx\nY\nz\n');
    const headerless = '@@ -1,2 +1,2 @@\n-intro\n+INTRO\n x\n';
    expect((await runTool(patchTool, { patch: headerless, file_path: 'notes.md' }, ws.context())).exitCode).toBe(0);
    expect(read('notes.md')).toBe('INTRO\nx\nY\nz\n');
    const noName = await runTool(patchTool, { patch: headerless }, ws.context());
    expect(noName.exitCode).toBe(1);
    expect(noName.output).toMatch(/file_path/);
  });

  it('is all-or-nothing: a failing hunk names file and hunk and changes nothing', async () => {
    ws.file('a.txt', 'a1\na2\na3\n');
    ws.file('b.txt', 'b1\nb2\nb3\nb4\nb5\nb6\nb7\nb8\n');
    const patch = [
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1,3 +1,3 @@',
      ' a1',
      '-a2',
      '+A2',
      ' a3',
      '--- a/b.txt',
      '+++ b/b.txt',
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
    const result = await runTool(patchTool, { patch }, ws.context());
    expect(result.exitCode).toBe(1);
    expect(result.output).toBe('Hunk @@ -6,3 +6,3 @@ does not apply to b.txt: its context or removed lines do not match the file. No files were changed.');
    expect(read('a.txt')).toBe('a1\na2\na3\n');
    expect(read('b.txt')).toBe('b1\nb2\nb3\nb4\nb5\nb6\nb7\nb8\n');
  });

  it('names its other errors: missing file, creating an existing file, unparsable patch', async () => {
    const missing = await runTool(patchTool, { patch: '--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n' }, ws.context());
    expect(missing).toMatchObject({ exitCode: 1 });
    expect(missing.output).toMatch(/File not found: x\.txt/);
    ws.file('y.txt', 'y\n');
    const exists = await runTool(patchTool, { patch: '--- /dev/null\n+++ b/y.txt\n@@ -0,0 +1 @@\n+y\n' }, ws.context());
    expect(exists.output).toMatch(/y\.txt already exists/);
    const garbage = await runTool(patchTool, { patch: '--- a/y.txt\n+++ b/y.txt\n@@ -1,2 +1,2 @@\n-y\n' }, ws.context());
    expect(garbage.exitCode).toBe(1);
    expect(garbage.output).toMatch(/Could not parse the patch/);
    const empty = await runTool(patchTool, { patch: 'just words' }, ws.context());
    expect(empty.exitCode).toBe(1);
  });

  it('renames a file when old and new names differ', async () => {
    ws.file('before.txt', 'k\nv\n');
    const result = await runTool(patchTool, { patch: '--- a/before.txt\n+++ b/after.txt\n@@ -1,2 +1,2 @@\n k\n-v\n+w\n' }, ws.context());
    expect(result.output).toBe('Applied patch to 1 file:\n  R after.txt (from before.txt)');
    expect(read('after.txt')).toBe('k\nw\n');
    expect(existsSync(path.join(ws.root, 'before.txt'))).toBe(false);
  });
});
