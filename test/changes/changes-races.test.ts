import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeSet } from '../../src/protocol/change-set.js';
import { homeName } from '../../src/runtime/sandbox/sandbox-homes.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { createSession, runAndWait } from '../support/run-helpers.js';
import { directorySwapBody, startSwapLoop, type SwapLoop } from '../support/swap-loop.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { bash, ownForSandbox, patchText } from './changes-helpers.js';

const HAVE_BWRAP = bwrapWorks();
const SECRETS = ['SECRET-OUTSIDE-91c2', 'SECRET-OTHER-WS-5e7d', 'SECRET-DATA-DIR-0b44', 'SECRET-TWIN-ROOT-c3a9'];

/** The run's change set, or undefined when its capture failed (a swap caught git mid-walk): never anything else. */
async function changeSetOrFailed(t: TestServer, id: string, runId: string): Promise<ChangeSet | undefined> {
  const res = await request(t.url).get(`/v1/sessions/${id}/runs/${runId}/changes`);
  if (res.status === 200) return res.body as ChangeSet;
  expect(res.status).toBe(422);
  expect(res.body.error.details.reason).toMatch(/^(capture_failed|no_mutating_call)$/);
  return undefined;
}

/** Every byte the server keeps for change sets: the stored JSON files and every object of every shadow store. */
function storedBytes(dataDir: string): string {
  let text = '';
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.isFile()) text += readFileSync(join(dir, entry.name), 'latin1');
    }
  };
  if (existsSync(join(dataDir, 'changesets'))) walk(join(dataDir, 'changesets'));
  for (const store of existsSync(join(dataDir, 'changes')) ? readdirSync(join(dataDir, 'changes')) : []) {
    // A store is made before its first capture runs: one whose every capture failed (the workspace caught swapped) has no git dir.
    if (!existsSync(join(dataDir, 'changes', store, 'git', 'HEAD'))) continue;
    text += execFileSync(
      'git',
      [
        '-c',
        'safe.directory=*',
        '--git-dir',
        join(dataDir, 'changes', store, 'git'),
        'cat-file',
        '--batch-all-objects',
        '--batch',
      ],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } },
    ).toString('latin1');
    const index = join(dataDir, 'changes', store, 'git', 'index');
    if (existsSync(index)) text += readFileSync(index, 'latin1');
  }
  return text;
}

/** Stop a directorySwapBody loop and put the real directory back (the loop stops wherever it is in its body). */
async function stopSwap(loop: SwapLoop, cwd: string, name: string): Promise<number> {
  const rounds = await loop.stop();
  const real = join(cwd, `.real-${name}`);
  if (existsSync(real)) {
    if (lstatSync(join(cwd, name), { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(join(cwd, name));
    renameSync(real, join(cwd, name));
  }
  return rounds;
}

describe.skipIf(!HAVE_BWRAP)('change capture under attack: races (bwrap)', () => {
  let t: TestServer;
  let outside = '';
  beforeAll(async () => {
    t = await startTestServer();
    outside = tempDir('a3s-outside-');
    writeFileSync(join(outside, 'secret.txt'), `${SECRETS[0]}\n`);
    writeFileSync(join(t.dataDir, 'planted-secret.txt'), `${SECRETS[2]}\n`);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function runs(id: string, count: number, tag: string): Promise<ChangeSet[]> {
    const found: ChangeSet[] = [];
    for (let n = 0; n < count; n++) {
      t.fake.script({ toolCalls: [bash(`${tag}${n}`, `echo ${n} > w${n}.txt`)] }, { text: 'ok' });
      const changeSet = await changeSetOrFailed(t, id, (await runAndWait(t, id, `${tag} ${n}`)).runId);
      if (changeSet) found.push(changeSet);
    }
    return found;
  }

  it('a directory swapped for links to /, /proc, another workspace, the data dir or a store: nothing from outside', async () => {
    // Another session's workspace and shadow store, holding a secret of their own.
    const other = join(t.root, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'mine.txt'), `${SECRETS[1]}\n`);
    ownForSandbox(t, other);
    const otherId = await createSession(t, { workspace: other });
    await runs(otherId, 1, 'o');
    const ws = join(t.root, 'swapped');
    mkdirSync(join(ws, 'd'), { recursive: true });
    writeFileSync(join(ws, 'd', 'x.txt'), 'x\n');
    ownForSandbox(t, ws);
    const id = await createSession(t, { workspace: ws });
    const targets = ['/', '/proc/self', '/proc/self/environ', outside, other, t.dataDir];
    targets.push(join(t.dataDir, 'changes', homeName('default', otherId), 'git'));
    const loop = startSwapLoop(ws, targets.map((target) => directorySwapBody('d', target, 0.005)).join('; '));
    let found: ChangeSet[] = [];
    try {
      found = await runs(id, 4, 's');
    } finally {
      expect(await stopSwap(loop, ws, 'd')).toBeGreaterThan(0);
    }
    expect(found.length).toBeGreaterThan(0);
    for (const changeSet of found) {
      // Only the workspace's own names: the directory, its file, the loop's two spare names, the run's files.
      for (const file of changeSet.files) expect(file.path).toMatch(/^(w\d\.txt|(\.real-|\.lnk-)?d(\/x\.txt)?)$/);
      const text = patchText(changeSet);
      for (const secret of SECRETS) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/GIT_CONFIG_NOSYSTEM|A3S_SHADOW|root:x:0:0/);
    }
    const kept = storedBytes(t.dataDir);
    for (const secret of [SECRETS[0], SECRETS[2], SECRETS[3]]) expect(kept).not.toContain(secret);
  }, 90_000);

  it("the workspace root or its parent swapped for a link to a twin: the pinned directory's files only", async () => {
    const twin = join(t.root, 'twin', 'ws');
    mkdirSync(twin, { recursive: true });
    writeFileSync(join(twin, 'secret.txt'), `${SECRETS[3]}\n`);
    const ws = join(t.root, 'parent', 'ws');
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    ownForSandbox(t, join(t.root, 'parent'));
    ownForSandbox(t, join(t.root, 'twin'));
    const id = await createSession(t, { workspace: ws });
    const found: ChangeSet[] = [];
    for (const [cwd, name, target] of [
      [t.root, 'parent', join(t.root, 'twin')],
      [join(t.root, 'parent'), 'ws', twin],
    ] as const) {
      const loop = startSwapLoop(cwd, directorySwapBody(name, target, 0.005));
      // A run over a workspace caught swapped fails at once: the loop gets some rounds in first.
      await new Promise((resolve) => setTimeout(resolve, 300));
      try {
        found.push(...(await runs(id, 2, `r${name}`)));
      } finally {
        expect(await stopSwap(loop, cwd, name)).toBeGreaterThan(0);
      }
    }
    for (const changeSet of found) {
      for (const file of changeSet.files) expect(file.path).toMatch(/^w\d\.txt$/);
      expect(patchText(changeSet)).not.toContain(SECRETS[3]);
    }
    expect(storedBytes(t.dataDir)).not.toContain(SECRETS[3]);
  }, 90_000);
});
