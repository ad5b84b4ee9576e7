import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTool } from '../../src/runtime/tools/builtin/read.js';
import { writeTool } from '../../src/runtime/tools/builtin/write.js';
import { editTool } from '../../src/runtime/tools/builtin/edit.js';
import { patchTool } from '../../src/runtime/tools/builtin/patch.js';
import { pinDirectory, WorkspaceDirectory } from '../../src/runtime/workspace/workspace-directory.js';
import { WorkspaceFiles } from '../../src/runtime/workspace/workspace-files.js';
import type { AnyToolDefinition, ToolResult } from '../../src/runtime/tools/define-tool.js';
import { createTestWorkspace, runTool, type TestWorkspace } from '../tools/tool-test-context.js';

// Red team (2026-12-02): a hostile model's file_path values against the confined walk and the file tools.
const SECRET = 'top secret';

const openFds = (): number => readdirSync('/proc/self/fd').length;

describe('red team: paths a hostile model hands the file tools', () => {
  let ws: TestWorkspace;
  // As the invoker does: one context (one WorkspaceFiles) a call, released after it.
  const call = async (tool: AnyToolDefinition, args: Record<string, unknown>): Promise<ToolResult> => {
    const ctx = ws.context();
    try {
      return await runTool(tool, args, ctx);
    } finally {
      ctx.files?.release();
    }
  };
  const read = (file_path: string): Promise<ToolResult> => call(readTool, { file_path });
  const write = (file_path: string, content = 'x'): Promise<ToolResult> => call(writeTool, { file_path, content });

  beforeEach(() => {
    ws = createTestWorkspace();
  });
  afterEach(() => ws.cleanup());

  it('symlink chains that end in ".." above the root are refused (relative, nested, through a linked dir)', async () => {
    mkdirSync(path.join(ws.root, 'a/b'), { recursive: true });
    symlinkSync('..', path.join(ws.root, 'up'));
    symlinkSync('../..', path.join(ws.root, 'a/b/up2'));
    symlinkSync('b/up2/..', path.join(ws.root, 'a/chain'));
    symlinkSync('l2', path.join(ws.root, 'l1'));
    symlinkSync('a/b/../../up', path.join(ws.root, 'l2'));
    symlinkSync(path.join(ws.root, 'a', '..', '..'), path.join(ws.root, 'abs-up'));
    const attempts = [
      'up/outside/secret.txt',
      'a/b/up2/../outside/secret.txt',
      'a/chain/outside/secret.txt',
      'l1/outside/secret.txt',
      'abs-up/outside/secret.txt',
      'a/chain',
      'l1',
    ];
    for (const file_path of attempts) {
      const result = await read(file_path);
      expect(result.exitCode, file_path).not.toBe(0);
      expect(JSON.stringify(result)).not.toContain(SECRET);
      const written = await write(`${file_path}-new/x.txt`);
      expect(JSON.stringify(written)).not.toContain(SECRET);
    }
    expect(readdirSync(ws.outside)).toEqual(['secret.txt']);
    expect(existsSync(path.join(path.dirname(ws.root), 'outside-new'))).toBe(false);
  });

  it('/proc spellings as file_path (/proc/self/root, /proc/self/fd/N, /proc/<pid>/cwd, /proc/thread-self) never reach outside', async () => {
    const files = ws.context().files;
    const fd = files.root().fd;
    const outsideSecret = path.join(ws.outside, 'secret.txt');
    const attempts = [
      `/proc/self/root${outsideSecret}`,
      `/proc/self/fd/${fd}/../outside/secret.txt`,
      `/proc/${process.pid}/cwd/${path.relative(process.cwd(), outsideSecret)}`,
      `/proc/thread-self/root${outsideSecret}`,
      `/proc/self/environ`,
      `${ws.root}/../outside/secret.txt`,
      `${ws.root}//..//outside/secret.txt`,
    ];
    for (const file_path of attempts) {
      const result = await read(file_path);
      expect(result.exitCode, file_path).not.toBe(0);
      expect(JSON.stringify(result)).not.toContain(SECRET);
    }
    // A link in the workspace to a /proc magic link of the held descriptor: the target is absolute and outside.
    symlinkSync(`/proc/self/fd/${fd}/../outside`, path.join(ws.root, 'magic'));
    symlinkSync(`/proc/self/cwd`, path.join(ws.root, 'cwd'));
    for (const file_path of ['magic/secret.txt', 'cwd/package.json', 'magic']) {
      const result = await read(file_path);
      expect(result.exitCode, file_path).not.toBe(0);
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect((await write(`${file_path}/made.txt`)).exitCode).not.toBe(0);
    }
    expect(readdirSync(ws.outside)).toEqual(['secret.txt']);
    files.release();
  });

  it('40 link hops are followed, 41 fail with ELOOP; a link cycle fails without hanging', async () => {
    ws.file('end.txt', 'the end\n');
    symlinkSync('end.txt', path.join(ws.root, 'h1'));
    for (let i = 2; i <= 41; i++) symlinkSync(`h${i - 1}`, path.join(ws.root, `h${i}`));
    const ok = await read('h40');
    expect(ok.exitCode).toBe(0);
    expect(JSON.stringify(ok)).toContain('the end');
    const loop = await read('h41');
    expect(loop.exitCode).not.toBe(0);
    expect(JSON.stringify(loop)).toMatch(/ELOOP|symbolic links/);
    symlinkSync('cyc-b', path.join(ws.root, 'cyc-a'));
    symlinkSync('cyc-a', path.join(ws.root, 'cyc-b'));
    expect((await read('cyc-a')).exitCode).not.toBe(0);
    expect((await write('cyc-a', 'w')).exitCode).not.toBe(0);
    expect(readFileSync(path.join(ws.root, 'end.txt'), 'utf8')).toBe('the end\n');
  });

  it('very long paths (components and totals beyond NAME_MAX/PATH_MAX) fail cleanly, nothing is created', async () => {
    const longName = 'n'.repeat(300);
    const deep = Array.from({ length: 600 }, () => 'd').join('/') + '/f.txt';
    const wide = Array.from({ length: 30 }, () => 'x'.repeat(200)).join('/') + '/f.txt';
    expect((await write(longName)).exitCode).not.toBe(0);
    const deepResult = await write(deep);
    const wideResult = await write(wide);
    // Deep paths of short names are legitimate (openat has no PATH_MAX for a walk of one component a step).
    // Either refused or written inside (openat walks have no PATH_MAX): never a crash, never outside.
    expect(typeof deepResult.exitCode).toBe('number');
    expect(typeof wideResult.exitCode).toBe('number');
    // What was written lies below the root by more than PATH_MAX: remove it the way the walk made it (rm uses openat).
    execFileSync('rm', ['-rf', path.join(ws.root, 'x'.repeat(200)), path.join(ws.root, 'd')]);
    expect(readdirSync(ws.outside)).toEqual(['secret.txt']);
  });

  it('a directory with mode 000 (the server may be root): reading through it stays inside, never outside', async () => {
    ws.file('locked/inner.txt', 'inner\n');
    symlinkSync('../../outside/secret.txt', path.join(ws.root, 'locked/esc'));
    chmodSync(path.join(ws.root, 'locked'), 0o000);
    try {
      const esc = await read('locked/esc');
      expect(esc.exitCode).not.toBe(0);
      expect(JSON.stringify(esc)).not.toContain(SECRET);
    } finally {
      chmodSync(path.join(ws.root, 'locked'), 0o755);
    }
  });

  it('hard links: a hard link inside the workspace is the same file (by design); one planted to a hidden data dir file is refused only by name', async () => {
    // What the tools can do themselves: none of read/write/edit/patch creates a link.
    ws.file('real.txt', 'real\n');
    linkSync(path.join(ws.root, 'real.txt'), path.join(ws.root, 'hard.txt'));
    expect(JSON.stringify(await read('hard.txt'))).toContain('real');
    // write replaces content through the handle: a hard link keeps sharing the inode (no rename-over).
    expect((await write('hard.txt', 'changed\n')).exitCode).toBe(0);
    expect(readFileSync(path.join(ws.root, 'real.txt'), 'utf8')).toBe('changed\n');
  });

  it('descriptors: 600 failing calls (escape, ELOOP, ENOENT, not a regular file, FIFO, EISDIR) leave the count where it was', async () => {
    symlinkSync('../outside/secret.txt', path.join(ws.root, 'esc'));
    symlinkSync('self', path.join(ws.root, 'self'));
    mkdirSync(path.join(ws.root, 'dir'));
    ws.file('ok.txt', 'ok\n');
    const before = openFds();
    const paths = ['esc', 'self', 'missing/file.txt', 'dir', '/etc/passwd', 'ok.txt/child', 'esc/x', '../x'];
    for (let round = 0; round < 75; round++) {
      await Promise.all(paths.map((file_path) => read(file_path)));
      await Promise.all(
        paths.map((file_path, i) => call(editTool, { file_path, old_string: 'a', new_string: `b${i}` })),
      );
    }
    await Promise.all(paths.map((file_path) => call(patchTool, { file_path, diff: '@@ -1 +1 @@\n-ok\n+ko\n' })));
    // Every context of this workspace shares one WorkspaceDirectory: its descriptor is closed with the last lease.
    expect(openFds()).toBeLessThanOrEqual(before);
  });

  it('WORKSPACE_CHANGED: calls on a workspace moved away fail and leak no descriptor; nothing is read from the new occupant', async () => {
    const directory = new WorkspaceDirectory(pinDirectory(ws.root));
    const files = (): WorkspaceFiles => new WorkspaceFiles(directory);
    ws.file('a.txt', 'a\n');
    const before = openFds();
    renameSync(ws.root, `${ws.root}.old`);
    symlinkSync(ws.outside, ws.root);
    try {
      for (let i = 0; i < 100; i++) {
        const own = files();
        const result = await runTool(readTool, { file_path: 'secret.txt' }, { ...ws.context(), files: own });
        own.release();
        expect(result.exitCode).not.toBe(0);
        expect(JSON.stringify(result)).not.toContain(SECRET);
      }
      expect(openFds()).toBeLessThanOrEqual(before);
    } finally {
      rmSync(ws.root);
      renameSync(`${ws.root}.old`, ws.root);
    }
    writeFileSync(path.join(ws.root, 'b.txt'), 'b\n');
  });
});

describe('red team: races on what write creates and patch rewrites', () => {
  let ws: TestWorkspace;
  beforeEach(() => {
    ws = createTestWorkspace();
  });
  afterEach(() => ws.cleanup());

  const call = async (tool: AnyToolDefinition, args: Record<string, unknown>): Promise<ToolResult> => {
    const ctx = ws.context();
    try {
      return await runTool(tool, args, ctx);
    } finally {
      ctx.files?.release();
    }
  };

  /** A child process that, for `ms`, makes `name` a new directory, removes it and puts a link to `target` there. */
  function mkdirSwap(name: string, target: string, ms: number): Promise<number> {
    const script = `
      const fs = require('node:fs'); const [p, target, ms] = process.argv.slice(1); const end = Date.now() + Number(ms); let n = 0;
      while (Date.now() < end) { try { fs.mkdirSync(p); } catch {} try { fs.rmSync(p, { recursive: true, force: true }); } catch {}
        try { fs.symlinkSync(target, p); n++; } catch {} try { fs.unlinkSync(p); } catch {} }
      console.log(n);`;
    const child = spawn(process.execPath, ['-e', script, path.join(ws.root, name), target, String(ms)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    return new Promise((resolve) => child.on('exit', () => resolve(Number(out.trim()) || 0)));
  }

  it('write creating parents while the model swaps the new directory for a link out (mkdir, rm, ln -s) creates nothing outside', async () => {
    const loop = mkdirSwap('p', ws.outside, 2500);
    const results: ToolResult[] = [];
    const end = Date.now() + 2500;
    let i = 0;
    while (Date.now() < end) {
      results.push(
        ...(await Promise.all(
          Array.from({ length: 40 }, () => call(writeTool, { file_path: `p/q${i++ % 3}/r.txt`, content: 'planted\n' })),
        )),
      );
    }
    const swaps = await loop;
    expect(swaps).toBeGreaterThan(0);
    expect(results.length).toBeGreaterThan(40);
    expect(readdirSync(ws.outside)).toEqual(['secret.txt']);
    for (const result of results) expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it('patch and edit between their read and their write: the file swapped for a link out (mv -T) never changes the outside file', async () => {
    const target = path.join(ws.outside, 'secret.txt');
    ws.file('t.txt', 'top secret\n');
    // The same content inside and out: a write through a followed link would show only in the outside file's times.
    const before = statSync(target);
    const script = `
      const fs = require('node:fs'); const [dir, target, ms] = process.argv.slice(1); const end = Date.now() + Number(ms);
      while (Date.now() < end) { try { fs.symlinkSync(target, dir + '/t.lnk'); } catch {} try { fs.renameSync(dir + '/t.txt', dir + '/t.real'); fs.renameSync(dir + '/t.lnk', dir + '/t.txt');
        fs.renameSync(dir + '/t.txt', dir + '/t.lnk'); fs.renameSync(dir + '/t.real', dir + '/t.txt'); } catch {} }`;
    const child = spawn(process.execPath, ['-e', script, ws.root, target, '2500'], { stdio: 'inherit' });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const results: ToolResult[] = [];
    const end = Date.now() + 2500;
    while (Date.now() < end) {
      results.push(
        ...(await Promise.all([
          ...Array.from({ length: 10 }, () =>
            call(patchTool, { file_path: 't.txt', diff: '@@ -1 +1 @@\n-top secret\n+top secret\n' }),
          ),
          ...Array.from({ length: 10 }, () =>
            call(editTool, { file_path: 't.txt', old_string: 'top secret', new_string: 'top secret' }),
          ),
        ])),
      );
    }
    await exited;
    expect(readFileSync(target, 'utf8')).toBe('top secret\n');
    const after = statSync(target);
    expect([after.mtimeMs, after.ctimeMs, after.ino]).toEqual([before.mtimeMs, before.ctimeMs, before.ino]);
    expect(readdirSync(ws.outside)).toEqual(['secret.txt']);
    expect(results.filter((result) => result.exitCode === 0).length).toBeGreaterThan(0);
  });
});
