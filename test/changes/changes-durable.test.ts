import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { homeName } from '../../src/runtime/sandbox/sandbox-homes.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { createSession, getRun, runAndWait, useTestServers } from '../support/run-helpers.js';
import { tempDir } from '../support/test-server.js';
import { bash, changesOf, ownForSandbox, patchText } from './changes-helpers.js';

const HAVE_BWRAP = bwrapWorks();

describe.skipIf(!HAVE_BWRAP)('change sets: while running, across a restart, ranges', () => {
  const start = useTestServers();

  it('425 CHANGES_CAPTURING while the run is still running, the change set once it ended', async () => {
    const t = await start();
    const ws = join(t.root, 'slow');
    mkdirSync(ws);
    ownForSandbox(t, ws);
    const id = await createSession(t, { workspace: ws });
    t.fake.script({ toolCalls: [bash('s1', 'echo x > x.txt')] }, { text: 'slow answer', delayMs: 1500 });
    const runId = (await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go' }).expect(202)).body
      .runId as string;
    // The tool round is over and the last turn is waiting on the provider.
    for (let i = 0; i < 200 && t.fake.requests.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    const early = await changesOf(t, id, runId, 425);
    expect(early.error).toMatchObject({ code: 'CHANGES_CAPTURING', details: { runId } });
    for (let i = 0; i < 400; i++) {
      if ((await getRun(t, id, runId)).status === 'completed') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const changes = await changesOf(t, id, runId);
    expect(changes.files).toMatchObject([{ path: 'x.txt', status: 'added' }]);
  });

  it('a change set survives a restart on the file store; a range spans two runs', async () => {
    const fake = await startFakeProvider();
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    const ws = join(root, 'durable');
    mkdirSync(ws);
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    try {
      const first = await start({ fake, dataDir, root });
      ownForSandbox(first, ws);
      const id = await createSession(first, { workspace: ws, autoSave: true });
      fake.script({ toolCalls: [bash('d1', 'echo b > b.txt')] }, { text: 'one' });
      const one = await runAndWait(first, id, 'first');
      fake.script({ toolCalls: [bash('d2', 'echo c > c.txt && rm a.txt')] }, { text: 'two' });
      const two = await runAndWait(first, id, 'second');
      const before = await changesOf(first, id, one.runId);
      const range = (
        await request(first.url).get(`/v1/sessions/${id}/changes`).query({ from: one.runId, to: two.runId }).expect(200)
      ).body;
      expect(range).toMatchObject({
        schema: 'a3s.code.agent-change-range.v1',
        from_run_id: one.runId,
        run_id: two.runId,
        base_tree: before.base_tree,
      });
      expect(range.files.map((file: { path: string; status: string }) => [file.path, file.status])).toEqual([
        ['a.txt', 'deleted'],
        ['b.txt', 'added'],
        ['c.txt', 'added'],
      ]);
      const unknown = (
        await request(first.url)
          .get(`/v1/sessions/${id}/changes`)
          .query({ from: 'run_nope', to: two.runId })
          .expect(404)
      ).body;
      expect(unknown.error.code).toBe('RUN_NOT_FOUND');
      await first.close();

      const second = await start({ fake, dataDir, root });
      const after = await changesOf(second, id, one.runId);
      expect(after).toEqual(before);
      expect(patchText(after)).toContain('+b');
      expect((await changesOf(second, id, two.runId)).files).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });

  it('limits.changeCaptureExclude decides what is left out: names at any depth, rooted paths', async () => {
    const t = await start({ config: { limits: { changeCaptureExclude: ['dist/', '*.log', '/build/'] } } });
    const ws = join(t.root, 'excl');
    mkdirSync(ws);
    ownForSandbox(t, ws);
    const id = await createSession(t, { workspace: ws });
    t.fake.script(
      {
        toolCalls: [
          bash(
            'e1',
            'mkdir -p dist sub/dist build sub/build .git && echo 1 > dist/a && echo 2 > sub/dist/b && echo 3 > x.log && echo 4 > sub/y.log && echo 5 > build/c && echo 6 > sub/build/d && echo 7 > kept.txt && echo 8 > node_modules',
          ),
        ],
      },
      { text: 'ok' },
    );
    const run = await runAndWait(t, id, 'go');
    const changes = await changesOf(t, id, run.runId);
    // The default list is replaced: node_modules (a file here) is captured; build/ only at the root.
    expect(changes.files.map((file) => file.path).sort()).toEqual(['kept.txt', 'node_modules', 'sub/build/d']);
    expect(changes.not_captured.map((entry) => entry.path).sort()).toEqual([
      '.git',
      'build',
      'dist',
      'sub/dist',
      'sub/y.log',
      'x.log',
    ]);
  });

  it('a patch over 4 MiB, or past limits.changeStoreBytes, is kept as digest and size only (truncated)', async () => {
    const t = await start({ config: { limits: { changeStoreBytes: 1_048_576 } } });
    const ws = join(t.root, 'huge');
    mkdirSync(ws);
    ownForSandbox(t, ws);
    const id = await createSession(t, { workspace: ws });
    // Six text files under 1 MiB each: a patch of about 5.6 MB.
    t.fake.script(
      {
        toolCalls: [bash('z1', 'for i in 1 2 3 4 5 6; do head -c 700000 /dev/urandom | base64 -w 76 > f$i.txt; done')],
      },
      { text: 'ok' },
    );
    const big = await changesOf(t, id, (await runAndWait(t, id, 'big')).runId);
    expect(big.truncated).toBe(true);
    expect(big.patch_base64).toBe('');
    expect(big.patch_bytes).toBeGreaterThan(4 * 1024 * 1024);
    expect(big.patch_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(big.files).toHaveLength(6);
    // Under 4 MiB but over what the session may still store (1 MiB): kept without its patch too.
    t.fake.script({ toolCalls: [bash('z2', 'head -c 600000 /dev/urandom | base64 -w 76 > g.txt')] }, { text: 'ok' });
    const capped = await changesOf(t, id, (await runAndWait(t, id, 'capped')).runId);
    expect(capped.patch_bytes).toBeGreaterThan(800_000);
    expect(capped.patch_bytes).toBeLessThan(4 * 1024 * 1024);
    expect(capped).toMatchObject({ truncated: true, patch_base64: '', files: [{ path: 'g.txt', status: 'added' }] });
    // A small one still fits.
    t.fake.script({ toolCalls: [bash('z3', 'echo small > s.txt')] }, { text: 'ok' });
    const small = await changesOf(t, id, (await runAndWait(t, id, 'small')).runId);
    expect(small.truncated).toBe(false);
    expect(patchText(small)).toContain('+small');
  });

  it('a purge removes the change sets and the shadow store', async () => {
    const t = await start();
    const ws = join(t.root, 'purged');
    mkdirSync(ws);
    ownForSandbox(t, ws);
    const id = await createSession(t, { workspace: ws, autoSave: true });
    t.fake.script({ toolCalls: [bash('p1', 'echo p > p.txt')] }, { text: 'ok' });
    const run = await runAndWait(t, id, 'go');
    await changesOf(t, id, run.runId);
    expect(existsSync(join(t.dataDir, 'changes', homeName('default', id), 'git', 'HEAD'))).toBe(true);
    await request(t.url).delete(`/v1/sessions/${id}`).query({ purge: true }).expect(200);
    expect(existsSync(join(t.dataDir, 'changes')) ? readdirSync(join(t.dataDir, 'changes')) : []).toEqual([]);
    const changesets = join(t.dataDir, 'changesets');
    const tenants = existsSync(changesets) ? readdirSync(changesets) : [];
    expect(tenants.length).toBeGreaterThan(0);
    for (const tenant of tenants) expect(readdirSync(join(changesets, tenant))).toEqual([]);
    // A purged session the caller closed answers 410 (SESSION_CLOSED), never its change sets.
    expect((await changesOf(t, id, run.runId, 410)).error?.code).toBe('SESSION_CLOSED');
  });
});
