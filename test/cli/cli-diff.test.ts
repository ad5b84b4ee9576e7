// Change sets from the typed client and the CLI (issue 32): client.changes / changesRange, `a3s diff`,
// `a3s run --patch-out`, over HTTP with the real sandbox.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  A3sClient,
  ChangesCapturingError,
  NoChangeSetError,
  RunNotFoundError,
  SessionNotFoundError,
} from '../../src/client/index.js';
import { bash, ownForSandbox } from '../changes/changes-helpers.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s } from './a3s-process.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP) console.warn('a3s diff tests skipped: bubblewrap (bwrap) is not installed');
const SESSION_LINE = /\[run\] session (\S+), run (\S+)/;

describe.skipIf(!HAVE_BWRAP)('change sets from the client and the CLI', () => {
  let cli: string;
  let t: TestServer;
  let env: Record<string, string>;
  let client: A3sClient;
  let out: string;

  beforeAll(async () => {
    cli = buildCli();
    t = await startTestServer();
    env = { HOME: tempDir('a3s-home-'), A3S_URL: t.url };
    client = new A3sClient({ baseUrl: t.url, WebSocket });
    out = tempDir('a3s-patches-');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (cli) removeCli(cli);
  });

  /** A workspace with these files and a copy of it as it is now. */
  function workspace(name: string, files: Record<string, string | Buffer>): { ws: string; before: string } {
    const ws = join(t.root, name);
    mkdirSync(ws, { recursive: true });
    for (const [path, content] of Object.entries(files)) writeFileSync(join(ws, path), content);
    ownForSandbox(t, ws);
    const before = tempDir('a3s-before-');
    execFileSync('cp', ['-a', `${ws}/.`, before]);
    return { ws, before };
  }

  /** `git apply --binary` of a patch file onto a directory. */
  function apply(dir: string, patch: string): void {
    execFileSync('git', ['apply', '--binary', patch], { cwd: dir });
  }

  it('run --patch-out writes a patch that git apply turns the original workspace into the result; a3s diff prints it', async () => {
    const binary = Buffer.from([0, 1, 2, 255, 254]);
    const { ws, before } = workspace('patched', {
      'keep.txt': 'one\ntwo\n',
      'gone.txt': 'bye\n',
      'old-name.txt': 'content long enough to be seen as the same file\n'.repeat(4),
      'blob.bin': binary,
    });
    t.fake.script(
      {
        toolCalls: [
          { id: 'w1', name: 'write', arguments: { file_path: 'new.txt', content: 'fresh\n' } },
          bash(
            'b1',
            "printf 'one\\nTWO\\nthree\\n' > keep.txt && rm gone.txt && mv old-name.txt new-name.txt && printf '\\000\\377' >> blob.bin",
          ),
        ],
      },
      { text: 'changed' },
    );
    const patchFile = join(out, 'run.patch');
    const ran = await runA3s(cli, ['run', '--workspace', ws, '--keep', '--patch-out', patchFile, 'change things'], {
      env,
    });
    expect(ran.stdout).toBe('changed\n');
    expect(ran.code).toBe(0);
    const [, sessionId, runId] = SESSION_LINE.exec(ran.stderr) ?? [];
    const changes = await client.changes(sessionId!, runId!);
    expect(changes).toMatchObject({ schema: 'a3s.code.agent-change-set.v1', run_id: runId, state: 'completed' });
    const patch = readFileSync(patchFile);
    expect(patch).toEqual(Buffer.from(changes.patch_base64, 'base64'));
    expect(ran.stderr).toContain(`[patch] wrote ${patchFile}: 5 files, ${changes.patch_bytes} bytes\n`);
    apply(before, patchFile);
    for (const name of ['new.txt', 'keep.txt', 'new-name.txt', 'blob.bin'])
      expect(readFileSync(join(before, name))).toEqual(readFileSync(join(ws, name)));
    expect(existsSync(join(before, 'gone.txt'))).toBe(false);
    expect(existsSync(join(before, 'old-name.txt'))).toBe(false);

    const diff = await runA3s(cli, ['diff', sessionId!, runId!], { env });
    expect(diff.code).toBe(0);
    expect(Buffer.from(diff.stdout)).toEqual(patch);
    const stat = await runA3s(cli, ['diff', sessionId!, runId!, '--stat'], { env });
    expect(stat.code).toBe(0);
    expect(
      stat.stdout
        .split('\n')
        .filter((line) => line.length > 0)
        .sort(),
    ).toEqual(
      [
        'A\t+1\t-0\tnew.txt',
        'M\t+2\t-1\tkeep.txt',
        'D\t+0\t-1\tgone.txt',
        'R\t+0\t-0\tnew-name.txt (from old-name.txt)',
        'M\tbin\tbin\tblob.bin',
        '5 files changed, +3 -2',
      ].sort(),
    );
    const json = await runA3s(cli, ['diff', sessionId!, runId!, '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual(changes);

    // A second run in the same session; the range from the first run's start to its end is one patch.
    const middle = tempDir('a3s-middle-');
    execFileSync('cp', ['-a', `${ws}/.`, middle]);
    t.fake.script({ toolCalls: [bash('b2', "printf 'four\\n' >> keep.txt && rm new.txt")] }, { text: 'again' });
    const second = await runA3s(
      cli,
      ['run', '--session', sessionId!, '--patch-out', join(out, 'second.patch'), 'more'],
      {
        env,
      },
    );
    expect(second.code).toBe(0);
    const [, , secondRun] = SESSION_LINE.exec(second.stderr) ?? [];
    apply(middle, join(out, 'second.patch'));
    expect(readFileSync(join(middle, 'keep.txt'), 'utf8')).toBe('one\nTWO\nthree\nfour\n');
    expect(existsSync(join(middle, 'new.txt'))).toBe(false);

    const range = await client.changesRange(sessionId!, { from: runId!, to: secondRun! });
    expect(range).toMatchObject({
      schema: 'a3s.code.agent-change-range.v1',
      from_run_id: runId,
      run_id: secondRun,
    });
    // new.txt, added by the first run and removed by the second, is in neither tree.
    expect(range.files.map((file) => file.path).sort()).toEqual(['blob.bin', 'gone.txt', 'keep.txt', 'new-name.txt']);
    const rangeDiff = await runA3s(cli, ['diff', sessionId!, '--from', runId!, '--to', secondRun!], { env });
    expect(rangeDiff.code).toBe(0);
    expect(Buffer.from(rangeDiff.stdout)).toEqual(Buffer.from(range.patch_base64, 'base64'));
    // `before` now holds the first run's result: the range applies to the workspace as it was at first.
    const original = workspace('original-copy', {
      'keep.txt': 'one\ntwo\n',
      'gone.txt': 'bye\n',
      'old-name.txt': 'content long enough to be seen as the same file\n'.repeat(4),
      'blob.bin': binary,
    }).before;
    writeFileSync(join(out, 'range.patch'), Buffer.from(range.patch_base64, 'base64'));
    apply(original, join(out, 'range.patch'));
    for (const name of ['keep.txt', 'new-name.txt', 'blob.bin'])
      expect(readFileSync(join(original, name))).toEqual(readFileSync(join(ws, name)));
    expect(existsSync(join(original, 'new.txt'))).toBe(false);
    const rangeStat = await runA3s(cli, ['diff', sessionId!, '--from', runId!, '--to', secondRun!, '--stat'], {
      env,
    });
    expect(rangeStat.stdout).toContain('M\t+3\t-1\tkeep.txt\n');
    t.fake.assertDone();
  });

  it('--patch-out with no change set, or an empty one, writes nothing and exits 5; the session is still closed', async () => {
    const { ws } = workspace('readonly', { 'a.txt': 'a\n' });
    const patchFile = join(out, 'none.patch');
    t.fake.script({ toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] }, { text: 'read' });
    const readOnly = await runA3s(cli, ['run', '--workspace', ws, '--patch-out', patchFile, 'look'], { env });
    expect(readOnly.code).toBe(5);
    const [, sessionId, runId] = SESSION_LINE.exec(readOnly.stderr) ?? [];
    expect(readOnly.stderr).toContain(
      `[patch] run ${runId} has no change set (no_mutating_call): nothing written to ${patchFile}\n`,
    );
    expect(readOnly.stderr).toContain(`[run] closed session ${sessionId}`);
    expect(existsSync(patchFile)).toBe(false);
    // The closed session's change sets are not served: --keep (or --patch-out) is the way to them.
    const closed = await runA3s(cli, ['diff', sessionId!, runId!], { env });
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(/^a3s: SESSION_CLOSED: /);

    t.fake.script({ toolCalls: [bash('n1', 'true')] }, { text: 'nothing' });
    const noop = await runA3s(cli, ['run', '--workspace', ws, '--keep', '--patch-out', patchFile, 'noop'], { env });
    expect(noop.code).toBe(5);
    const [, noopSession, noopRun] = SESSION_LINE.exec(noop.stderr) ?? [];
    expect(noop.stderr).toContain(`[patch] run ${noopRun} changed no file: nothing written to ${patchFile}\n`);
    expect(existsSync(patchFile)).toBe(false);
    // The empty change set itself: a diff prints nothing, --stat the total.
    const empty = await runA3s(cli, ['diff', noopSession!, noopRun!], { env });
    expect(empty).toMatchObject({ code: 0, stdout: '' });
    expect((await runA3s(cli, ['diff', noopSession!, noopRun!, '--stat'], { env })).stdout).toBe(
      '0 files changed, +0 -0\n',
    );

    // A failed run keeps its exit code.
    t.fake.script({ error: { status: 400, message: 'refused' } });
    const failed = await runA3s(cli, ['run', '--workspace', ws, '--patch-out', patchFile, 'fail'], { env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('has no change set');
    expect(existsSync(patchFile)).toBe(false);
    t.fake.assertDone();
  });

  it('errors: the client throws its typed classes (425, 422, 404); a3s diff exits 1 naming the code, 2 for usage', async () => {
    const { ws } = workspace('errors', { 'a.txt': 'a\n' });
    const sessionId = (await client.session(ws)).sessionId;
    t.fake.script({ hang: true });
    const started = (await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input: 'wait' }).expect(202))
      .body.runId as string;
    const capturing = await client.changes(sessionId, started).catch((error: unknown) => error);
    expect(capturing).toBeInstanceOf(ChangesCapturingError);
    expect(capturing).toMatchObject({ status: 425, details: { runId: started } });
    const stillRunning = await runA3s(cli, ['diff', sessionId, started], { env });
    expect(stillRunning.code).toBe(1);
    expect(stillRunning.stderr).toMatch(/^a3s: CHANGES_CAPTURING: /);
    await request(t.url).post(`/v1/sessions/${sessionId}/runs/${started}/cancel`).send({}).expect(200);
    await eventually(
      async () =>
        (await request(t.url).get(`/v1/sessions/${sessionId}/runs/${started}`)).body.run.status === 'cancelled',
      'the run to be cancelled',
    );
    const none = await client.changes(sessionId, started).catch((error: unknown) => error);
    expect(none).toBeInstanceOf(NoChangeSetError);
    expect(none).toMatchObject({ status: 422, details: { reason: 'no_mutating_call' } });
    const noneRange = await client
      .changesRange(sessionId, { from: started, to: started })
      .catch((error: unknown) => error);
    expect(noneRange).toBeInstanceOf(NoChangeSetError);
    const noneCli = await runA3s(cli, ['diff', sessionId, started], { env });
    expect(noneCli.code).toBe(1);
    expect(noneCli.stderr).toMatch(/^a3s: NO_CHANGE_SET: run \S+ has no change set/);

    expect(await client.changes(sessionId, 'run_nope').catch((error: unknown) => error)).toBeInstanceOf(
      RunNotFoundError,
    );
    expect(
      await client.changesRange('no-such-session', { from: 'a', to: 'b' }).catch((error: unknown) => error),
    ).toBeInstanceOf(SessionNotFoundError);
    const missingRun = await runA3s(cli, ['diff', sessionId, 'run_nope'], { env });
    expect(missingRun.code).toBe(1);
    expect(missingRun.stderr).toMatch(/^a3s: RUN_NOT_FOUND: /);

    for (const [args, message] of [
      [['diff', sessionId], /^a3s: missing RUN/],
      [['diff', sessionId, '--from', started], /^a3s: a range needs both --from RUN and --to RUN/],
      [['diff', sessionId, started, '--from', started, '--to', started], /^a3s: unexpected argument/],
      [['diff', sessionId, started, '--stat', '--json'], /^a3s: --stat and --json: give one of them/],
      [['run', '--patch-out', join(out, 'no-dir', 'x.patch'), 'hi'], /^a3s: --patch-out \S+: no such directory/],
      [['run', '--patch-out', out, 'hi'], /^a3s: --patch-out \S+: is a directory/],
    ] as const) {
      const result = await runA3s(cli, args, { env });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
    }
    t.fake.assertDone();
  });
});
