import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, tempDir, writeFiles, type TestServer } from '../support/test-server.js';
import { A, A_HOST, ADMIN, as, B, conversation, ECHO_SERVER, TOKENS, type Info } from './fork-helpers.js';

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

  it('bad bodies are 400 naming the fields; an unknown run is 404; a copy without a captured tree is 409', async () => {
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
    // The parent's runs changed no file (no tool, then only `ls`): there is no tree to copy (test/changes/fork-copy*).
    expect((await fork(A, 'parent', { workspace: 'copy' }).expect(409)).body.error).toMatchObject({
      code: 'FORK_TREE_UNAVAILABLE',
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
