import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const SESSIONS = 'token-floor-sessions-only-01';
const HOST = 'token-floor-host-direct-0001';
const ADMIN = 'token-floor-admin-00000001';
const TOKENS = [
  { token: SESSIONS, principal: 'bot', tenantId: 'team', scopes: ['sessions'] },
  { token: HOST, principal: 'ci', tenantId: 'team', scopes: ['sessions', 'host_direct'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];
// The operator allows reading and listing; anything else is denied.
const OPERATOR_POLICY = { allow: ['read', 'ls'], defaultDecision: 'deny' };

interface ToolAnswer {
  output: string;
  exitCode: number;
}

describe("the operator's permission policy bounds sessions created without host_direct", () => {
  let t: TestServer;
  const as = (token: string) => (r: request.Test) => r.set('authorization', `Bearer ${token}`);
  const governed = async (
    token: string,
    session: string,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<ToolAnswer> =>
    (
      await as(token)(request(t.url).post(`/v1/sessions/${session}/tools/${tool}/governed`))
        .send({ args })
        .expect(200)
    ).body as ToolAnswer;

  beforeAll(async () => {
    t = await startTestServer({
      files: { 'team/a.txt': 'alpha\n' },
      config: { apiTokens: TOKENS, defaultPermissionPolicy: OPERATOR_POLICY },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a sessions-only caller cannot switch the policy off: the stricter verdict wins, naming the operator rule', async () => {
    await as(SESSIONS)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'open-bot', permissionPolicy: { enabled: false } })
      .expect(201);
    const bash = await governed(SESSIONS, 'open-bot', 'bash', { command: 'echo pwned > pwned.txt' });
    expect(bash.exitCode).toBe(1);
    expect(bash.output).toBe(
      'Tool bash was denied by permission rule "operator policy: defaultDecision" (permissionPolicy).',
    );
    // A policy that allows everything explicitly fares no better, on the model's path too.
    await as(SESSIONS)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'allow-bot', permissionPolicy: { allow: ['bash', 'program'], defaultDecision: 'allow' } })
      .expect(201);
    expect((await governed(SESSIONS, 'allow-bot', 'bash', { command: 'echo pwned' })).output).toContain(
      'operator policy: defaultDecision',
    );
    t.fake.script({ toolCalls: [{ name: 'bash', arguments: { command: 'echo from-model' } }] }, { text: 'done' });
    const run = await as(SESSIONS)(request(t.url).post('/v1/sessions/allow-bot/runs'))
      .send({ input: 'run it', wait: true })
      .expect(200);
    expect(run.body.result.text).toBe('done');
    const toolMessage = t.fake.requests[1]?.body.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool' });
    expect(String(toolMessage?.content)).toContain('operator policy: defaultDecision');
    t.fake.assertDone();
    // What both allow still runs.
    expect(await governed(SESSIONS, 'open-bot', 'read', { file_path: 'a.txt' })).toMatchObject({
      exitCode: 0,
      output: '     1\talpha',
    });
  });

  it('a bounded session may still tighten the operator policy', async () => {
    await as(SESSIONS)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'tight-bot', permissionPolicy: { deny: ['ls'], allow: ['read'], defaultDecision: 'deny' } })
      .expect(201);
    expect((await governed(SESSIONS, 'tight-bot', 'ls', {})).output).toBe(
      'Tool ls was denied by permission rule "ls" (permissionPolicy).',
    );
    expect((await governed(SESSIONS, 'tight-bot', 'read', { file_path: 'a.txt' })).exitCode).toBe(0);
    // Tools the operator or the session deny for every argument are hidden from the model.
    t.fake.script({ text: 'ok' });
    await as(SESSIONS)(request(t.url).post('/v1/sessions/tight-bot/runs'))
      .send({ input: 'hi', wait: true })
      .expect(200);
    const offered = (t.fake.requests.at(-1)?.body.tools as Array<{ function: { name: string } }> | undefined)?.map(
      (tool) => tool.function.name,
    );
    expect(offered).toContain('read');
    expect(offered).not.toContain('ls');
    t.fake.assertDone();
  });

  it('host_direct and admin callers replace the operator policy, as before', async () => {
    await as(HOST)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'ci-open', permissionPolicy: { enabled: false } })
      .expect(201);
    expect(await governed(HOST, 'ci-open', 'bash', { command: 'echo allowed' })).toMatchObject({
      exitCode: 0,
      output: expect.stringContaining('allowed'),
    });
    await as(ADMIN)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'admin-open', permissionPolicy: { enabled: false } })
      .expect(201);
    expect((await governed(ADMIN, 'admin-open', 'bash', { command: 'echo admin' })).exitCode).toBe(0);
  });

  it('auto_approve confirmation needs host_direct', async () => {
    const refused = await as(SESSIONS)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'auto-bot', confirmationPolicy: { enabled: true, timeoutAction: 'auto_approve' } })
      .expect(403);
    expect(refused.body.error).toMatchObject({
      code: 'FORBIDDEN',
      details: { field: 'confirmationPolicy.timeoutAction', scope: 'host_direct' },
    });
    await as(SESSIONS)(request(t.url).get('/v1/sessions/auto-bot')).expect(404);
    await as(SESSIONS)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'reject-bot', confirmationPolicy: { enabled: true, timeoutAction: 'reject' } })
      .expect(201);
    await as(HOST)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'auto-ci', confirmationPolicy: { enabled: true, timeoutAction: 'auto_approve' } })
      .expect(201);
  });

  it('the bound survives a restart, whoever resumes the session', async () => {
    await as(SESSIONS)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'saved-bot', autoSave: true, permissionPolicy: { enabled: false } })
      .expect(201);
    await as(SESSIONS)(request(t.url).post('/v1/sessions/saved-bot/save')).expect(200);
    const second = await startTestServer({
      fake: t.fake,
      dataDir: t.dataDir,
      root: t.root,
      config: { apiTokens: TOKENS, defaultPermissionPolicy: OPERATOR_POLICY },
    });
    try {
      await as(ADMIN)(request(second.url).post('/v1/sessions'))
        .send({ sessionId: 'saved-bot', tenantId: 'team', resume: true })
        .expect(201);
      const answer = (
        await as(ADMIN)(request(second.url).post('/v1/sessions/saved-bot/tools/bash/governed?tenantId=team'))
          .send({ args: { command: 'echo pwned' } })
          .expect(200)
      ).body as ToolAnswer;
      expect(answer.output).toContain('operator policy: defaultDecision');
    } finally {
      await second.close();
    }
  });
});
