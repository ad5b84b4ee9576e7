import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeName } from '../../src/runtime/sandbox/sandbox-homes.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { createSession, ofType, runAndWait, runEvents } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { bash, changesOf, ownForSandbox, patchText } from './changes-helpers.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP) console.warn('change capture tests skipped: bubblewrap (bwrap) is not installed');

describe.skipIf(!HAVE_BWRAP)('change capture per run (bwrap)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  async function workspace(
    name: string,
    files: Record<string, string | Buffer> = {},
  ): Promise<{ ws: string; id: string }> {
    const ws = join(t.root, name);
    mkdirSync(ws, { recursive: true });
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(ws, path, '..'), { recursive: true });
      writeFileSync(join(ws, path), content);
    }
    ownForSandbox(t, ws);
    return { ws, id: await createSession(t, { workspace: ws }) };
  }

  it('adds, modifies, deletes and renames text and binary files; the patch is git-applicable', async () => {
    const binary = Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]);
    const { ws, id } = await workspace('basic', {
      'keep.txt': 'one\ntwo\n',
      'gone.txt': 'bye\n',
      'old-name.txt': 'renamed content that is long enough to be detected\n'.repeat(4),
      'blob.bin': binary,
    });
    const before = tempDir('a3s-before-');
    execFileSync('cp', ['-a', `${ws}/.`, before]);
    t.fake.script(
      {
        toolCalls: [
          { id: 'w1', name: 'write', arguments: { file_path: 'new.txt', content: 'fresh\n' } },
          bash(
            'b1',
            "printf 'one\\nTWO\\nthree\\n' > keep.txt && rm gone.txt && mv old-name.txt new-name.txt && printf '\\000\\011\\377' >> blob.bin",
          ),
        ],
      },
      { text: 'done' },
    );
    const run = await runAndWait(t, id, 'change things');
    expect(run.run.status).toBe('completed');
    const changes = await changesOf(t, id, run.runId);
    expect(changes).toMatchObject({
      schema: 'a3s.code.agent-change-set.v1',
      run_id: run.runId,
      state: 'completed',
      format: 'git_unified_diff_v1',
      encoding: 'base64',
      truncated: false,
    });
    expect(changes.base_tree).toMatch(/^git-tree:[0-9a-f]{40}$/);
    expect(changes.result_tree).not.toBe(changes.base_tree);
    const patch = Buffer.from(changes.patch_base64, 'base64');
    expect(changes.patch_bytes).toBe(patch.length);
    expect(changes.patch_digest).toBe(`sha256:${createHash('sha256').update(patch).digest('hex')}`);
    const byPath = Object.fromEntries(changes.files.map((file) => [file.path, file]));
    expect(byPath['new.txt']).toMatchObject({ status: 'added', additions: 1, deletions: 0, binary: false, bytes: 6 });
    expect(byPath['keep.txt']).toMatchObject({ status: 'modified', additions: 2, deletions: 1, bytes: 14 });
    expect(byPath['gone.txt']).toMatchObject({ status: 'deleted', deletions: 1, bytes: 0 });
    expect(byPath['new-name.txt']).toMatchObject({ status: 'renamed', oldPath: 'old-name.txt' });
    expect(byPath['blob.bin']).toMatchObject({ status: 'modified', binary: true, bytes: binary.length + 3 });
    expect(changes.files).toHaveLength(5);
    // The patch applied to the workspace as it was gives the workspace as it is.
    writeFileSync(join(before, '..', 'run.patch'), patch);
    execFileSync('git', ['apply', '--binary', join(before, '..', 'run.patch')], { cwd: before });
    for (const name of ['new.txt', 'keep.txt', 'new-name.txt', 'blob.bin'])
      expect(readFileSync(join(before, name))).toEqual(readFileSync(join(ws, name)));
    expect(existsSync(join(before, 'gone.txt'))).toBe(false);
    const events = ofType(await runEvents(t, id, run.runId), 'run_changes_captured');
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toEqual({
      run_id: run.runId,
      files: 5,
      patch_bytes: changes.patch_bytes,
      patch_digest: changes.patch_digest,
    });
  });

  it('a run with only read-only calls makes no change set (422 NO_CHANGE_SET no_mutating_call) and no event', async () => {
    const { id } = await workspace('readonly', { 'a.txt': 'a\n' });
    t.fake.script({ toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] }, { text: 'read it' });
    const run = await runAndWait(t, id, 'look');
    const body = await changesOf(t, id, run.runId, 422);
    expect(body.error).toMatchObject({ code: 'NO_CHANGE_SET', details: { reason: 'no_mutating_call' } });
    expect(ofType(await runEvents(t, id, run.runId), 'run_changes_captured')).toHaveLength(0);
    // No capture ran: the session has no shadow store.
    expect(existsSync(join(t.dataDir, 'changes', homeName('default', id)))).toBe(false);
  });

  it('a mutating run that changes nothing has an empty change set and no event', async () => {
    const { id } = await workspace('nochange', { 'a.txt': 'a\n' });
    t.fake.script({ toolCalls: [bash('n1', 'true')] }, { text: 'nothing' });
    const run = await runAndWait(t, id, 'noop');
    const changes = await changesOf(t, id, run.runId);
    expect(changes.files).toEqual([]);
    expect(changes.patch_bytes).toBe(0);
    expect(changes.base_tree).toBe(changes.result_tree);
    expect(ofType(await runEvents(t, id, run.runId), 'run_changes_captured')).toHaveLength(0);
  });

  it("a workspace with its own git repository: the user's .git, index and HEAD are untouched", async () => {
    const { ws, id } = await workspace('withgit', { 'tracked.txt': 'v1\n' });
    const git = (...args: string[]) => execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd: ws });
    git('init', '-q', '.');
    git('add', '.');
    git('-c', 'user.name=u', '-c', 'user.email=u@e', 'commit', '-qm', 'init');
    ownForSandbox(t, ws);
    const index = statSync(join(ws, '.git', 'index'));
    const indexBytes = readFileSync(join(ws, '.git', 'index'));
    const head = readFileSync(join(ws, '.git', 'HEAD'));
    t.fake.script({ toolCalls: [bash('g1', 'echo v2 > tracked.txt && echo n > untracked.txt')] }, { text: 'ok' });
    const run = await runAndWait(t, id, 'edit');
    const changes = await changesOf(t, id, run.runId);
    expect(changes.files.map((file) => [file.path, file.status]).sort()).toEqual([
      ['tracked.txt', 'modified'],
      ['untracked.txt', 'added'],
    ]);
    expect(changes.not_captured).toContainEqual({ path: '.git', reason: 'excluded' });
    expect(statSync(join(ws, '.git', 'index')).mtimeMs).toBe(index.mtimeMs);
    expect(readFileSync(join(ws, '.git', 'index'))).toEqual(indexBytes);
    expect(readFileSync(join(ws, '.git', 'HEAD'))).toEqual(head);
    expect(patchText(changes)).toContain('+v2');
  });

  it('a hostile workspace runs nothing during capture and hides nothing', async () => {
    const marker = join(tempDir('a3s-marker-'), 'MARKER');
    const evil = join(t.root, 'evil.sh');
    writeFileSync(evil, `#!/bin/sh\ntouch ${marker}\ncat\n`, { mode: 0o755 });
    const { ws, id } = await workspace('hostile', {
      '.gitignore': '*\n',
      '.gitattributes': '* filter=evil diff=evil text eol=crlf ident\n',
      'visible.txt': 'line\n',
    });
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', '.gitignore'), '*\n');
    // A real repository whose config would run the marker through fsmonitor, a clean filter and a textconv.
    execFileSync('git', ['init', '-q', '.'], { cwd: ws });
    writeFileSync(
      join(ws, '.git', 'config'),
      `[core]\n\tfsmonitor = ${evil}\n\thooksPath = ${t.root}\n[filter "evil"]\n\tclean = ${evil}\n\tsmudge = ${evil}\n\trequired = true\n[diff "evil"]\n\ttextconv = ${evil}\n\tcommand = ${evil}\n[include]\n\tpath = ${join(t.root, 'inc')}\n`,
    );
    ownForSandbox(t, ws);
    t.fake.script(
      { toolCalls: [bash('h1', 'echo secret > hidden.txt && echo more >> visible.txt && echo deep > sub/deep.txt')] },
      { text: 'ok' },
    );
    const run = await runAndWait(t, id, 'hostile');
    const changes = await changesOf(t, id, run.runId);
    const paths = changes.files.map((file) => file.path).sort();
    expect(paths).toEqual(['hidden.txt', 'sub/deep.txt', 'visible.txt']);
    const text = patchText(changes);
    expect(text).toContain('+secret');
    // No CRLF conversion, no ident expansion: the bytes as they are.
    expect(text).toContain('+more\n');
    expect(text).not.toContain('\r');
    expect(existsSync(marker)).toBe(false);
  });

  it('a .git that is a symlink to / or to the data dir is never followed', async () => {
    for (const [name, target] of [
      ['gitroot', '/'],
      ['gitdata', t.dataDir],
    ] as const) {
      const { ws, id } = await workspace(name, { 'a.txt': 'a\n' });
      symlinkSync(target, join(ws, '.git'));
      t.fake.script({ toolCalls: [bash(`s_${name}`, 'echo b > b.txt')] }, { text: 'ok' });
      const run = await runAndWait(t, id, 'symlink');
      const changes = await changesOf(t, id, run.runId);
      expect(changes.files.map((file) => file.path)).toEqual(['b.txt']);
      expect(changes.not_captured).toContainEqual({ path: '.git', reason: 'excluded' });
    }
  });

  it('a file over 1 MiB and node_modules are listed as not captured', async () => {
    const { id } = await workspace('big', { 'small.txt': 's\n' });
    t.fake.script(
      {
        toolCalls: [
          bash(
            'big1',
            'head -c 1100000 /dev/zero > big.dat && mkdir -p node_modules/x && echo m > node_modules/x/i.js && echo t > t.txt',
          ),
        ],
      },
      { text: 'ok' },
    );
    const run = await runAndWait(t, id, 'big');
    const changes = await changesOf(t, id, run.runId);
    expect(changes.files.map((file) => file.path)).toEqual(['t.txt']);
    expect(changes.not_captured).toContainEqual({ path: 'big.dat', reason: 'too_large', bytes: 1_100_000 });
    expect(changes.not_captured).toContainEqual({ path: 'node_modules', reason: 'excluded' });
  });

  it("404 for another tenant's session, RUN_NOT_FOUND for an unknown run", async () => {
    const { id } = await workspace('unknown', { 'a.txt': 'a\n' });
    const body = (await request(t.url).get(`/v1/sessions/${id}/runs/run_nope/changes`).expect(404)).body;
    expect(body.error.code).toBe('RUN_NOT_FOUND');
    const other = (await request(t.url).get(`/v1/sessions/sess_nope/runs/run_nope/changes`).expect(404)).body;
    expect(other.error.code).toBe('SESSION_NOT_FOUND');
  });
});
