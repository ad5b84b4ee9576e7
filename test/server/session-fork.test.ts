import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../support/fake-provider.js';
import { eventually, useTestServers } from '../support/run-helpers.js';
import { startTestServer, tempDir, writeFiles, type TestServer } from '../support/test-server.js';
import { startWebhookServer } from '../support/webhook-server.js';

const A = 'token-fork-tenant-a-sessions1';
const A_HOST = 'token-fork-tenant-a-hostdirect';
const B = 'token-fork-tenant-b-sessions1';
const ADMIN = 'token-fork-admin-ops-tenant01';
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: A_HOST, principal: 'ci', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];
const ECHO_SERVER = fileURLToPath(new URL('../fixtures/mcp-echo-server.mjs', import.meta.url));
const as = (token: string) => ({ authorization: `Bearer ${token}` });

/** The conversation a provider request carries (no system message): role and text of each message. */
const conversation = (r: RecordedRequest) =>
  r.body.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}:${String(m.content ?? '')}`);

interface Info {
  id: string;
  messageCount: number;
  labels: { tenantId?: string; principal?: string };
  forkedFrom?: { sessionId: string; tenantId?: string; atRunId?: string; atMessage: number };
}

describe('POST /v1/sessions/:id/fork', () => {
  let t: TestServer;
  const post = (token: string, path: string, body: Record<string, unknown>) =>
    request(t.url).post(path).set(as(token)).send(body);
  const run = async (token: string, id: string, input: string) =>
    (await post(token, `/v1/sessions/${id}/runs`, { input, wait: true }).expect(200)).body as {
      runId: string;
      result: { text: string };
    };
  const fork = (token: string, id: string, body: Record<string, unknown> = {}, query = '') =>
    post(token, `/v1/sessions/${id}/fork${query}`, body);
  const history = async (token: string, id: string) =>
    (
      (await request(t.url).get(`/v1/sessions/${id}/history`).set(as(token)).expect(200)).body.messages as {
        role: string;
        content: string | null;
      }[]
    ).map((m) => `${m.role}:${m.content ?? ''}`);

  let firstRun = '';
  let secondRun = '';
  let shared = '';
  beforeAll(async () => {
    const root = tempDir('a3s-fork-ws-');
    shared = tempDir('a3s-fork-shared-');
    writeFiles(root, { 'tenant-a/a.txt': 'alpha\n', 'tenant-b/b.txt': 'beta\n' });
    writeFiles(shared, { 'common/c.txt': 'common\n' });
    t = await startTestServer({
      root,
      // The MCP echo fixture and its node_modules live in the repository: mounted read-only into the sandbox.
      config: {
        apiTokens: TOKENS,
        workspaceRoots: [root, shared],
        sharedWorkspaceRoots: [shared],
        // (node_modules where it really is: a worktree's may be a symlink out of the repository).
        sandbox: { readOnlyPaths: [...new Set([process.cwd(), realpathSync(join(process.cwd(), 'node_modules'))])] },
      },
    });
    await post(A, '/v1/sessions', { sessionId: 'parent' }).expect(201);
    t.fake.script({ text: 'one' });
    firstRun = (await run(A, 'parent', 'first')).runId;
    t.fake.script({ toolCalls: [{ id: 'call_ls', name: 'ls', arguments: {} }] }, { text: 'two' });
    secondRun = (await run(A, 'parent', 'second')).runId;
    t.fake.assertDone();
  });
  afterAll(async () => {
    await t.close();
  });

  it('at a run: the fork sends the provider exactly the messages before that run, and says where it came from', async () => {
    const created = (await fork(A, 'parent', { atRunId: secondRun, sessionId: 'at-run' }).expect(201)).body
      .session as Info;
    expect(created).toMatchObject({
      id: 'at-run',
      messageCount: 2,
      labels: { tenantId: 'tenant-a', principal: 'alice' },
      forkedFrom: { sessionId: 'parent', atRunId: secondRun, atMessage: 2 },
    });
    expect(created.forkedFrom?.tenantId).toBeUndefined();
    t.fake.script({
      expect: (r) => expect(conversation(r)).toEqual(['user:first', 'assistant:one', 'user:another way']),
      text: 'other',
    });
    expect((await run(A, 'at-run', 'another way')).result.text).toBe('other');
    t.fake.assertDone();
    // The fork's log starts with where it came from.
    const trace = (await request(t.url).get('/v1/sessions/at-run/trace').set(as(A)).expect(200)).body.events as {
      type: string;
      payload: Record<string, unknown>;
    }[];
    expect(trace[0]).toMatchObject({
      type: 'session_forked',
      payload: { parent_session_id: 'parent', at_run_id: secondRun, at_message: 2, workspace: 'shared' },
    });
    // Forking at the first run keeps nothing.
    const empty = (await fork(A, 'parent', { atRunId: firstRun }).expect(201)).body.session as Info;
    expect(empty).toMatchObject({
      messageCount: 0,
      forkedFrom: { sessionId: 'parent', atRunId: firstRun, atMessage: 0 },
    });
  });

  it('at a message index and whole; the parent is untouched and still usable; the list filters by parent', async () => {
    const before = await history(A, 'parent');
    expect(before).toEqual([
      'user:first',
      'assistant:one',
      'user:second',
      'assistant:',
      expect.stringMatching(/^tool:.*a\.txt/s),
      'assistant:two',
    ]);
    await fork(A, 'parent', { atMessage: 2, sessionId: 'at-message' }).expect(201);
    t.fake.script({
      expect: (r) => expect(conversation(r)).toEqual(['user:first', 'assistant:one', 'user:from message 2']),
      text: 'ok',
    });
    await run(A, 'at-message', 'from message 2');
    const whole = (await fork(A, 'parent', { sessionId: 'whole' }).expect(201)).body.session as Info;
    expect(whole.forkedFrom).toEqual({ sessionId: 'parent', atMessage: 6 });
    expect(await history(A, 'whole')).toEqual(before);
    t.fake.script({
      expect: (r) => {
        const sent = conversation(r);
        expect(sent).toHaveLength(7);
        expect(sent.slice(0, 4)).toEqual(before.slice(0, 4));
        expect(sent.slice(4)).toEqual([expect.stringMatching(/^tool:.*a\.txt/s), 'assistant:two', 'user:whole fork']);
      },
      text: 'whole ok',
    });
    await run(A, 'whole', 'whole fork');
    // The parent kept its transcript and goes on.
    expect(await history(A, 'parent')).toEqual(before);
    t.fake.script({
      expect: (r) => expect(conversation(r)).toHaveLength(7),
      text: 'parent goes on',
    });
    expect((await run(A, 'parent', 'third')).result.text).toBe('parent goes on');
    t.fake.assertDone();
    const listed = (await request(t.url).get('/v1/sessions?forkedFrom=parent').set(as(A)).expect(200)).body
      .sessions as Info[];
    expect(listed.map((s) => s.id)).toEqual(expect.arrayContaining(['at-run', 'at-message', 'whole']));
    expect(listed.every((s) => s.forkedFrom?.sessionId === 'parent')).toBe(true);
    const all = (await request(t.url).get('/v1/sessions').set(as(A)).expect(200)).body.sessions as Info[];
    expect(all.find((s) => s.id === 'parent')?.forkedFrom).toBeUndefined();
  });

  it('bad bodies are 400 naming the fields; an unknown run is 404; copy is not built yet', async () => {
    const both = (await fork(A, 'parent', { atRunId: firstRun, atMessage: 1 }).expect(400)).body.error;
    expect(both.code).toBe('VALIDATION_ERROR');
    expect(both.details.issues.map((i: { path: string }) => i.path)).toEqual(['body.atRunId', 'body.atMessage']);
    const far = (await fork(A, 'parent', { atMessage: 99 }).expect(400)).body.error;
    expect(far).toMatchObject({ code: 'VALIDATION_ERROR', details: { issues: [{ path: 'body.atMessage' }] } });
    expect(far.message).toContain('body.atMessage');
    // Message 4 is the ls result: cutting there keeps a tool call without its result.
    const half = (await fork(A, 'parent', { atMessage: 4 }).expect(400)).body.error;
    expect(half.message).toMatch(/^body\.atMessage: message 4 is a tool result/);
    for (const bad of [
      { atMessage: -1 },
      { atMessage: 'two' },
      { bogus: true },
      { sessionId: '../x' },
      { workspace: 'cow' },
    ]) {
      const error = (await fork(A, 'parent', bad).expect(400)).body.error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.message).toMatch(/^body/);
    }
    expect((await fork(A, 'parent', { atRunId: 'run_nope' }).expect(404)).body.error.code).toBe('RUN_NOT_FOUND');
    expect((await fork(A, 'parent', { workspace: 'copy' }).expect(400)).body.error).toMatchObject({
      code: 'UNSUPPORTED_OPTION',
      details: { field: 'body.workspace' },
    });
    expect((await fork(A, 'parent', { sessionId: 'whole' }).expect(409)).body.error.code).toBe('SESSION_EXISTS');
  });

  it("another tenant's session is 404; the same new id chosen by two tenants is each tenant's", async () => {
    expect((await fork(B, 'parent', {}).expect(404)).body.error.code).toBe('SESSION_NOT_FOUND');
    await post(B, '/v1/sessions', { sessionId: 'b-parent' }).expect(201);
    const a = (await fork(A, 'parent', { sessionId: 'same' }).expect(201)).body.session as Info;
    const b = (await fork(B, 'b-parent', { sessionId: 'same' }).expect(201)).body.session as Info;
    expect(a).toMatchObject({ id: 'same', labels: { tenantId: 'tenant-a' }, forkedFrom: { sessionId: 'parent' } });
    expect(b).toMatchObject({ id: 'same', labels: { tenantId: 'tenant-b' }, forkedFrom: { sessionId: 'b-parent' } });
    // A non-admin naming another tenant is 403, as on every session route.
    expect((await fork(B, 'parent', {}, '?tenantId=tenant-a').expect(403)).body.error.details.field).toBe(
      'query.tenantId',
    );
    // An admin's fork of another tenant's session lives in the admin's tenant: the workspace is not in its space.
    const admin = (await fork(ADMIN, 'parent', {}, '?tenantId=tenant-a').expect(403)).body.error;
    expect(admin).toMatchObject({ code: 'FORBIDDEN', details: { field: 'workspace' } });
    // On a shared root the admin's fork is its own tenant's, and says which tenant the parent is of.
    const common = join(shared, 'common');
    await post(A, '/v1/sessions', { sessionId: 'on-shared', workspace: common }).expect(201);
    const across = (await fork(ADMIN, 'on-shared', { sessionId: 'on-shared' }, '?tenantId=tenant-a').expect(201)).body
      .session as Info & { workspace: string };
    expect(across).toMatchObject({
      id: 'on-shared',
      workspace: common,
      labels: { tenantId: 'ops', principal: 'root' },
      forkedFrom: { sessionId: 'on-shared', tenantId: 'tenant-a', atMessage: 0 },
    });
    const trace = (await request(t.url).get('/v1/sessions/on-shared/trace').set(as(ADMIN)).expect(200)).body.events;
    expect(trace[0]).toMatchObject({
      type: 'session_forked',
      payload: { parent_session_id: 'on-shared', parent_tenant_id: 'tenant-a' },
    });
  });

  it("a fork of a replay session (hostEnv) gets a new generated id, not its parent's", async () => {
    const replay = (
      await post(A, '/v1/sessions', { hostEnv: { sequentialIdPrefix: 'fx', fixedTimeMs: 1_700_000_000_000 } }).expect(
        201,
      )
    ).body.session as Info;
    const one = (await fork(A, replay.id, {}).expect(201)).body.session as Info;
    const two = (await fork(A, replay.id, {}).expect(201)).body.session as Info;
    expect(new Set([replay.id, one.id, two.id]).size).toBe(3);
    expect(one.forkedFrom?.sessionId).toBe(replay.id);
  });

  it("a busy session forks what is committed: never the active run's half round", async () => {
    await post(A, '/v1/sessions', { sessionId: 'busy' }).expect(201);
    t.fake.script({ text: 'done' });
    await run(A, 'busy', 'before');
    t.fake.script({ toolCalls: [{ id: 'call_ls_busy', name: 'ls', arguments: {} }] }, { text: 'late', delayMs: 1500 });
    const started = (await post(A, '/v1/sessions/busy/runs', { input: 'slow' }).expect(202)).body.runId as string;
    await t.fake.waitForRequests(t.fake.requests.length + 2);
    // The run is between rounds: its ls result exists, but nothing of it is committed.
    const whole = (await fork(A, 'busy', {}).expect(201)).body.session as Info;
    expect(whole.messageCount).toBe(2);
    const atActive = (await fork(A, 'busy', { atRunId: started }).expect(201)).body.session as Info;
    expect(atActive.forkedFrom).toEqual({ sessionId: 'busy', atRunId: started, atMessage: 2 });
    await eventually(
      async () => (await request(t.url).get('/v1/sessions/busy').set(as(A))).body.session.busy === false,
      'the slow run to end',
    );
    expect(await history(A, whole.id)).toEqual(['user:before', 'assistant:done']);
    t.fake.assertDone();
  });

  it("a sessions-only caller forking a host_direct caller's session gets 403 naming each refused option", async () => {
    await post(A_HOST, '/v1/sessions', {
      sessionId: 'lifted',
      securityProvider: { type: 'none' },
      sandboxNetwork: 'allowed',
      permissionPolicy: { allow: ['bash'], defaultDecision: 'allow' },
      mcpServers: [{ name: 'echo', transport: { type: 'stdio', command: process.execPath, args: [ECHO_SERVER, 'x'] } }],
    }).expect(201);
    const refused = (await fork(A, 'lifted', {}).expect(403)).body.error;
    expect(refused.code).toBe('FORBIDDEN');
    const named = ['securityProvider.type', 'sandboxNetwork', 'mcpServers.0', 'permissionPolicy'];
    expect(refused.details.options).toEqual(expect.arrayContaining(named));
    expect(refused.details.field).toBe('securityProvider.type');
    for (const field of named) expect(refused.message).toContain(field);
    // Nothing was created; the host_direct caller may fork it.
    expect((await request(t.url).get('/v1/sessions?forkedFrom=lifted').set(as(A)).expect(200)).body.sessions).toEqual(
      [],
    );
    const allowed = (await fork(A_HOST, 'lifted', { sessionId: 'lifted-fork' }).expect(201)).body.session;
    expect(allowed).toMatchObject({ securityProvider: 'none', sandboxNetwork: 'allowed', labels: { principal: 'ci' } });
  });
});

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
