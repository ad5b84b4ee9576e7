import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { homeName } from '../../src/runtime/sandbox/sandbox-homes.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { directorySwapBody, startSwapLoop, treeSnapshot } from '../support/swap-loop.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { bash } from './changes-helpers.js';
import { forkAs, MINE, runAs, tenantWorkspace, THEIRS, TOKENS, type ForkInfo } from './fork-copy-helpers.js';

/**
 * What a refused copy fork may answer while a name on the way is swapped: the copy's checks, the new session's
 * workspace resolution, or its AGENTS.md chain read from the tenant's directory that is gone for a moment (503).
 */
const REFUSALS = ['WORKSPACE_CHANGED', 'WORKSPACE_NOT_FOUND', 'SESSION_INITIALIZATION_ERROR'];

describe.skipIf(!bwrapWorks())('fork copies over hostile trees and names (bwrap)', () => {
  let t: TestServer;
  let parent = '';
  let ws = '';
  let theirs = '';
  beforeAll(async () => {
    t = await startTestServer({ config: { apiTokens: TOKENS } });
    ({ ws, id: parent } = await tenantWorkspace(t, MINE, 'team-a', 'proj', { 'a.txt': 'a0\n', 'd/in.txt': 'd0\n' }));
    t.fake.script({ toolCalls: [bash('p1', 'echo a1 > a.txt && echo d1 > d/in.txt')] }, { text: 'ok' });
    await runAs(t, MINE, parent, 'edit');
    ({ ws: theirs } = await tenantWorkspace(t, THEIRS, 'team-b', 'secret', { 'keep.txt': 'THEIRS\n' }));
  });
  afterAll(async () => {
    await t?.close();
  });

  /** After a swap loop of the parent's workspace: the original back at its name. */
  function settleParent(): void {
    const moved = join(t.root, 'team-a', '.real-proj');
    rmSync(join(t.root, 'team-a', '.lnk-proj'), { force: true });
    if (!lstatSync(moved, { throwIfNoEntry: false })?.isDirectory()) return;
    rmSync(ws, { force: true });
    renameSync(moved, ws);
  }

  /** A copy holds the parent's last result, a real directory resolving to itself. */
  function checkCopy(dir: string): void {
    expect(realpathSync(dir)).toBe(dir);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('a1\n');
    expect(readFileSync(join(dir, 'd', 'in.txt'), 'utf8')).toBe('d1\n');
  }

  /**
   * After a swap loop of team-a: the original directory back at its name; a directory the server made at the name
   * in a gap (ensureHome) kept aside. Answers the tenant's directories (the original first).
   */
  function settleTenantDirectory(label: string): string[] {
    const home = join(t.root, 'team-a');
    const moved = join(t.root, '.real-team-a');
    const link = join(t.root, '.lnk-team-a');
    if (existsSync(link) || lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(link, { force: true });
    if (!lstatSync(moved, { throwIfNoEntry: false })?.isDirectory()) return [home];
    const made = join(t.root, `.made-team-a-${label}`);
    const at = lstatSync(home, { throwIfNoEntry: false });
    if (at?.isDirectory()) renameSync(home, made);
    else if (at) rmSync(home, { force: true });
    renameSync(moved, home);
    return at?.isDirectory() ? [home, made] : [home];
  }

  it('the tenant root swapped for a symlink to / or to another tenant root in a mv -T loop: never a copy outside', async () => {
    const rootBefore = readdirSync('/').sort();
    const theirsBefore = treeSnapshot(join(t.root, 'team-b'));
    for (const [label, target] of [
      ['root', '/'],
      ['theirs', join(t.root, 'team-b')],
    ] as const) {
      const loop = startSwapLoop(t.root, directorySwapBody('team-a', target));
      const codes: string[] = [];
      let made = 0;
      const deadline = Date.now() + 3000;
      let rounds = 0;
      let homes: string[] = [];
      try {
        for (let i = 0; Date.now() < deadline || i < 8; i += 1) {
          const batch = await Promise.all(
            [0, 1].map((k) => forkAs(t, MINE, parent, { sessionId: `swap-${label}-${i}-${k}`, workspace: 'copy' })),
          );
          for (const answer of batch) {
            if (answer.status === 201) {
              made += 1;
              const workspace = (answer.body.session as ForkInfo).workspace;
              expect(workspace.startsWith(join(t.root, 'team-a') + '/')).toBe(true);
              // Checked once the loop stopped (the name may be the link for a moment now).
              codes.push(`ok:${workspace}`);
            } else {
              expect(REFUSALS, JSON.stringify(answer.body)).toContain(answer.body.error.code);
              codes.push(answer.body.error.code as string);
            }
          }
        }
      } finally {
        // Whatever failed, the tenant's directory is put back for the next tests.
        rounds = await loop.stop();
        homes = settleTenantDirectory(label);
      }
      expect(rounds).toBeGreaterThan(0);
      for (const code of codes.filter((c) => c.startsWith('ok:'))) {
        // The loop may have moved the tenant's directory (and the server made it again in a gap, as on first use):
        // a copy is in one of the tenant's own directories, never anywhere else.
        const name = code.slice(`ok:${join(t.root, 'team-a')}/`.length);
        const found = homes.filter((home) => existsSync(join(home, name)));
        expect(found, name).toHaveLength(1);
        checkCopy(join(found[0]!, name));
      }
      // Between the swaps the name is the real directory most of the time: forks get through.
      expect(made).toBeGreaterThan(0);
    }
    expect(readdirSync('/').sort()).toEqual(rootBefore);
    expect(treeSnapshot(join(t.root, 'team-b'))).toEqual(theirsBefore);
  });

  it('the parent workspace swapped for a symlink to another tenant root: the copy comes from the store', async () => {
    const theirsBefore = treeSnapshot(join(t.root, 'team-b'));
    const loop = startSwapLoop(join(t.root, 'team-a'), directorySwapBody('proj', join(t.root, 'team-b')));
    let rounds = 0;
    let answers: Awaited<ReturnType<typeof forkAs>>[] = [];
    try {
      answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => forkAs(t, MINE, parent, { sessionId: `pswap-${i}`, workspace: 'copy' })),
      );
    } finally {
      rounds = await loop.stop();
      settleParent();
    }
    expect(rounds).toBeGreaterThan(0);
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      const workspace = (answer.body.session as ForkInfo).workspace;
      expect(workspace.startsWith(join(t.root, 'team-a') + '/')).toBe(true);
      checkCopy(workspace);
    }
    expect(treeSnapshot(join(t.root, 'team-b'))).toEqual(theirsBefore);
    expect(readFileSync(join(theirs, 'keep.txt'), 'utf8')).toBe('THEIRS\n');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a1\n');
  });

  it('a captured symlink to /etc, then a file under that name: the checkout never writes through a link', async () => {
    const etcBefore = readFileSync('/etc/passwd');
    const { id } = await tenantWorkspace(t, MINE, 'team-a', 'links', {});
    const outside = join(t.root, 'team-b');
    t.fake.script({ toolCalls: [bash('k1', `ln -s /etc x && ln -s ${outside} y`)] }, { text: 'ok' });
    await runAs(t, MINE, id, 'links');
    t.fake.script(
      { toolCalls: [bash('k2', 'rm x y && mkdir x y && echo pw > x/passwd && echo s > y/keep.txt')] },
      { text: 'ok' },
    );
    const second = await runAs(t, MINE, id, 'files');
    const before = (
      await forkAs(t, MINE, id, { atRunId: second, sessionId: 'links-before', workspace: 'copy' }).expect(201)
    ).body.session as ForkInfo;
    expect(readlinkSync(join(before.workspace, 'x'))).toBe('/etc');
    expect(readlinkSync(join(before.workspace, 'y'))).toBe(outside);
    const after = (await forkAs(t, MINE, id, { sessionId: 'links-after', workspace: 'copy' }).expect(201)).body
      .session as ForkInfo;
    expect(lstatSync(join(after.workspace, 'x')).isDirectory()).toBe(true);
    expect(readFileSync(join(after.workspace, 'x', 'passwd'), 'utf8')).toBe('pw\n');
    expect(readFileSync(join(after.workspace, 'y', 'keep.txt'), 'utf8')).toBe('s\n');
    expect(readFileSync('/etc/passwd')).toEqual(etcBefore);
    expect(readFileSync(join(theirs, 'keep.txt'), 'utf8')).toBe('THEIRS\n');
  });

  it('a directory of the copy swapped for a link to another tenant root while it is written: nothing lands there', async () => {
    const theirsBefore = treeSnapshot(join(t.root, 'team-b'));
    const { id } = await tenantWorkspace(t, MINE, 'team-a', 'deep', {});
    const many = Array.from({ length: 200 }, (_, i) => `echo ${i} > sub/f${i}.txt`).join(' && ');
    t.fake.script({ toolCalls: [bash('w1', `mkdir sub && ${many}`)] }, { text: 'ok' });
    await runAs(t, MINE, id, 'many files');
    // Another process of the tenant (whose workspace is the tenant root) swaps `sub` in every copy being written.
    const body = `for f in deep-fork-race-*; do ln -sfn '${join(t.root, 'team-b')}' $f/.lnk; mv -T $f/sub $f/.sub; mv -T $f/.lnk $f/sub; done`;
    const loop = startSwapLoop(join(t.root, 'team-a'), body);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => forkAs(t, MINE, id, { sessionId: `race-${i}`, workspace: 'copy' })),
    );
    expect(await loop.stop()).toBeGreaterThan(0);
    for (const answer of answers) expect([201, 409, 503], JSON.stringify(answer.body)).toContain(answer.status);
    expect(treeSnapshot(join(t.root, 'team-b'))).toEqual(theirsBefore);
    expect(existsSync(join(t.root, 'team-b', 'f0.txt'))).toBe(false);
  });

  it('a crafted tree in the store (x a link to /etc and x/passwd in one tree): nothing is written through a link', async () => {
    const etcBefore = readFileSync('/etc/passwd');
    const theirsBefore = treeSnapshot(join(t.root, 'team-b'));
    const { id } = await tenantWorkspace(t, MINE, 'team-a', 'crafted', {});
    t.fake.script({ toolCalls: [bash('k1', 'echo c > c.txt')] }, { text: 'ok' });
    const run = await runAs(t, MINE, id, 'c');
    // What a capture could never write, put in the store by hand, and the run's change set pointed at it.
    const git = join(t.dataDir, 'changes', homeName('team-a', id), 'git');
    const g = (args: string[], input?: string) =>
      execFileSync('git', ['--git-dir', git, ...args], input === undefined ? {} : { input })
        .toString()
        .trim();
    const blob = g(['hash-object', '-w', '--stdin'], 'pw\n');
    const toEtc = g(['hash-object', '-w', '--stdin'], '/etc');
    const toTheirs = g(['hash-object', '-w', '--stdin'], join(t.root, 'team-b'));
    const sub = g(['mktree'], `100644 blob ${blob}\tpasswd\n100644 blob ${blob}\tkeep.txt\n`);
    const tree = g(
      ['mktree'],
      `120000 blob ${toEtc}\tx\n040000 tree ${sub}\tx\n120000 blob ${toTheirs}\ty\n040000 tree ${sub}\ty\n`,
    );
    const file = join(t.dataDir, 'changesets', 'team-a', id, `${createHash('sha256').update(run).digest('hex')}.json`);
    const set = JSON.parse(readFileSync(file, 'utf8')) as { result_tree: string };
    writeFileSync(file, JSON.stringify({ ...set, result_tree: `git-tree:${tree}` }));
    const answer = await forkAs(t, MINE, id, { sessionId: 'crafted-copy', workspace: 'copy' });
    const copy = join(t.root, 'team-a', 'crafted-fork-crafted-copy');
    if (answer.status === 201) {
      // Whatever git made of the duplicate names, it is inside the copy.
      for (const name of ['x', 'y']) {
        const at = lstatSync(join(copy, name), { throwIfNoEntry: false });
        if (at?.isDirectory()) expect(readFileSync(join(copy, name, 'passwd'), 'utf8')).toBe('pw\n');
      }
    } else {
      // Refused (git will not check out a tree with a name twice): nothing is left.
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(existsSync(copy)).toBe(false);
    }
    expect(readFileSync('/etc/passwd')).toEqual(etcBefore);
    expect(treeSnapshot(join(t.root, 'team-b'))).toEqual(theirsBefore);
  });
});
