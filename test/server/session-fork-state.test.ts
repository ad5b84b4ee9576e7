import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { eventually, useTestServers } from '../support/run-helpers.js';
import { tempDir, writeFiles, type TestServer } from '../support/test-server.js';
import { startWebhookServer } from '../support/webhook-server.js';
import { A, A_HOST, as, conversation, TOKENS, type Info } from './fork-helpers.js';

describe('fork: compaction, grants and hooks, restart', () => {
  const start = useTestServers();
  const CONFIRM = { enabled: true, defaultTimeoutMs: 20_000, timeoutAction: 'reject' };

  it('a run compacted into a summary since cannot be split (409); a run after the compaction can', async () => {
    const t = await start({ files: { 'tenant-a/a.txt': 'alpha\n' }, config: { apiTokens: TOKENS } });
    const post = (path: string, body: Record<string, unknown>) => request(t.url).post(path).set(as(A)).send(body);
    await post('/v1/sessions', { sessionId: 'long' }).expect(201);
    const runs: string[] = [];
    for (const i of [1, 2, 3]) {
      t.fake.script({ text: `answer ${i}` });
      runs.push((await post('/v1/sessions/long/runs', { input: `question ${i}`, wait: true }).expect(200)).body.runId);
    }
    t.fake.script({ text: 'They asked questions 1 and 2.' });
    expect((await post('/v1/sessions/long/compact', {}).expect(200)).body.compacted).toBe(true);
    const refused = (await post('/v1/sessions/long/fork', { atRunId: runs[2] }).expect(409)).body.error;
    expect(refused).toMatchObject({ code: 'FORK_POINT_UNAVAILABLE', details: { runId: runs[2], field: 'atRunId' } });
    expect(refused.message).toContain('compacted into a summary');
    t.fake.script({ text: 'answer 4' });
    const fourth = (await post('/v1/sessions/long/runs', { input: 'question 4', wait: true }).expect(200)).body.runId;
    const after = (await post('/v1/sessions/long/fork', { atRunId: fourth }).expect(201)).body.session as Info;
    expect(after).toMatchObject({ messageCount: 4, forkedFrom: { atRunId: fourth, atMessage: 4 } });
    t.fake.assertDone();
  });

  it('grants ("allow always"), hooks and pending confirmations are not copied', async () => {
    const hooks = await startWebhookServer({ '/seen': { body: {} } });
    try {
      const t = await start({
        files: { 'tenant-a/a.txt': 'alpha\n' },
        config: {
          apiTokens: TOKENS,
          defaultPermissionPolicy: { allow: ['read', 'ls'], defaultDecision: 'ask' },
          defaultConfirmationPolicy: CONFIRM,
        },
      });
      const host = (r: request.Test) => r.set(as(A_HOST));
      const pending = async (id: string) =>
        (await host(request(t.url).get(`/v1/sessions/${id}/confirmations`)).expect(200)).body.confirmations as {
          toolId: string;
        }[];
      const call = (id: string, command = 'echo granted') =>
        host(request(t.url).post(`/v1/sessions/${id}/tools/bash/governed`))
          .send({ args: { command } })
          .then((res) => res.body as { output: string; exitCode: number });
      const answer = async (id: string, approved: boolean, always: boolean) => {
        let toolId = '';
        await eventually(async () => {
          toolId = (await pending(id))[0]?.toolId ?? '';
          return toolId !== '';
        }, 'a pending confirmation');
        await host(request(t.url).post(`/v1/sessions/${id}/confirmations/${encodeURIComponent(toolId)}`))
          .send({ approved, always })
          .expect(200);
      };
      await host(request(t.url).post('/v1/sessions'))
        .send({
          sessionId: 'granted',
          hooks: [{ event: 'post_response', endpoint: { type: 'webhook', url: hooks.url('/seen') } }],
        })
        .expect(201);
      const first = call('granted');
      await answer('granted', true, true);
      expect((await first).exitCode).toBe(0);
      // Granted: the parent runs it without asking.
      expect(await call('granted')).toMatchObject({ exitCode: 0, output: expect.stringContaining('granted') });
      const hookList = async (id: string) =>
        (
          (await host(request(t.url).get(`/v1/sessions/${id}/hooks`)).expect(200)).body.hooks as {
            endpoint: { url?: string };
          }[]
        )
          .map((h) => h.endpoint.url)
          .filter((url) => url?.startsWith(hooks.url('')));
      expect(await hookList('granted')).toEqual([hooks.url('/seen')]);

      // Forked while the parent waits on a confirmation: the fork has none.
      const waiting = call('granted', 'echo waiting');
      await eventually(async () => (await pending('granted')).length === 1, 'the parent to wait');
      await host(request(t.url).post('/v1/sessions/granted/fork')).send({ sessionId: 'granted-fork' }).expect(201);
      expect(await pending('granted-fork')).toEqual([]);
      await answer('granted', false, false);
      expect((await waiting).exitCode).not.toBe(0);
      expect(await hookList('granted-fork')).toEqual([]);
      // The fork asks again: the grant stayed with the parent.
      const asked = call('granted-fork');
      await answer('granted-fork', false, false);
      expect((await asked).exitCode).not.toBe(0);
      expect(await pending('granted')).toEqual([]);
    } finally {
      await hooks.close();
    }
  });

  it('survives a restart (file store): forkedFrom, its transcript, and a fork at a restored run', async () => {
    const dataDir = tempDir('a3s-fork-data-');
    const root = tempDir('a3s-fork-ws-');
    writeFiles(root, { 'tenant-a/a.txt': 'alpha\n' });
    const first = await start({ dataDir, root, config: { apiTokens: TOKENS } });
    const post = (t: TestServer, path: string, body: Record<string, unknown>) =>
      request(t.url).post(path).set(as(A)).send(body);
    await post(first, '/v1/sessions', { sessionId: 'kept', autoSave: true }).expect(201);
    first.fake.script({ text: 'one' });
    const run1 = (await post(first, '/v1/sessions/kept/runs', { input: 'first', wait: true }).expect(200)).body.runId;
    first.fake.script({ text: 'two' });
    const run2 = (await post(first, '/v1/sessions/kept/runs', { input: 'second', wait: true }).expect(200)).body.runId;
    await post(first, '/v1/sessions/kept/fork', { atRunId: run2, sessionId: 'kept-fork' }).expect(201);
    await first.close();

    const second = await start({ dataDir, root, config: { apiTokens: TOKENS } });
    const info = (await request(second.url).get('/v1/sessions/kept-fork').set(as(A)).expect(200)).body.session as Info;
    expect(info).toMatchObject({ messageCount: 2, forkedFrom: { sessionId: 'kept', atRunId: run2, atMessage: 2 } });
    expect(
      (
        (await request(second.url).get('/v1/sessions?forkedFrom=kept').set(as(A)).expect(200)).body.sessions as Info[]
      ).map((s) => s.id),
    ).toEqual(['kept-fork']);
    second.fake.script({
      expect: (r) => expect(conversation(r)).toEqual(['user:first', 'assistant:one', 'user:after restart']),
      text: 'still forked',
    });
    expect(
      (await post(second, '/v1/sessions/kept-fork/runs', { input: 'after restart', wait: true }).expect(200)).body
        .result.text,
    ).toBe('still forked');
    // The parent's run records kept where each run started.
    const again = (await post(second, '/v1/sessions/kept/fork', { atRunId: run1 }).expect(201)).body.session as Info;
    expect(again).toMatchObject({ messageCount: 0, forkedFrom: { sessionId: 'kept', atRunId: run1, atMessage: 0 } });
    second.fake.assertDone();
  });
});
