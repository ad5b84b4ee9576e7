import { readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { walkConfinedTree, type TreeWalkVisitor } from '../../src/runtime/workspace/confined-tree-walk.js';
import { DirectoryReopener } from '../../src/runtime/workspace/directory-reopener.js';
import type { WorkspaceFiles } from '../../src/runtime/workspace/workspace-files.js';
import { createTestWorkspace, type TestWorkspace } from '../tools/tool-test-context.js';

let ws: TestWorkspace;
let files: WorkspaceFiles;
beforeEach(() => {
  ws = createTestWorkspace();
  for (let i = 0; i < 60; i++) ws.file(`t/d${i % 6}/e${i % 3}/f${i}.txt`, `file ${i}\n`);
  ws.file('t/top.txt', 'top\n');
  symlinkSync(ws.outside, path.join(ws.root, 't', 'out-link'));
  symlinkSync('d0', path.join(ws.root, 't', 'in-link'));
  files = ws.context().files;
  // The workspace lease (one held descriptor) is taken before descriptors are counted.
  files.root();
});
afterEach(() => {
  files.release();
  ws.cleanup();
});

const fds = (): number => readdirSync('/proc/self/fd').length;

function collect(overrides: Partial<TreeWalkVisitor> = {}): { visitor: TreeWalkVisitor; entries: string[] } {
  const entries: string[] = [];
  return {
    entries,
    visitor: {
      descend: () => true,
      entry: (_dir, dirent, p) => void entries.push(`${p}${dirent.isSymbolicLink() ? '@' : ''}`),
      ...overrides,
    },
  };
}

describe('walkConfinedTree', () => {
  it.each([1, 3, 8])(
    'lists every entry once at concurrency %i, symlinks as entries (not followed), and closes what it opened',
    async (concurrency) => {
      const before = fds();
      const start = files.openDirectory('t');
      const { visitor, entries } = collect();
      await walkConfinedTree(files, start, visitor, { concurrency, prefix: 't' });
      start.close();
      expect(entries.length).toBe(63);
      expect(entries).toEqual(expect.arrayContaining(['t/top.txt', 't/out-link@', 't/in-link@', 't/d5/e2/f59.txt']));
      expect(new Set(entries).size).toBe(63);
      expect(fds()).toBe(before);
    },
  );

  it('prunes directories descend() refuses, stops when entry() returns false, and on the signal', async () => {
    const before = fds();
    const start = files.openDirectory('.');
    const pruned = collect({ descend: (p) => p === 't' || p.startsWith('t/d1') });
    await walkConfinedTree(files, start, pruned.visitor);
    const d1 = Array.from({ length: 60 }, (_, i) => i)
      .filter((i) => i % 6 === 1)
      .map((i) => `t/d1/e${i % 3}/f${i}.txt`);
    expect(pruned.entries.filter((p) => p.endsWith('.txt')).sort()).toEqual([...d1, 't/top.txt'].sort());
    let seen = 0;
    await walkConfinedTree(files, start, { descend: () => true, entry: () => ++seen < 5 });
    expect(seen).toBe(5);
    const controller = new AbortController();
    let after = 0;
    await walkConfinedTree(
      files,
      start,
      { descend: () => true, entry: () => void (++after === 3 && controller.abort()) },
      { signal: controller.signal },
    );
    expect(after).toBeLessThan(63);
    start.close();
    expect(fds()).toBe(before);
  });

  it('does not enter a directory swapped for a symlink to another tenant between its listing and its opening', async () => {
    const start = files.openDirectory('t');
    const { visitor, entries } = collect({
      descend: (p) => {
        if (p === 'd2') {
          // The attacker's move, exactly in the window: d2 becomes a link to the outside directory.
          renameSync(path.join(ws.root, 't/d2'), path.join(ws.root, 't/d2.real'));
          symlinkSync(ws.outside, path.join(ws.root, 't/d2'));
        }
        return true;
      },
    });
    await walkConfinedTree(files, start, visitor);
    start.close();
    expect(entries.some((p) => p.startsWith('d2/'))).toBe(false);
    expect(entries).not.toContain('d2/secret.txt');
    expect(entries.some((p) => p.startsWith('d3/'))).toBe(true);
  });
});

describe('DirectoryReopener', () => {
  it('opens files of many directories with few held open, refuses a directory swapped for a symlink, and closes everything', async () => {
    const before = fds();
    const reopener = new DirectoryReopener(files, files.openDirectory('t'), true, 2);
    const paths = Array.from({ length: 60 }, (_, i) => ({ dir: `d${i % 6}/e${i % 3}`, name: `f${i}.txt`, i }));
    const texts = await Promise.all(
      paths.map(async ({ dir, name }) => {
        const handle = await reopener.openFile(dir, name);
        try {
          return (await handle.readFile()).toString();
        } finally {
          await handle.close();
        }
      }),
    );
    expect(texts).toEqual(paths.map(({ i }) => `file ${i}\n`));
    expect((await (await reopener.openFile('', 'top.txt')).close()) ?? 'closed').toBe('closed');
    // A directory swapped for a symlink after the walk is not followed when it is opened again.
    renameSync(path.join(ws.root, 't/d4'), path.join(ws.root, 't/d4.real'));
    symlinkSync(ws.outside, path.join(ws.root, 't/d4'));
    writeFileSync(path.join(ws.outside, 'f4.txt'), 'other tenant\n');
    await expect(reopener.openFile('d4', 'f4.txt')).rejects.toMatchObject({
      code: expect.stringMatching(/^(ELOOP|ENOTDIR)$/),
    });
    await expect(reopener.openFile('', 'out-link')).rejects.toMatchObject({ code: 'ELOOP' });
    reopener.close();
    expect(fds()).toBe(before);
  });
});
