import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseGitPatch, readGitName } from '../../web/src/unified-diff.js';
import { tempDir } from '../support/test-server.js';

/** Real `git diff --binary -M` output (as the change capture runs it) between two trees written by `before`/`after`. */
function gitPatch(before: Record<string, string | Buffer>, after: Record<string, string | Buffer | null>): string {
  const dir = tempDir('a3s-udiff-');
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'core.quotePath=true', ...args], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
  git('init', '-q');
  const write = (files: Record<string, string | Buffer | null>): string => {
    for (const [path, content] of Object.entries(files)) {
      if (content === null) rmSync(join(dir, path));
      else {
        mkdirSync(join(dir, path, '..'), { recursive: true });
        writeFileSync(join(dir, path), content);
      }
    }
    git('add', '-A', '-f');
    return git('write-tree').trim();
  };
  const base = write(before);
  const result = write(after);
  return git('diff', '--binary', '--no-ext-diff', '--no-textconv', '--no-color', '--full-index', '-M', base, result);
}

describe('parseGitPatch (the console diff view) on real git output', () => {
  it('reads added, modified, deleted, renamed and binary files, quoted names and lines that look like headers', () => {
    const xss = '<img src=x onerror="window.__xss=1">';
    const patch = gitPatch(
      {
        'keep.txt': 'one\ntwo\n-- not a header\nfour\n',
        'gone.txt': 'bye\n',
        'old name.txt': 'renamed content that is long enough to be detected\n'.repeat(4),
        'blob.bin': Buffer.from([0, 1, 2, 3]),
        'café.txt': 'a\n',
      },
      {
        'keep.txt': 'one\nTWO\nfour\nno newline',
        'gone.txt': null,
        'old name.txt': null,
        'new name.txt': 'renamed content that is long enough to be detected\n'.repeat(4),
        'blob.bin': Buffer.from([0, 1, 2, 3, 255]),
        [xss]: '<script>window.__xss=2</script>\n',
        'café.txt': 'b\n',
      },
    );
    const sections = parseGitPatch(patch);
    const byPath = new Map(sections.map((s) => [s.newPath ?? s.oldPath, s]));
    expect([...byPath.keys()].sort()).toEqual(
      ['blob.bin', 'café.txt', 'gone.txt', 'keep.txt', 'new name.txt', xss].sort(),
    );
    const keep = byPath.get('keep.txt')!;
    expect(keep.oldPath).toBe('keep.txt');
    const lines = keep.hunks.flatMap((h) => h.lines);
    // A removed line `-- not a header` is written `--- not a header`: read as a line by the hunk's counts.
    expect(lines.filter((l) => l.kind === 'del').map((l) => l.text)).toEqual(['two', '-- not a header']);
    expect(lines.filter((l) => l.kind === 'ctx').map((l) => [l.text, l.oldNo, l.newNo])).toEqual([
      ['one', 1, 1],
      ['four', 4, 3],
    ]);
    expect(lines.filter((l) => l.kind === 'add').map((l) => [l.text, l.newNo])).toEqual([
      ['TWO', 2],
      ['no newline', 4],
    ]);
    expect(lines.at(-1)).toEqual({ kind: 'note', text: 'No newline at end of file' });
    expect(byPath.get('gone.txt')).toMatchObject({ oldPath: 'gone.txt', newPath: undefined });
    expect(byPath.get('new name.txt')).toMatchObject({ oldPath: 'old name.txt', hunks: [] });
    expect(byPath.get('blob.bin')).toMatchObject({ binary: true, hunks: [] });
    const added = byPath.get(xss)!;
    expect(added.oldPath).toBeUndefined();
    expect(added.hunks[0]!.lines).toEqual([{ kind: 'add', text: '<script>window.__xss=2</script>', newNo: 1 }]);
    expect(byPath.get('café.txt')!.hunks[0]!.lines.map((l) => l.kind)).toEqual(['del', 'add']);
  });

  it('unquotes C-quoted names', () => {
    expect(readGitName('"b/caf\\303\\251 \\"x\\"\\t"')).toEqual({ name: 'b/café "x"\t', rest: '' });
    expect(readGitName('"a/x" "b/y"')).toEqual({ name: 'a/x', rest: ' "b/y"' });
    expect(readGitName('b/plain name')).toEqual({ name: 'b/plain name', rest: '' });
  });
});
