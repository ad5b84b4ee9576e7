import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/runtime/tools/define-tool.js';
import { editTool } from '../../src/runtime/tools/builtin/edit.js';
import { globTool } from '../../src/runtime/tools/builtin/glob.js';
import { grepTool } from '../../src/runtime/tools/builtin/grep.js';
import { lsTool } from '../../src/runtime/tools/builtin/ls.js';
import { patchTool } from '../../src/runtime/tools/builtin/patch.js';
import { readTool } from '../../src/runtime/tools/builtin/read.js';
import { writeTool } from '../../src/runtime/tools/builtin/write.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

let ws: TestWorkspace;
beforeEach(() => {
  ws = createTestWorkspace();
  // Symlinks inside the workspace that lead out of it.
  symlinkSync(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'secret-link.txt'));
  symlinkSync(ws.outside, path.join(ws.root, 'outside-dir'));
});
afterEach(() => ws.cleanup());

type Case = [name: string, tool: AnyToolDefinition, args: (ws: TestWorkspace) => Record<string, unknown>];

const dotdot: Case[] = [
  ['read ..', readTool, () => ({ file_path: '../outside/secret.txt' })],
  ['write ..', writeTool, () => ({ file_path: '../outside/pwned.txt', content: 'x' })],
  ['edit ..', editTool, () => ({ file_path: '../outside/secret.txt', old_string: 'top', new_string: 'pwned' })],
  ['ls ..', lsTool, () => ({ path: '..' })],
  ['grep path ..', grepTool, () => ({ pattern: 'secret', path: '../outside' })],
  ['grep glob ..', grepTool, () => ({ pattern: 'secret', glob: '../outside/*' })],
  ['glob path ..', globTool, () => ({ pattern: '*', path: '../outside' })],
  ['glob pattern ..', globTool, () => ({ pattern: '../outside/*' })],
  [
    'patch header ..',
    patchTool,
    () => ({
      file_path: '../outside/secret.txt',
      diff: '--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@ -1 +1 @@\n-top secret\n+pwned\n',
    }),
  ],
  [
    'patch create ..',
    patchTool,
    () => ({
      file_path: '../outside/pwned.txt',
      diff: '--- /dev/null\n+++ b/../outside/pwned.txt\n@@ -0,0 +1 @@\n+pwned\n',
    }),
  ],
];

const absolute: Case[] = [
  ['read absolute', readTool, (w) => ({ file_path: path.join(w.outside, 'secret.txt') })],
  ['write absolute', writeTool, (w) => ({ file_path: path.join(w.outside, 'pwned.txt'), content: 'x' })],
  [
    'edit absolute',
    editTool,
    (w) => ({ file_path: path.join(w.outside, 'secret.txt'), old_string: 'top', new_string: 'pwned' }),
  ],
  ['ls absolute', lsTool, (w) => ({ path: w.outside })],
  ['grep absolute', grepTool, (w) => ({ pattern: 'secret', path: w.outside })],
  ['glob absolute', globTool, (w) => ({ pattern: '*', path: w.outside })],
  [
    'patch absolute',
    patchTool,
    (w) => ({
      file_path: `${w.outside}/secret.txt`,
      diff: `--- ${w.outside}/secret.txt\n+++ ${w.outside}/secret.txt\n@@ -1 +1 @@\n-top secret\n+pwned\n`,
    }),
  ],
];

const symlinked: Case[] = [
  ['read symlink', readTool, () => ({ file_path: 'secret-link.txt' })],
  ['write through symlinked dir', writeTool, () => ({ file_path: 'outside-dir/pwned.txt', content: 'x' })],
  ['write symlinked file', writeTool, () => ({ file_path: 'secret-link.txt', content: 'pwned' })],
  ['edit symlink', editTool, () => ({ file_path: 'secret-link.txt', old_string: 'top', new_string: 'pwned' })],
  ['ls symlinked dir', lsTool, () => ({ path: 'outside-dir' })],
  ['grep symlinked dir', grepTool, () => ({ pattern: 'secret', path: 'outside-dir' })],
  ['glob symlinked dir', globTool, () => ({ pattern: '*', path: 'outside-dir' })],
  [
    'patch symlink',
    patchTool,
    () => ({
      file_path: 'secret-link.txt',
      diff: '--- a/secret-link.txt\n+++ b/secret-link.txt\n@@ -1 +1 @@\n-top secret\n+pwned\n',
    }),
  ],
];

describe('file tools stay inside the workspace', () => {
  it.each([...dotdot, ...absolute, ...symlinked])('%s is refused', async (_name, tool, args) => {
    const result = await runTool(tool, args(ws), ws.context());
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/is outside the workspace/);
    expect(result.output).not.toContain('top secret');
    expect(readFileSync(path.join(ws.outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
    expect(existsSync(path.join(ws.outside, 'pwned.txt'))).toBe(false);
  });

  it('walking the workspace does not follow symlinks out of it', async () => {
    ws.file('inside.txt', 'not a secret\n');
    const grep = await runTool(grepTool, { pattern: 'secret' }, ws.context());
    expect(grep.output).toBe('inside.txt:1:not a secret\n\n1 match(es) in 1 file(s)');
    const glob = await runTool(globTool, { pattern: '**/*' }, ws.context());
    expect(glob.output).toBe('inside.txt\n\n1 of 1 file(s) shown');
  });
});
