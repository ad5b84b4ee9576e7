import { existsSync, lstatSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeName } from '../../src/runtime/sandbox/sandbox-homes.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { bash } from './changes-helpers.js';
import { as, forkAs, MINE, runAs, tenantWorkspace, THEIRS, TOKENS, type ForkInfo } from './fork-copy-helpers.js';
import { treeOf } from './revert-helpers.js';

describe.skipIf(!bwrapWorks())('fork with workspace "copy"', () => {
  let t: TestServer;
  let ws = '';
  let parent = '';
  let one = '';
  let two = '';
  beforeAll(async () => {
    t = await startTestServer({ config: { apiTokens: TOKENS } });
    ({ ws, id: parent } = await tenantWorkspace(t, MINE, 'team-a', 'proj', { 'a.txt': 'a0\n', 'keep.txt': 'k\n' }));
    t.fake.script(
      {
        toolCalls: [
          bash('c1', 'echo a1 > a.txt && echo b1 > b.txt && mkdir -p node_modules/m && echo m > node_modules/m/i.js'),
        ],
      },
      { text: 'one' },
    );
    one = await runAs(t, MINE, parent, 'first');
    t.fake.script(
      { toolCalls: [bash('c2', "echo a2 > a.txt && rm b.txt && printf '\\000\\001\\002' > c.bin && ln -s a.txt l")] },
      { text: 'two' },
    );
    two = await runAs(t, MINE, parent, 'second');
    t.fake.assertDone();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('at a run: a new directory in the tenant root with the files as that run found them', async () => {
    const created = (
      await forkAs(t, MINE, parent, { atRunId: two, sessionId: 'at-two', workspace: 'copy' }).expect(201)
    ).body.session as ForkInfo;
    expect(created.workspace).toBe(join(t.root, 'team-a', 'proj-fork-at-two'));
    expect(created.forkedFrom).toMatchObject({ sessionId: parent, atRunId: two, workspace: 'copy' });
    expect(created.forkedFrom?.tree).toMatch(/^git-tree:[0-9a-f]{40}/);
    // Run two's base: run one's result (node_modules is excluded from capture, so it is not in the copy).
    expect(treeOf(created.workspace)).toEqual({
      'a.txt': Buffer.from('a1\n').toString('base64'),
      'b.txt': Buffer.from('b1\n').toString('base64'),
      'keep.txt': Buffer.from('k\n').toString('base64'),
    });
    const events = await request(t.url).get(`/v1/sessions/at-two/trace`).set(as(MINE)).expect(200);
    const forked = (events.body.events as Array<{ type: string; payload: Record<string, unknown> }>).find(
      (event) => event.type === 'session_forked',
    );
    expect(forked?.payload).toMatchObject({
      parent_session_id: parent,
      workspace: 'copy',
      tree: created.forkedFrom?.tree,
    });
  });

  it('whole: the last run result, binary and symlink included; the fork works in its copy only', async () => {
    const created = (await forkAs(t, MINE, parent, { sessionId: 'whole', workspace: 'copy' }).expect(201)).body
      .session as ForkInfo;
    const copy = created.workspace;
    expect(readFileSync(join(copy, 'a.txt'), 'utf8')).toBe('a2\n');
    expect(existsSync(join(copy, 'b.txt'))).toBe(false);
    expect(readFileSync(join(copy, 'c.bin'))).toEqual(Buffer.from([0, 1, 2]));
    expect(lstatSync(join(copy, 'l')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(copy, 'l'))).toBe('a.txt');
    expect(existsSync(join(copy, 'node_modules'))).toBe(false);
    t.fake.script({ toolCalls: [bash('f1', 'echo forked > a.txt')] }, { text: 'done' });
    const run = await runAs(t, MINE, 'whole', 'change the copy');
    expect(readFileSync(join(copy, 'a.txt'), 'utf8')).toBe('forked\n');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a2\n');
    // The fork captures its own runs, in its own store.
    const changes = await request(t.url).get(`/v1/sessions/whole/runs/${run}/changes`).set(as(MINE)).expect(200);
    expect(changes.body.files).toMatchObject([{ path: 'a.txt', status: 'modified' }]);
  });

  it('a taken name gets a suffix; atRunId of the first run has its base, before any run', async () => {
    const first = (await forkAs(t, MINE, parent, { atRunId: one, sessionId: 'x', workspace: 'copy' }).expect(201)).body
      .session as ForkInfo;
    expect(readFileSync(join(first.workspace, 'a.txt'), 'utf8')).toBe('a0\n');
    expect(existsSync(join(first.workspace, 'b.txt'))).toBe(false);
    // The fork is closed for good (its directory stays: it is the tenant's files), then its id is used again.
    await request(t.url).delete('/v1/sessions/x').set(as(MINE)).expect(200);
    const again = (await forkAs(t, MINE, parent, { sessionId: 'x', workspace: 'copy' }).expect(201)).body
      .session as ForkInfo;
    expect(again.workspace).toBe(join(t.root, 'team-a', 'proj-fork-x-2'));
    expect(readFileSync(join(first.workspace, 'a.txt'), 'utf8')).toBe('a0\n');
  });

  it('no captured tree: 409 FORK_TREE_UNAVAILABLE saying why', async () => {
    const { id } = await tenantWorkspace(t, MINE, 'team-a', 'quiet', { 'q.txt': 'q\n' });
    t.fake.script({ text: 'just talk' });
    await runAs(t, MINE, id, 'hello');
    const none = await forkAs(t, MINE, id, { workspace: 'copy' }).expect(409);
    expect(none.body.error).toMatchObject({
      code: 'FORK_TREE_UNAVAILABLE',
      details: { field: 'body.workspace', reason: 'nothing_captured' },
    });
    // The store removed (as on a node that did not capture the trees): the tree is missing, no directory is left.
    const { ws: lostWs, id: lost } = await tenantWorkspace(t, MINE, 'team-a', 'lost', {});
    t.fake.script({ toolCalls: [bash('l1', 'echo l > l.txt')] }, { text: 'ok' });
    await runAs(t, MINE, lost, 'write');
    rmSync(join(t.dataDir, 'changes', homeName('team-a', lost)), { recursive: true, force: true });
    const missing = await forkAs(t, MINE, lost, { sessionId: 'lost-copy', workspace: 'copy' }).expect(409);
    expect(missing.body.error).toMatchObject({ code: 'FORK_TREE_UNAVAILABLE', details: { reason: 'tree_missing' } });
    expect(existsSync(join(dirname(lostWs), 'lost-fork-lost-copy'))).toBe(false);
  });

  it("two tenants forking to the same id: each copy in its own tenant's root", async () => {
    const { id: theirs } = await tenantWorkspace(t, THEIRS, 'team-b', 'proj', { 'a.txt': 'theirs0\n' });
    t.fake.script({ toolCalls: [bash('b1', 'echo theirs1 > a.txt')] }, { text: 'ok' });
    await runAs(t, THEIRS, theirs, 'edit');
    const [mine, other] = await Promise.all([
      forkAs(t, MINE, parent, { sessionId: 'same', workspace: 'copy' }).expect(201),
      forkAs(t, THEIRS, theirs, { sessionId: 'same', workspace: 'copy' }).expect(201),
    ]);
    const mineWs = (mine.body.session as ForkInfo).workspace;
    const otherWs = (other.body.session as ForkInfo).workspace;
    expect(mineWs).toBe(join(t.root, 'team-a', 'proj-fork-same'));
    expect(otherWs).toBe(join(t.root, 'team-b', 'proj-fork-same'));
    expect(readFileSync(join(mineWs, 'a.txt'), 'utf8')).toBe('a2\n');
    expect(readFileSync(join(otherWs, 'a.txt'), 'utf8')).toBe('theirs1\n');
    // Another tenant's session is not found: it cannot be copied.
    const refused = await forkAs(t, THEIRS, parent, { workspace: 'copy' }).expect(404);
    expect(refused.body.error.code).toBe('SESSION_NOT_FOUND');
  });

  it('20 concurrent copy forks: 20 directories in the tenant root, each complete', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => forkAs(t, MINE, parent, { sessionId: `many-${i}`, workspace: 'copy' })),
    );
    const made = new Set<string>();
    for (const [i, answer] of answers.entries()) {
      expect(answer.status).toBe(201);
      const info = answer.body.session as ForkInfo;
      expect(info.workspace).toBe(join(t.root, 'team-a', `proj-fork-many-${i}`));
      expect(readFileSync(join(info.workspace, 'a.txt'), 'utf8')).toBe('a2\n');
      expect(readFileSync(join(info.workspace, 'c.bin'))).toEqual(Buffer.from([0, 1, 2]));
      made.add(info.workspace);
    }
    expect(made.size).toBe(20);
  });
});

describe.skipIf(!bwrapWorks())('fork copy across a restart', () => {
  it('the store is on disk and the change sets in the file store: a copy after a restart has the files', async () => {
    const fake = await startFakeProvider();
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    try {
      const first = await startTestServer({ fake, dataDir, root, config: { apiTokens: TOKENS } });
      const { id } = await tenantWorkspace(first, MINE, 'team-a', 'durable', { 'a.txt': 'a0\n' }, { autoSave: true });
      fake.script({ toolCalls: [bash('d1', 'echo a1 > a.txt && echo b > b.txt')] }, { text: 'one' });
      const run = await runAs(first, MINE, id, 'first');
      await first.close();
      const second = await startTestServer({ fake, dataDir, root, config: { apiTokens: TOKENS } });
      try {
        const whole = (await forkAs(second, MINE, id, { sessionId: 'after', workspace: 'copy' }).expect(201)).body
          .session as ForkInfo;
        expect(readFileSync(join(whole.workspace, 'a.txt'), 'utf8')).toBe('a1\n');
        expect(readFileSync(join(whole.workspace, 'b.txt'), 'utf8')).toBe('b\n');
        const before = (
          await forkAs(second, MINE, id, { atRunId: run, sessionId: 'before', workspace: 'copy' }).expect(201)
        ).body.session as ForkInfo;
        expect(treeOf(before.workspace)).toEqual({ 'a.txt': Buffer.from('a0\n').toString('base64') });
        // The fork itself survives the restart pinned to its copy.
        const info = await request(second.url).get('/v1/sessions/after').set(as(MINE)).expect(200);
        expect((info.body.session ?? info.body).forkedFrom).toMatchObject({
          workspace: 'copy',
          tree: whole.forkedFrom?.tree,
        });
      } finally {
        await second.close();
      }
    } finally {
      await fake.close();
    }
  });
});
