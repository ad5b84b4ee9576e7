import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { ofType, runAndWait, runEvents } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { bash, changesOf } from './changes-helpers.js';
import { requestText, revert, revertWorkspace, sessionEvents, treeOf, unrevert } from './revert-helpers.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP) console.warn('revert tests skipped: bubblewrap (bwrap) is not installed');

describe.skipIf(!HAVE_BWRAP)('revert and unrevert (bwrap)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reverts a run that added, modified, deleted and renamed text and binary files, exactly; unrevert restores', async () => {
    const binary = Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]);
    const { ws, id } = await revertWorkspace(t, 'exact', {
      'keep.txt': 'one\ntwo\n',
      'gone.txt': 'bye\n',
      'sub/old-name.txt': 'renamed content that is long enough to be detected\n'.repeat(4),
      'blob.bin': binary,
    });
    const before = treeOf(ws);
    t.fake.script(
      {
        toolCalls: [
          { id: 'w1', name: 'write', arguments: { file_path: 'new/dir/new.txt', content: 'fresh\n' } },
          bash(
            'b1',
            "printf 'one\\nTWO\\n' > keep.txt && rm gone.txt && mv sub/old-name.txt renamed.txt && printf '\\000\\377' >> blob.bin && printf '\\001\\002' > new.bin",
          ),
        ],
      },
      { text: 'changed' },
    );
    const run = await runAndWait(t, id, 'change things');
    const after = treeOf(ws);
    expect(after).not.toEqual(before);
    const changes = await changesOf(t, id, run.runId);

    const reverted = await revert(t, id, run.runId);
    expect(reverted).toMatchObject({ run_id: run.runId, reverted_run_ids: [run.runId], tree: changes.base_tree });
    expect(reverted.files).toEqual([
      { path: 'blob.bin', action: 'restored' },
      { path: 'gone.txt', action: 'restored' },
      { path: 'keep.txt', action: 'restored' },
      { path: 'new.bin', action: 'deleted' },
      { path: 'new/dir/new.txt', action: 'deleted' },
      { path: 'renamed.txt', action: 'deleted' },
      { path: 'sub/old-name.txt', action: 'restored' },
    ]);
    expect(treeOf(ws)).toEqual(before);
    // Emptied directories go with their files.
    expect(existsSync(join(ws, 'new'))).toBe(false);
    const events = (await sessionEvents(t, id)).filter((e) => e.type === 'session_reverted');
    expect(events.at(-1)?.payload).toEqual({
      run_id: run.runId,
      run_ids: [run.runId],
      files: 7,
      hidden_messages: reverted.messages,
    });
    // The run's messages (its input, tool calls and results, answer) are no longer in the history.
    expect(reverted.messages).toBeGreaterThanOrEqual(4);
    const info = (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session;
    expect(info.messageCount).toBe(0);

    const back = await unrevert(t, id);
    expect(back).toMatchObject({ run_id: run.runId, reverted_run_ids: [run.runId], tree: changes.result_tree });
    expect(back.files).toHaveLength(7);
    expect(treeOf(ws)).toEqual(after);
    expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.messageCount).toBe(
      reverted.messages,
    );
    expect((await sessionEvents(t, id)).filter((e) => e.type === 'session_unreverted').at(-1)?.payload).toMatchObject({
      run_id: run.runId,
      files: 7,
      restored_messages: reverted.messages,
    });
    const again = await unrevert(t, id, 409);
    expect(again.error?.code).toBe('NOTHING_REVERTED');
  });

  it('revert of run 1 of 3 restores all three; the next request does not hold the reverted messages', async () => {
    const { ws, id } = await revertWorkspace(t, 'three', { 'a.txt': 'a0\n' });
    const before = treeOf(ws);
    t.fake.script({ toolCalls: [bash('t1', 'echo a1 > a.txt && echo b > b.txt')] }, { text: 'ANSWER-ONE' });
    const one = await runAndWait(t, id, 'INPUT-ONE');
    // A run with only read-only calls between them: no change set, its messages are hidden too.
    t.fake.script(
      { toolCalls: [{ id: 'r2', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { text: 'ANSWER-TWO' },
    );
    await runAndWait(t, id, 'INPUT-TWO');
    t.fake.script(
      { toolCalls: [bash('t3', 'rm b.txt && echo c > c.txt && echo a3 >> a.txt')] },
      { text: 'ANSWER-THREE' },
    );
    const three = await runAndWait(t, id, 'INPUT-THREE');
    const body = await revert(t, id, one.runId);
    expect(body.reverted_run_ids).toHaveLength(3);
    expect(body.reverted_run_ids[0]).toBe(one.runId);
    expect(body.reverted_run_ids[2]).toBe(three.runId);
    // b.txt, made by run 1 and removed by run 3, is absent now as before: nothing to write.
    expect(body.files.map((file) => file.path)).toEqual(['a.txt', 'c.txt']);
    expect(treeOf(ws)).toEqual(before);
    // Reverting a reverted run again is refused.
    expect((await revert(t, id, three.runId, 409)).error?.code).toBe('REVERT_UNAVAILABLE');

    const seen = t.fake.requests.length;
    t.fake.script({ text: 'fresh' });
    await runAndWait(t, id, 'INPUT-FOUR');
    const text = requestText(t.fake.requests[seen]!.body);
    expect(text).toContain('INPUT-FOUR');
    for (const gone of ['INPUT-ONE', 'ANSWER-ONE', 'INPUT-TWO', 'ANSWER-TWO', 'INPUT-THREE', 'ANSWER-THREE'])
      expect(text).not.toContain(gone);
    // The events of the reverted runs stay in the log.
    expect(ofType(await runEvents(t, id, one.runId), 'agent_end')).toHaveLength(1);
    // The new run dropped the reverted messages for good.
    const refused = await unrevert(t, id, 409);
    expect(refused.error).toMatchObject({ code: 'NOTHING_REVERTED' });
    expect(refused.error?.message).toContain('a run started after the revert');
    // The dropped runs' starts index nothing now: a fork or a revert at them is refused.
    const fork = await request(t.url).post(`/v1/sessions/${id}/fork`).send({ atRunId: three.runId }).expect(409);
    expect(fork.body.error.code).toBe('FORK_POINT_UNAVAILABLE');
    expect((await revert(t, id, three.runId, 409)).error?.message).toContain('dropped by a later run');
  });

  it('a path edited since is a 409 listing it; force writes it; unrevert checks against the reverted tree', async () => {
    const { ws, id } = await revertWorkspace(t, 'conflict', { 'a.txt': 'a0\n', 'b.txt': 'b0\n' });
    t.fake.script({ toolCalls: [bash('c1', 'echo a1 > a.txt && echo b1 > b.txt')] }, { text: 'ok' });
    const run = await runAndWait(t, id, 'edit');
    writeFileSync(join(ws, 'a.txt'), 'a person edited this\n');
    const refused = await revert(t, id, run.runId, 409);
    expect(refused.error).toMatchObject({ code: 'REVERT_CONFLICT', details: { paths: ['a.txt'], count: 1 } });
    // Nothing was written, nothing hidden.
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('b1\n');
    expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.messageCount).toBeGreaterThan(0);
    const forced = await revert(t, id, run.runId, 200, true);
    expect(forced.files.map((file) => file.path)).toEqual(['a.txt', 'b.txt']);
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a0\n');
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('b0\n');
    writeFileSync(join(ws, 'b.txt'), 'edited after the revert\n');
    const again = await unrevert(t, id, 409);
    expect(again.error).toMatchObject({ code: 'REVERT_CONFLICT', details: { paths: ['b.txt'] } });
    await unrevert(t, id, 200, true);
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('b1\n');
  });

  it('409 SESSION_BUSY while a run is active; 409 after a compaction; 422 for a run without a change set', async () => {
    const { id } = await revertWorkspace(t, 'busy', { 'a.txt': 'a\n' });
    t.fake.script({ toolCalls: [bash('k1', 'echo x > x.txt')] }, { text: 'one' });
    const one = await runAndWait(t, id, 'first');
    t.fake.script({ text: 'slow', delayMs: 1500 });
    const active = (await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'slow' }).expect(202)).body
      .runId as string;
    const busy = await revert(t, id, one.runId, 409);
    expect(busy.error?.code).toBe('SESSION_BUSY');
    expect((await unrevert(t, id, 409)).error?.code).toBe('SESSION_BUSY');
    await request(t.url).get(`/v1/sessions/${id}/runs/${active}`).query({ wait: true });
    for (let i = 0; i < 300; i++) {
      const status = (await request(t.url).get(`/v1/sessions/${id}/runs/${active}`)).body.run?.status;
      if (status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    t.fake.script({ text: 'A summary of it all.' });
    const compacted = await request(t.url).post(`/v1/sessions/${id}/compact`).send().expect(200);
    expect(compacted.body.compacted).toBe(true);
    const refused = await revert(t, id, one.runId, 409);
    expect(refused.error?.code).toBe('REVERT_UNAVAILABLE');
    expect(refused.error?.message).toContain('compacted into a summary');
    expect((await revert(t, id, 'run_nope', 404)).error?.code).toBe('RUN_NOT_FOUND');
    expect(
      (await request(t.url).post(`/v1/sessions/${id}/unrevert`).send({ force: 'yes' }).expect(400)).body.error.code,
    ).toBe('VALIDATION_ERROR');

    // Commands refused (no sandbox for this session's commands): its run has no change set.
    const { id: plain } = await revertWorkspace(t, 'nochangeset', { 'a.txt': 'a\n' });
    t.fake.script({ toolCalls: [{ id: 'f1', name: 'read', arguments: { file_path: 'missing' } }] }, { text: 'x' });
    const readOnly = await runAndWait(t, plain, 'look');
    // A run that made no mutating call and nothing after it: only its messages are hidden.
    const hidden = await revert(t, plain, readOnly.runId);
    expect(hidden).toMatchObject({ files: [], reverted_run_ids: [readOnly.runId] });
    expect(hidden.tree).toBeUndefined();
  });
});
