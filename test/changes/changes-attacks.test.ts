import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeName } from '../../src/runtime/sandbox/sandbox-homes.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { createSession, runAndWait } from '../support/run-helpers.js';
import { startSwapLoop } from '../support/swap-loop.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { bash, changesOf, ownForSandbox, patchText } from './changes-helpers.js';

const HAVE_BWRAP = bwrapWorks();
const MIB = 1024 * 1024;

/** Every file below `dir` (not following symlinks), as paths relative to it. */
function filesBelow(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(relative(dir, full));
    }
  };
  walk(dir);
  return out.sort();
}

describe.skipIf(!HAVE_BWRAP)('change capture under attack: names, special files, the store (bwrap)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  async function workspace(name: string, files: Record<string, string> = {}): Promise<{ ws: string; id: string }> {
    const ws = join(t.root, name);
    mkdirSync(ws, { recursive: true });
    for (const [path, content] of Object.entries(files)) writeFileSync(join(ws, path), content);
    ownForSandbox(t, ws);
    return { ws, id: await createSession(t, { workspace: ws }) };
  }

  it('nested repositories, FIFOs, sockets, .GIT and hostile names are captured or listed, never failing', async () => {
    const { id } = await workspace('names', { 'a.txt': 'a\n', 'keep.txt': 'k\n' });
    const command = [
      'set -e',
      // A tracked file turned into a FIFO, a new FIFO and a socket: nothing git can add.
      'rm a.txt && mkfifo a.txt && mkfifo pipe',
      `python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('sock')"`,
      // A nested repository with no commit (git add -A fails on it) and one with a commit (a gitlink hides its files).
      'git init -q unborn && echo u > unborn/u.txt',
      'git init -q nested && echo n > nested/n.txt && git -C nested add n.txt',
      'git -C nested -c user.name=x -c user.email=x@y commit -qm x',
      // Names git refuses to index, and names that are shell, option or pathspec syntax.
      'mkdir .GIT && echo g > .GIT/g.txt',
      `printf 'nl\\n' > "$(printf 'new\\nline.txt')"`,
      `echo q > "it's \\"quoted\\".txt"`,
      'echo d > ./-n && echo o > ./--output=x',
      `echo m > ':(exclude)*' && echo t > ':(top,icase)magic'`,
      `printf 'b' > "$(printf 'bad-\\377.txt')"`,
      `printf 'one\\ntwo\\n' > "$(printf 'tab\\tname.txt')"`,
      // Unreadable to the sandbox's user: a directory, one it cannot enter, a file.
      'mkdir locked noexec && echo l > locked/l.txt && echo e > noexec/e.txt && echo r > noread.txt',
      'chmod 000 locked noread.txt && chmod 644 noexec',
      // A path longer than git can lstat (PATH_MAX): 21 levels of 200 characters.
      `(mkdir deep && cd deep && d=$(printf 'd%.0s' $(seq 200)) && for i in $(seq 21); do mkdir $d && cd $d; done && echo x > f)`,
    ].join('\n');
    t.fake.script({ toolCalls: [bash('n1', command)] }, { text: 'ok' });
    const run = await runAndWait(t, id, 'names');
    const changes = await changesOf(t, id, run.runId);
    const byPath = Object.fromEntries(changes.files.map((file) => [file.path, file.status]));
    expect(byPath).toEqual({
      'a.txt': 'deleted',
      'unborn/u.txt': 'added',
      'nested/n.txt': 'added',
      'new\nline.txt': 'added',
      'it\'s "quoted".txt': 'added',
      '-n': 'added',
      '--output=x': 'added',
      ':(exclude)*': 'added',
      ':(top,icase)magic': 'added',
      'bad-\uFFFD.txt': 'added',
      'tab\tname.txt': 'added',
    });
    expect(changes.files.find((file) => file.path === 'tab\tname.txt')).toMatchObject({ additions: 2, bytes: 8 });
    const long = changes.not_captured.filter((entry) => entry.path.length > 1000);
    expect(long).toHaveLength(1);
    expect(long[0]).toMatchObject({ reason: 'excluded', path: expect.stringMatching(/^deep\/(d{200}\/)+d{200}$/) });
    const left = changes.not_captured
      .filter((entry) => entry.path.length <= 1000)
      .map((entry) => `${entry.reason}:${entry.path}`)
      .sort();
    expect(left).toEqual(
      [
        'excluded:.GIT/g.txt',
        'excluded:a.txt',
        'excluded:locked',
        'excluded:noexec',
        'excluded:noread.txt',
        'excluded:nested/.git',
        'excluded:pipe',
        'excluded:sock',
        'excluded:unborn/.git',
      ].sort(),
    );
    const text = patchText(changes);
    expect(text).toContain('+n\n');
    expect(text).toContain('+u\n');
    expect(text).not.toContain('Subproject commit');
    // A second run over the same tree changes nothing: the index holds no gitlink and no refused path.
    t.fake.script({ toolCalls: [bash('n2', 'true')] }, { text: 'ok' });
    const again = await changesOf(t, id, (await runAndWait(t, id, 'again')).runId);
    expect(again.files).toEqual([]);
    expect(again.base_tree).toBe(changes.result_tree);
  });

  it('symlinks are captured as their link text, never followed', async () => {
    const { id } = await workspace('links', { 'a.txt': 'a\n' });
    writeFileSync(join(t.dataDir, 'data-secret.txt'), 'DATA-SECRET-7f3a\n');
    const command = `ln -s /etc/passwd passwd-link && ln -s '${t.dataDir}' data-link && ln -s '${join(t.dataDir, 'data-secret.txt')}' secret-link && ln -s /proc/self/environ env-link`;
    t.fake.script({ toolCalls: [bash('l1', command)] }, { text: 'ok' });
    const changes = await changesOf(t, id, (await runAndWait(t, id, 'links')).runId);
    expect(changes.files.map((file) => [file.path, file.status]).sort()).toEqual([
      ['data-link', 'added'],
      ['env-link', 'added'],
      ['passwd-link', 'added'],
      ['secret-link', 'added'],
    ]);
    const text = patchText(changes);
    expect(text).toContain('new file mode 120000');
    expect(text).toContain('+/etc/passwd');
    expect(text).toContain(`+${t.dataDir}`);
    expect(text).not.toContain('root:x:0:0');
    expect(text).not.toContain('DATA-SECRET-7f3a');
    expect(text).not.toContain('GIT_CONFIG');
    expect(changes.files.find((file) => file.path === 'passwd-link')?.bytes).toBe('/etc/passwd'.length);
  });

  it('the kept listing: a change made to look unchanged (same size, inode and mtime) is captured, in every run', async () => {
    const { ws, id } = await workspace('disguised', { 'a.txt': 'aaaa\n', 'b.txt': 'bbbb\n' });
    // The same bytes count, written in place (same inode), its mtime set back to the old one: only its ctime moves.
    const disguise = (file: string, text: string) =>
      `t=$(stat -c %y ${file}) && printf '${text}' 1<> ${file} && touch -d "$t" ${file}`;
    t.fake.script({ toolCalls: [bash('d1', disguise('a.txt', 'AAAA'))] }, { text: 'one' });
    const first = await changesOf(t, id, (await runAndWait(t, id, 'one')).runId);
    expect(first.files).toMatchObject([{ path: 'a.txt', status: 'modified' }]);
    // A second run right after: the racy window (a second) and the listing both see it.
    t.fake.script({ toolCalls: [bash('d2', disguise('b.txt', 'BBBB'))] }, { text: 'two' });
    const second = await changesOf(t, id, (await runAndWait(t, id, 'two')).runId);
    expect(second.files).toMatchObject([{ path: 'b.txt', status: 'modified' }]);
    expect(patchText(second)).toContain('+BBBB');
    // After the racy window has passed: still seen from the listing alone.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    t.fake.script({ toolCalls: [bash('d3', disguise('a.txt', 'ZZZZ'))] }, { text: 'three' });
    const third = await changesOf(t, id, (await runAndWait(t, id, 'three')).runId);
    expect(third.files).toMatchObject([{ path: 'a.txt', status: 'modified' }]);
    expect(patchText(third)).toContain('+ZZZZ');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('ZZZZ\n');
  });

  it('the 1 MiB bound is exact; a file growing while captured never stalls the capture', async () => {
    const { ws, id } = await workspace('bounds', { 'grow.bin': '\0'.repeat(2 * MIB) });
    const command = [
      `head -c ${MIB} /dev/zero | tr '\\0' a > exact.txt`,
      `head -c ${MIB + 1} /dev/zero | tr '\\0' b > over.txt`,
    ].join(' && ');
    t.fake.script({ toolCalls: [bash('g1', command)] }, { text: 'ok' });
    // Appending all along: while the base and the result are captured.
    const grower = startSwapLoop(ws, 'head -c 65536 /dev/zero >> grow.bin');
    const changes = await changesOf(t, id, (await runAndWait(t, id, 'bounds')).runId).finally(() => grower.stop());
    expect(changes.files.map((file) => [file.path, file.bytes])).toEqual([['exact.txt', MIB]]);
    expect(changes.not_captured).toContainEqual({ path: 'over.txt', reason: 'too_large', bytes: MIB + 1 });
    const grow = changes.not_captured.find((entry) => entry.path === 'grow.bin');
    expect(grow?.reason).toBe('too_large');
    expect(grow?.bytes).toBeGreaterThanOrEqual(2 * MIB);
  });

  it('nothing in the workspace becomes a hook, a config or an attributes file of the store', async () => {
    const planted = `#!/bin/sh\ntouch /shadow/PWNED /shadow/git/PWNED\n`;
    const config = '[core]\n\tfsmonitor = /shadow/hook.sh\n\thooksPath = hooks\n[include]\n\tpath = /shadow/inc\n';
    const layout: Record<string, string> = {
      'hooks/post-index-change': planted,
      'git/hooks/post-index-change': planted,
      'git/config': config,
      config,
      'info/attributes': '* filter=evil\n',
      'git/info/attributes': '* filter=evil\n',
      'out/patch': 'PLANTED-PATCH\n',
      'objects/info/alternates': '/\n',
      'git/objects/info/alternates': '/\n',
      HEAD: 'ref: refs/heads/evil\n',
    };
    const { ws, id } = await workspace('planted');
    for (const [path, content] of Object.entries(layout)) {
      mkdirSync(join(ws, path, '..'), { recursive: true });
      writeFileSync(join(ws, path), content, { mode: 0o755 });
    }
    ownForSandbox(t, ws);
    t.fake.script({ toolCalls: [bash('p1', 'echo x > x.txt && chmod +x x.txt')] }, { text: 'ok' });
    const first = await changesOf(t, id, (await runAndWait(t, id, 'one')).runId);
    t.fake.script(
      { toolCalls: [bash('p2', "echo '* filter=evil' >> info/attributes && echo y > y.txt")] },
      { text: 'ok' },
    );
    const second = await changesOf(t, id, (await runAndWait(t, id, 'two')).runId);
    expect(first.files.map((file) => file.path)).toEqual(['x.txt']);
    expect(second.files.map((file) => file.path).sort()).toEqual(['info/attributes', 'y.txt']);
    expect(patchText(second)).not.toContain('PLANTED-PATCH');
    const dir = join(t.dataDir, 'changes', homeName('default', id));
    const files = filesBelow(dir);
    // Only what git and the script make (the kept listing included): no hooks, no alternates, no PWNED, no file named
    // after the workspace's.
    for (const file of files)
      expect(file).toMatch(
        /^(git\/(HEAD|config|index|info\/attributes|objects\/[0-9a-f]{2}\/[0-9a-f]{38,62})|out\/\w+|listing\.([01](\.s)?|stamp\.[01]|ok|recheck))$/,
      );
    // The listing names the workspace's own files only, as records the server's script wrote.
    const listed = readFileSync(join(dir, 'listing.ok'), 'utf8').split(' ')[1];
    for (const record of readFileSync(join(dir, `listing.${listed}`), 'utf8')
      .split('\0')
      .filter(Boolean))
      expect(record).toMatch(/^[0-9.]+:[0-9]+:[0-9]+ [^/]/);
    expect(readFileSync(join(dir, 'git', 'config'), 'utf8')).not.toMatch(/fsmonitor|include|hooksPath|evil/);
    expect(readFileSync(join(dir, 'git', 'info', 'attributes'), 'utf8')).not.toContain('evil');
    expect(readFileSync(join(dir, 'git', 'HEAD'), 'utf8')).not.toContain('evil');
    expect(existsSync(join(dir, 'PWNED'))).toBe(false);
    // The store's git agrees with itself (no planted object or alternate took part).
    execFileSync(
      'git',
      ['-c', 'safe.directory=*', '--git-dir', join(dir, 'git'), 'fsck', '--no-dangling', '--connectivity-only'],
      {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
        stdio: 'ignore',
      },
    );
    expect(statSync(join(dir, 'git', 'index')).isFile()).toBe(true);
  });
});
