// client.revert / client.unrevert (issue 32) against a real server with the real sandbox: the files a run wrote go
// and come back, a conflicting edit is a RevertConflictError with its paths, force writes anyway.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  A3sClient,
  NothingRevertedError,
  RevertConflictError,
  RevertUnavailableError,
  RunNotFoundError,
  SessionNotFoundError,
  type RevertResponse,
} from '../../src/client/index.js';
import { bash, ownForSandbox } from '../changes/changes-helpers.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP) console.warn('client revert tests skipped: bubblewrap (bwrap) is not installed');

describe.skipIf(!HAVE_BWRAP)('client.revert(sessionId, runId) and client.unrevert(sessionId)', () => {
  let t: TestServer;
  let client: A3sClient;
  beforeAll(async () => {
    t = await startTestServer();
    client = new A3sClient({ baseUrl: t.url });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A workspace with `a.txt` under the server's root, owned for the sandbox. */
  function workspace(name: string): string {
    const ws = join(t.root, name);
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, 'a.txt'), 'a0\n');
    ownForSandbox(t, ws);
    return ws;
  }
  const read = (ws: string, path: string) => readFileSync(join(ws, path), 'utf8');

  it('reverts the files a run wrote and hides its messages; unrevert puts both back; the info says what is reverted', async () => {
    const ws = workspace('client-revert');
    const session = await client.session(ws, { sessionId: 'client-revert' });
    t.fake.script(
      {
        toolCalls: [
          { id: 'w1', name: 'write', arguments: { file_path: 'made.txt', content: 'made by the run\n' } },
          bash('b1', 'echo a1 > a.txt'),
        ],
      },
      { text: 'wrote' },
    );
    expect((await session.send('write things')).text).toBe('wrote');
    const runId = (await session.runs()).at(-1)!.runId;
    expect(read(ws, 'made.txt')).toBe('made by the run\n');
    const messages = (await session.info()).messageCount;
    expect(messages).toBeGreaterThanOrEqual(4);

    const reverted: RevertResponse = await client.revert('client-revert', runId);
    expect(reverted).toMatchObject({ run_id: runId, reverted_run_ids: [runId], messages });
    expect(reverted.files).toEqual([
      { path: 'a.txt', action: 'restored' },
      { path: 'made.txt', action: 'deleted' },
    ]);
    expect(reverted.tree).toMatch(/^git-tree:[0-9a-f]{40}$/);
    expect(existsSync(join(ws, 'made.txt'))).toBe(false);
    expect(read(ws, 'a.txt')).toBe('a0\n');
    const info = await session.info();
    expect(info.messageCount).toBe(0);
    expect(info.reverted).toEqual({ runId, runIds: [runId], hiddenMessages: messages });
    expect((await client.sessionInfos()).find((s) => s.id === 'client-revert')?.reverted?.runId).toBe(runId);

    const again = await client.revert('client-revert', runId).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(RevertUnavailableError);
    expect(again).toMatchObject({ status: 409, code: 'REVERT_UNAVAILABLE', details: { runId } });

    const back = await client.unrevert('client-revert');
    expect(back).toMatchObject({ run_id: runId, reverted_run_ids: [runId], messages });
    expect(back.files.map((file) => file.path)).toEqual(['a.txt', 'made.txt']);
    expect(read(ws, 'made.txt')).toBe('made by the run\n');
    expect(read(ws, 'a.txt')).toBe('a1\n');
    const restored = await session.info();
    expect(restored.messageCount).toBe(messages);
    expect(restored.reverted).toBeUndefined();
    const nothing = await client.unrevert('client-revert').catch((error: unknown) => error);
    expect(nothing).toBeInstanceOf(NothingRevertedError);
    expect(nothing).toMatchObject({ status: 409, details: { sessionId: 'client-revert' } });
    t.fake.assertDone();
  });

  it('a file edited since is a RevertConflictError naming it, nothing written; force writes; unrevert the same', async () => {
    const ws = workspace('client-conflict');
    const session = await client.session(ws);
    t.fake.script({ toolCalls: [bash('c1', 'echo a1 > a.txt && echo b1 > b.txt')] }, { text: 'edited' });
    await session.send('edit');
    const runId = (await session.runs()).at(-1)!.runId;
    writeFileSync(join(ws, 'a.txt'), 'a person edited this\n');

    const conflict = await client.revert(session.sessionId, runId).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(RevertConflictError);
    expect(conflict).toMatchObject({ status: 409, code: 'REVERT_CONFLICT', details: { paths: ['a.txt'] } });
    expect(read(ws, 'b.txt')).toBe('b1\n');
    expect((await session.info()).reverted).toBeUndefined();

    const forced = await client.revert(session.sessionId, runId, { force: true });
    expect(forced.files.map((file) => file.path)).toEqual(['a.txt', 'b.txt']);
    expect(read(ws, 'a.txt')).toBe('a0\n');
    expect(existsSync(join(ws, 'b.txt'))).toBe(false);

    writeFileSync(join(ws, 'b.txt'), 'made after the revert\n');
    const unrevertConflict = await client.unrevert(session.sessionId).catch((error: unknown) => error);
    expect(unrevertConflict).toBeInstanceOf(RevertConflictError);
    expect(unrevertConflict).toMatchObject({ details: { paths: ['b.txt'] } });
    expect(read(ws, 'b.txt')).toBe('made after the revert\n');
    expect((await session.info()).reverted?.runIds).toEqual([runId]);
    await client.unrevert(session.sessionId, { force: true });
    expect(read(ws, 'a.txt')).toBe('a1\n');
    expect(read(ws, 'b.txt')).toBe('b1\n');

    expect(await client.revert(session.sessionId, 'run_nope').catch((error: unknown) => error)).toBeInstanceOf(
      RunNotFoundError,
    );
    expect(await client.unrevert('no-such-session').catch((error: unknown) => error)).toBeInstanceOf(
      SessionNotFoundError,
    );
    t.fake.assertDone();
  });
});
