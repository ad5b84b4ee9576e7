import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AnyToolDefinition, ToolResult } from '../../src/runtime/tools/define-tool.js';
import { editTool } from '../../src/runtime/tools/builtin/edit.js';
import { patchTool } from '../../src/runtime/tools/builtin/patch.js';
import { programTool } from '../../src/runtime/tools/builtin/program.js';
import { readTool } from '../../src/runtime/tools/builtin/read.js';
import { writeTool } from '../../src/runtime/tools/builtin/write.js';
import { directorySwapBody, fileSwapBody, startSwapLoop, treeSnapshot } from '../support/swap-loop.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

// The other tenant's secret, and a value of the server's own environment: neither may ever appear in a result.
const SECRET = `other-tenant-secret-${randomUUID()}`;
const ENV_MARKER = `server-env-marker-${randomUUID()}`;
const ENV_NAME = 'A3S_FILE_RACE_TEST_MARKER';
// Each swap round lasts a few ms: ~3 s of calls meet hundreds of swaps.
const RACE_MS = 3000;
const WAVE = 40;
// Outside files start like the inside ones, so a write, edit or patch that escaped would change them (and leak them).
const OUTSIDE_CONTENT = `LEGIT\n${SECRET}\n`;
const INSIDE_CONTENT = 'LEGIT\ninside\n';

let ws: TestWorkspace;
beforeAll(() => {
  process.env[ENV_NAME] = ENV_MARKER;
});
afterAll(() => {
  delete process.env[ENV_NAME];
});
beforeEach(() => {
  ws = createTestWorkspace();
  // ws.outside stands for another tenant's workspace next to this one.
  writeFileSync(path.join(ws.outside, 'target.txt'), OUTSIDE_CONTENT);
  writeFileSync(
    path.join(ws.outside, 'script.js'),
    `export async function run() { return ${JSON.stringify(SECRET)}; }\n`,
  );
  ws.file('target.txt', INSIDE_CONTENT);
  linkSync(path.join(ws.root, 'target.txt'), path.join(ws.root, '.keep-target.txt'));
  ws.file('sub/target.txt', INSIDE_CONTENT);
});
afterEach(() => ws.cleanup());

/** One call as the invoker makes it: a fresh ctx.files, released when the call is done. */
async function call(tool: AnyToolDefinition, args: Record<string, unknown>): Promise<ToolResult> {
  const ctx = ws.context();
  try {
    return await runTool(tool, args, ctx);
  } finally {
    ctx.files.release();
  }
}

/** Waves of WAVE concurrent calls for `ms` while both swap loops run; answers every result. */
async function underSwaps(
  ms: number,
  make: (i: number) => [AnyToolDefinition, Record<string, unknown>],
): Promise<{ results: ToolResult[]; rounds: number }> {
  const links = [path.join(ws.outside, 'target.txt'), '/proc/self/environ', '/'];
  const files = startSwapLoop(ws.root, fileSwapBody('target.txt', links));
  const dirs = startSwapLoop(ws.root, directorySwapBody('sub', ws.outside));
  const results: ToolResult[] = [];
  const end = Date.now() + ms;
  let i = 0;
  let rounds = 0;
  try {
    while (Date.now() < end) {
      results.push(...(await Promise.all(Array.from({ length: WAVE }, () => call(...make(i++))))));
    }
  } finally {
    rounds = (await files.stop()) + (await dirs.stop());
    restoreSub();
  }
  return { results, rounds };
}

/**
 * Puts the real sub/ back where a stopped directory swap may have left it aside (a `sub/` that a write created
 * through the walk while the name was missing is kept as `.stray-sub-*`), and the real target.txt.
 */
function restoreSub(): void {
  const real = path.join(ws.root, '.real-sub');
  const sub = path.join(ws.root, 'sub');
  if (existsSync(real)) {
    if (lstatSync(sub, { throwIfNoEntry: false })?.isDirectory())
      renameSync(sub, path.join(ws.root, `.stray-sub-${randomUUID()}`));
    else rmSync(sub, { force: true });
    renameSync(real, sub);
  }
  rmSync(path.join(ws.root, 'target.txt'), { force: true });
  linkSync(path.join(ws.root, '.keep-target.txt'), path.join(ws.root, 'target.txt'));
}

/** Names of files below the workspace (symlinks not followed) whose name starts with `prefix`. */
function filesNamed(prefix: string): string[] {
  return Object.keys(treeSnapshot(ws.root)).filter((key) => path.basename(key).startsWith(prefix));
}

function assertNothingLeaked(results: ToolResult[]): void {
  for (const result of results) {
    const text = JSON.stringify(result);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(ENV_MARKER);
    expect(text).not.toContain('root:x:0:0');
  }
}

const share = (results: ToolResult[], ok: (result: ToolResult) => boolean): number =>
  results.filter(ok).length / results.length;

describe('file tools under swap races (a name swapped for a symlink out, a FIFO, an intermediate directory for a link out)', () => {
  it('read never returns what lies outside, and reads the real file most of the time', async () => {
    const before = treeSnapshot(ws.outside);
    const { results, rounds } = await underSwaps(RACE_MS, (i) => [
      readTool,
      { file_path: i % 2 === 0 ? 'target.txt' : 'sub/target.txt' },
    ]);
    expect(rounds).toBeGreaterThanOrEqual(4);
    expect(results.length).toBeGreaterThanOrEqual(WAVE);
    assertNothingLeaked(results);
    expect(treeSnapshot(ws.outside)).toEqual(before);
    const onFile = results.filter((_, i) => i % 2 === 0);
    // The real file is there most of the time: those reads succeed (refusals are the swapped moments).
    expect(share(onFile, (r) => r.exitCode === 0 && r.output.includes('inside'))).toBeGreaterThan(0.5);
    expect(share(results, (r) => r.exitCode === 0)).toBeGreaterThan(0.3);
    for (const result of results)
      if (result.exitCode !== 0)
        expect(result.metadata?.reason).toMatch(/^(workspace_escape|not_a_file|not_found|is_directory|symlink_loop)$/);
  });

  it('write never creates or changes anything outside, and writes the real file most of the time', async () => {
    const before = treeSnapshot(ws.outside);
    const { results, rounds } = await underSwaps(RACE_MS, (i) => {
      const target = ['target.txt', 'sub/target.txt', `sub/new-${i}.txt`][i % 3] as string;
      return [
        writeTool,
        i % 6 === 4
          ? { file_path: target, content: `LEGIT appended ${i}\n`, mode: 'append' }
          : { file_path: target, content: `LEGIT\ninside ${i}\n` },
      ];
    });
    expect(rounds).toBeGreaterThanOrEqual(4);
    assertNothingLeaked(results);
    expect(treeSnapshot(ws.outside)).toEqual(before);
    expect(readdirSync(ws.outside).filter((name) => name.startsWith('new-'))).toEqual([]);
    expect(
      share(
        results.filter((_, i) => i % 3 === 0),
        (r) => r.exitCode === 0,
      ),
    ).toBeGreaterThan(0.5);
    // The files created through sub/ are inside the workspace.
    expect(filesNamed('new-').length).toBeGreaterThan(0);
  });

  it('edit never reads or changes what lies outside, and edits the real file most of the time', async () => {
    const before = treeSnapshot(ws.outside);
    // 'LEGIT' stays in the file ('LEGIT!', 'LEGIT!!', ...): every edit of the real file finds it once.
    const { results, rounds } = await underSwaps(RACE_MS, (i) => [
      editTool,
      { file_path: i % 2 === 0 ? 'target.txt' : 'sub/target.txt', old_string: 'LEGIT', new_string: 'LEGIT!' },
    ]);
    expect(rounds).toBeGreaterThanOrEqual(4);
    assertNothingLeaked(results);
    expect(treeSnapshot(ws.outside)).toEqual(before);
    // Concurrent edits of one file also refuse one another (version_conflict): both are edits of the real file.
    const legit = (r: ToolResult): boolean =>
      r.exitCode === 0 || r.metadata?.reason === 'version_conflict' || r.metadata?.reason === 'not_found_in_file';
    expect(
      share(
        results.filter((_, i) => i % 2 === 0),
        legit,
      ),
    ).toBeGreaterThan(0.5);
    expect(readFileSync(path.join(ws.root, 'target.txt'), 'utf8')).toMatch(/^LEGIT!/);
  });

  it('patch never reads or changes what lies outside, and patches the real file most of the time', async () => {
    const before = treeSnapshot(ws.outside);
    const { results, rounds } = await underSwaps(RACE_MS, (i) => [
      patchTool,
      { file_path: i % 2 === 0 ? 'target.txt' : 'sub/target.txt', diff: '@@ -1 +1,2 @@\n LEGIT\n+patched\n' },
    ]);
    expect(rounds).toBeGreaterThanOrEqual(4);
    assertNothingLeaked(results);
    expect(treeSnapshot(ws.outside)).toEqual(before);
    const legit = (r: ToolResult): boolean => r.exitCode === 0 || r.metadata?.reason === 'hunk_failed';
    expect(
      share(
        results.filter((_, i) => i % 2 === 0),
        legit,
      ),
    ).toBeGreaterThan(0.5);
    expect(share(results, (r) => r.exitCode === 0)).toBeGreaterThan(0.2);
    expect(readFileSync(path.join(ws.root, 'target.txt'), 'utf8')).toMatch(/^LEGIT\npatched\n/);
  });
});

describe('file tools and links to /, /proc/self/environ, FIFOs, and links that stay inside', () => {
  const escapes = (): [string, AnyToolDefinition, Record<string, unknown>][] => [
    ['read /', readTool, { file_path: 'root-link/etc/passwd' }],
    ['write /', writeTool, { file_path: 'root-link/tmp/pwned-by-race-test.txt', content: 'x' }],
    ['edit /', editTool, { file_path: 'root-link/etc/passwd', old_string: 'root', new_string: 'pwned' }],
    [
      'patch /',
      patchTool,
      { file_path: 'root-link/tmp/pwned-by-race-test.txt', diff: '--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+pwned\n' },
    ],
    ['read environ', readTool, { file_path: 'environ.txt' }],
    ['write environ', writeTool, { file_path: 'environ.txt', content: 'x' }],
    ['edit environ', editTool, { file_path: 'environ.txt', old_string: ENV_NAME, new_string: 'x' }],
    ['patch environ', patchTool, { file_path: 'environ.txt', diff: '@@ -1 +1 @@\n-a\n+b\n' }],
    ['program environ', programTool, { type: 'script', path: 'environ.js' }],
    ['read /proc/self/environ', readTool, { file_path: '/proc/self/environ' }],
    ['read other tenant', readTool, { file_path: 'other/target.txt' }],
    ['program other tenant', programTool, { type: 'script', path: 'other/script.js' }],
  ];

  it.each(escapes())('%s is refused as outside the workspace', async (_name, tool, args) => {
    symlinkSync('/', path.join(ws.root, 'root-link'));
    symlinkSync('/proc/self/environ', path.join(ws.root, 'environ.txt'));
    symlinkSync('/proc/self/environ', path.join(ws.root, 'environ.js'));
    symlinkSync(ws.outside, path.join(ws.root, 'other'));
    const ctx = {
      ...ws.context(),
      nested: {
        call: async () => ({ id: 'x', name: 'x', output: '', exitCode: 0, truncated: false }),
        describe: () => undefined,
      },
    };
    const result = await runTool(tool, args, ctx);
    ctx.files.release();
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/is outside the workspace/);
    assertNothingLeaked([result]);
    expect(existsSync('/tmp/pwned-by-race-test.txt')).toBe(false);
  });

  it('a FIFO is refused at once by every tool, never waited on', async () => {
    execFileSync('mkfifo', [path.join(ws.root, 'pipe.txt')]);
    execFileSync('mkfifo', [path.join(ws.root, 'pipe.js')]);
    const ctx = {
      ...ws.context(),
      nested: {
        call: async () => ({ id: 'x', name: 'x', output: '', exitCode: 0, truncated: false }),
        describe: () => undefined,
      },
    };
    const started = Date.now();
    const results = await Promise.all([
      runTool(readTool, { file_path: 'pipe.txt' }, ctx),
      runTool(writeTool, { file_path: 'pipe.txt', content: 'x' }, ctx),
      runTool(writeTool, { file_path: 'pipe.txt', content: 'x', mode: 'append' }, ctx),
      runTool(editTool, { file_path: 'pipe.txt', old_string: 'a', new_string: 'b' }, ctx),
      runTool(editTool, { file_path: 'pipe.txt', old_string: 'a', new_string: 'b', dry_run: true }, ctx),
      runTool(patchTool, { file_path: 'pipe.txt', diff: '@@ -1 +1 @@\n-a\n+b\n' }, ctx),
      runTool(programTool, { type: 'script', path: 'pipe.js' }, ctx),
    ]);
    ctx.files.release();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(results.map((r) => [r.exitCode, r.output])).toEqual([
      [1, 'pipe.txt is not a regular file.'],
      [1, 'pipe.txt is not a regular file.'],
      [1, 'pipe.txt is not a regular file.'],
      [1, 'pipe.txt is not a regular file.'],
      [1, 'pipe.txt is not a regular file.'],
      [1, 'pipe.txt is not a regular file.'],
      [1, 'pipe.js is not a regular file; path must name a script file.'],
    ]);
  });

  it('symlinks that stay inside keep working: relative, absolute inside, through directories, dangling ones create inside', async () => {
    mkdirSync(path.join(ws.root, 'deep/er'), { recursive: true });
    symlinkSync('sub/target.txt', path.join(ws.root, 'rel-link.txt'));
    symlinkSync(path.join(ws.root, 'sub/target.txt'), path.join(ws.root, 'abs-link.txt'));
    symlinkSync('../../sub', path.join(ws.root, 'deep/er/up-dir'));
    symlinkSync('rel-link.txt', path.join(ws.root, 'chain.txt'));
    symlinkSync(path.join(ws.root, 'sub/made-through-link.txt'), path.join(ws.root, 'dangling.txt'));
    for (const file_path of ['rel-link.txt', 'abs-link.txt', 'deep/er/up-dir/target.txt', 'chain.txt']) {
      const read = await call(readTool, { file_path });
      expect(read, file_path).toMatchObject({
        exitCode: 0,
        output: '     1\tLEGIT\n     2\tinside',
        metadata: { source_anchors: ['sub/target.txt'] },
      });
    }
    expect(
      await call(editTool, { file_path: 'abs-link.txt', old_string: 'inside', new_string: 'edited' }),
    ).toMatchObject({ exitCode: 0, output: 'Replaced 1 occurrence(s) in sub/target.txt' });
    expect(
      await call(patchTool, { file_path: 'deep/er/up-dir/target.txt', diff: '@@ -2 +2 @@\n-edited\n+patched\n' }),
    ).toMatchObject({ exitCode: 0, output: 'Applied 1 hunk(s) to sub/target.txt' });
    expect(await call(writeTool, { file_path: 'chain.txt', content: 'more\n', mode: 'append' })).toMatchObject({
      exitCode: 0,
      output: 'Wrote 5 bytes (1 lines) to sub/target.txt',
    });
    expect(readFileSync(path.join(ws.root, 'sub/target.txt'), 'utf8')).toBe('LEGIT\npatched\nmore\n');
    expect(await call(writeTool, { file_path: 'dangling.txt', content: 'made\n' })).toMatchObject({
      exitCode: 0,
      output: 'Wrote 5 bytes (1 lines) to sub/made-through-link.txt',
      metadata: { created: true },
    });
    expect(readFileSync(path.join(ws.root, 'sub/made-through-link.txt'), 'utf8')).toBe('made\n');
  });
});
