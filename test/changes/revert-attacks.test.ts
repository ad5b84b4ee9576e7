import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { runAndWait } from '../support/run-helpers.js';
import { startSwapLoop } from '../support/swap-loop.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { bash, ownForSandbox } from './changes-helpers.js';
import { revert, revertWorkspace } from './revert-helpers.js';

const HAVE_BWRAP = bwrapWorks();

/** A directory outside the workspace with the names the run wrote: what an attacker's symlink points at. */
function outside(at: string): string {
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'keep.txt'), 'OUTSIDE\n');
  writeFileSync(join(at, 'new.txt'), 'OUTSIDE\n');
  return at;
}

function unchanged(dir: string): void {
  expect(readdirSync(dir).sort()).toEqual(['keep.txt', 'new.txt']);
  expect(readFileSync(join(dir, 'keep.txt'), 'utf8')).toBe('OUTSIDE\n');
  expect(readFileSync(join(dir, 'new.txt'), 'utf8')).toBe('OUTSIDE\n');
}

describe.skipIf(!HAVE_BWRAP)('revert over a hostile workspace (bwrap)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a directory swapped for a symlink to / or to the data dir: nothing outside the workspace is written', async () => {
    for (const [name, target] of [
      ['to-data', outside(join(t.dataDir, 'victim'))],
      ['to-root', '/'],
    ] as const) {
      const { ws, id } = await revertWorkspace(t, `swap-${name}`, { 'd/keep.txt': 'k0\n' });
      t.fake.script({ toolCalls: [bash(`s_${name}`, 'echo k1 > d/keep.txt && echo n > d/new.txt')] }, { text: 'ok' });
      const run = await runAndWait(t, id, 'edit d');
      renameSync(join(ws, 'd'), join(ws, 'd.real'));
      symlinkSync(target, join(ws, 'd'));
      ownForSandbox(t, ws);
      const refused = await revert(t, id, run.runId, 409);
      expect(refused.error?.code).toBe('REVERT_CONFLICT');
      expect((refused.error?.details?.paths as string[]).sort()).toEqual(['d/keep.txt', 'd/new.txt']);
      const forced = await revert(t, id, run.runId, 200, true);
      expect(forced.files).toEqual([{ path: 'd/keep.txt', action: 'restored' }]);
      // The symlink was replaced by a directory, never written through.
      expect(lstatSync(join(ws, 'd')).isDirectory()).toBe(true);
      expect(readFileSync(join(ws, 'd', 'keep.txt'), 'utf8')).toBe('k0\n');
      if (name === 'to-data') unchanged(target);
      else expect(existsSync('/keep.txt')).toBe(false);
    }
  });

  it('revert while a mv -T loop swaps a directory for a symlink to the data dir writes nothing outside', async () => {
    const victim = outside(join(t.dataDir, 'victim-loop'));
    const { ws, id } = await revertWorkspace(t, 'swap-loop', { 'd/keep.txt': 'k0\n', 'top.txt': 't0\n' });
    t.fake.script(
      { toolCalls: [bash('l1', 'echo k1 > d/keep.txt && echo n > d/new.txt && echo t1 > top.txt')] },
      { text: 'ok' },
    );
    const run = await runAndWait(t, id, 'edit');
    symlinkSync(victim, join(ws, 'link'));
    ownForSandbox(t, ws);
    // The name `d` is the directory, then for a moment the symlink, again and again.
    let status = 0;
    const loop = startSwapLoop(ws, 'mv -T d d.real && mv -T link d && mv -T d link && mv -T d.real d');
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const answer = await request(t.url).post(`/v1/sessions/${id}/runs/${run.runId}/revert`).send({ force: true });
      // Written, or refused when git met the swap (never a 500): either way nothing outside moved.
      status = answer.status;
      expect([200, 422]).toContain(status);
    } finally {
      expect(await loop.stop()).toBeGreaterThan(0);
    }
    unchanged(victim);
    if (status === 200) expect(readFileSync(join(ws, 'top.txt'), 'utf8')).toBe('t0\n');
  });

  it('a rollback while a mv -T loop swaps a directory the run changed for links to / and the data dir: nothing outside moves', async () => {
    const victim = outside(join(t.dataDir, 'victim-rollback'));
    const { ws, id } = await revertWorkspace(t, 'swap-rollback', { 'd/keep.txt': 'k0\n', 'top.txt': 't0\n' });
    symlinkSync(victim, join(ws, 'link'));
    symlinkSync('/', join(ws, 'root'));
    ownForSandbox(t, ws);
    t.fake.script(
      { toolCalls: [bash('r1', 'echo k1 > d/keep.txt && echo n > d/new.txt && echo t1 > top.txt')] },
      { hang: true },
      { text: 'fresh' },
    );
    const before = t.fake.requests.length;
    const doomed = (await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'edit' }).expect(202)).body
      .runId as string;
    await t.fake.waitForRequests(before + 2);
    // While the run is rolled back (its result captured, the ctimes read, the restore planned), `d` is the
    // directory, then a link to the data dir's victim, then to /, again and again.
    const loop = startSwapLoop(
      ws,
      'mv -T d d.real && mv -T link d && mv -T d link && mv -T root d && mv -T d root && mv -T d.real d',
    );
    let files: { status: string } | undefined;
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const next = (
        await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'again', multitaskStrategy: 'rollback' })
      ).body.runId as string;
      expect(next).toBeDefined();
      for (let i = 0; i < 200 && files === undefined; i++) {
        const run = (await request(t.url).get(`/v1/sessions/${id}/runs/${doomed}`).expect(200)).body.run as {
          status: string;
          metadata?: { rolled_back_files?: { status: string } };
        };
        if (run.status === 'cancelled') files = run.metadata?.rolled_back_files;
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      expect(await loop.stop()).toBeGreaterThan(0);
    }
    // The loop's own renames are someone else's changes: a conflict is the expected answer; a restore or a failure
    // are possible when the capture met the swap. Whatever it was, nothing outside the workspace was written.
    expect(['conflict', 'restored', 'failed', 'no_change_set']).toContain(files?.status);
    unchanged(victim);
    expect(readdirSync('/').includes('keep.txt')).toBe(false);
    expect(readdirSync('/').includes('new.txt')).toBe(false);
  });
});
