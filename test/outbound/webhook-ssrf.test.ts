import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';

// One tenant with two tokens: a sessions-only one (what any tenant holds) and a host_direct one (the trusted host).
const TENANT = 'tenant-token-0123456789';
const HOST = 'host-token-0123456789';
const TOKENS = [
  { token: TENANT, principal: 'bot', tenantId: 'acme', scopes: ['sessions'] },
  { token: HOST, principal: 'ci', tenantId: 'acme', scopes: ['sessions', 'host_direct'] },
];

type ToolAnswer = { exitCode: number; output: string };

const as = (token: string) => ({ authorization: `Bearer ${token}` });

// Every way of writing a loopback, private or metadata address a tenant might try.
const TRICKS = [
  'http://127.0.0.1:9/hook',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://017700000001/',
  'http://127.1/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://0.0.0.0/',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/',
  'http://100.64.0.1/',
  'http://192.168.1.1/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://localhost/',
  'http://localhost./',
  'http://evil@127.0.0.1/',
  'http://[fe80::1%25eth0]/',
];

describe('webhooks a tenant names cannot reach loopback, private or metadata addresses', () => {
  let hooks: WebhookServer;
  let t: TestServer;
  let target: string;

  beforeAll(async () => {
    hooks = await startWebhookServer({
      '/continue': { body: { action: 'continue' } },
      '/allow': { body: { decision: 'allow' } },
      '/redirect': () => ({ status: 302, headers: { location: target }, body: '' }),
      '/target': { body: { action: 'continue', decision: 'allow' } },
    });
    target = hooks.url('/target');
    t = await startTestServer({ files: { 'a.txt': 'alpha\n' }, config: { apiTokens: TOKENS } });
  });
  afterAll(async () => {
    await t.close();
    await hooks.close();
  });

  async function session(token: string, options: Record<string, unknown> = {}): Promise<string> {
    return (await request(t.url).post('/v1/sessions').set(as(token)).send(options).expect(201)).body.session
      .id as string;
  }

  async function governedRead(token: string, id: string): Promise<ToolAnswer> {
    return (
      await request(t.url)
        .post(`/v1/sessions/${id}/tools/read/governed`)
        .set(as(token))
        .send({ args: { file_path: 'a.txt' } })
        .expect(200)
    ).body as ToolAnswer;
  }

  it.each(TRICKS)(
    'a sessions-only caller is refused %s as a hook, a budget host and a session option, naming the field',
    async (url) => {
      const id = await session(TENANT);
      const hook = await request(t.url)
        .post(`/v1/sessions/${id}/hooks`)
        .set(as(TENANT))
        .send({ event: 'pre_tool_use', endpoint: { type: 'webhook', url } });
      expect(hook.status).toBe(400);
      expect(hook.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: expect.stringMatching(/^(body\.)?endpoint\.url: /),
      });
      const budget = await request(t.url)
        .put(`/v1/sessions/${id}/budget-host`)
        .set(as(TENANT))
        .send({ type: 'webhook', url });
      expect(budget.status).toBe(400);
      expect(budget.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: expect.stringMatching(/^(body\.)?url: /),
      });
      const withHook = await request(t.url)
        .post('/v1/sessions')
        .set(as(TENANT))
        .send({ hooks: [{ event: 'pre_tool_use', endpoint: { type: 'webhook', url } }] });
      expect(withHook.status).toBe(400);
      expect(withHook.body.error.message).toMatch(/^(body\.)?hooks\.0\.endpoint\.url: /);
      const withBudget = await request(t.url).post('/v1/sessions').set(as(TENANT)).send({ budgetHost: { url } });
      expect(withBudget.status).toBe(400);
      expect(withBudget.body.error.message).toMatch(/^(body\.)?budgetHost\.url: /);
      // Nothing was registered: the session's tool calls are neither blocked nor sent anywhere.
      expect(await governedRead(TENANT, id)).toMatchObject({ exitCode: 0, output: expect.stringContaining('alpha') });
    },
  );

  it('the refusal says why and who may', async () => {
    const id = await session(TENANT);
    const refused = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .set(as(TENANT))
      .send({ event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'http://0x7f.1/' } })
      .expect(400);
    expect(refused.body.error).toMatchObject({
      message: expect.stringMatching(
        /endpoint\.url: 127\.0\.0\.1 is in the loopback 127\.0\.0\.0\/8 range.*host_direct.*outbound\.allow_private_networks/,
      ),
      details: { field: 'endpoint.url', refusal: 'private_address' },
    });
    const metadata = await request(t.url)
      .put(`/v1/sessions/${id}/budget-host`)
      .set(as(TENANT))
      .send({ type: 'webhook', url: 'http://169.254.169.254/' })
      .expect(400);
    expect(metadata.body.error).toMatchObject({
      message: expect.stringMatching(/^url: .*link-local 169\.254\.0\.0\/16 \(cloud metadata/),
      details: { field: 'url' },
    });
    expect(hooks.requests).toHaveLength(0);
  });

  it('a name that does not resolve now is accepted, and checked again at call time: the gate fails closed', async () => {
    const id = await session(TENANT);
    await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .set(as(TENANT))
      .send({ id: 'remote', event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'https://hooks.invalid/gate' } })
      .expect(201);
    const answer = await governedRead(TENANT, id);
    expect(answer.exitCode).toBe(1);
    expect(answer.output).toMatch(/blocked by hook remote.*hooks\.invalid does not resolve/);
  });

  it('a host_direct caller may name loopback webhooks, and they are called', async () => {
    const id = await session(HOST);
    await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .set(as(HOST))
      .send({ event: 'pre_tool_use', endpoint: { type: 'webhook', url: hooks.url('/continue') } })
      .expect(201);
    await request(t.url)
      .put(`/v1/sessions/${id}/budget-host`)
      .set(as(HOST))
      .send({ type: 'webhook', url: hooks.url('/allow') })
      .expect(200);
    expect(await governedRead(TENANT, id)).toMatchObject({ exitCode: 0 });
    expect(hooks.on('/continue').at(-1)?.body).toMatchObject({ kind: 'pre_tool_use', tool: 'read' });
    expect(hooks.on('/allow').at(-1)?.body).toMatchObject({ kind: 'budget_check', phase: 'tool' });
    const withOptions = await session(HOST, {
      hooks: [{ event: 'pre_tool_use', endpoint: { type: 'webhook', url: hooks.url('/continue') } }],
      budgetHost: { url: hooks.url('/allow') },
    });
    const before = hooks.requests.length;
    expect(await governedRead(HOST, withOptions)).toMatchObject({ exitCode: 0 });
    expect(hooks.requests.length).toBe(before + 2);
  });

  it('redirects are not followed: a webhook answering 302 to another loopback URL fails closed and the target sees nothing', async () => {
    const id = await session(HOST);
    await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .set(as(HOST))
      .send({ id: 'hop', event: 'pre_tool_use', endpoint: { type: 'webhook', url: hooks.url('/redirect') } })
      .expect(201);
    const blocked = await governedRead(HOST, id);
    expect(blocked.exitCode).toBe(1);
    expect(blocked.output).toMatch(
      /blocked by hook hop.*redirect \(HTTP 302 to http:\/\/127\.0\.0\.1:\d+\/target\); redirects are not followed/,
    );
    const budgeted = await session(HOST);
    await request(t.url)
      .put(`/v1/sessions/${budgeted}/budget-host`)
      .set(as(HOST))
      .send({ type: 'webhook', url: hooks.url('/redirect') })
      .expect(200);
    const denied = await governedRead(HOST, budgeted);
    expect(denied.exitCode).toBe(1);
    expect(denied.output).toMatch(/budget host failed.*redirects are not followed/);
    expect(hooks.on('/redirect').length).toBeGreaterThanOrEqual(2);
    expect(hooks.on('/target')).toHaveLength(0);
  });

  it("the creator's right is kept by a restored session, whoever restores it; a tenant's session never gains it", async () => {
    await request(t.url)
      .post('/v1/sessions')
      .set(as(HOST))
      .send({ sessionId: 'host-made', budgetHost: { url: hooks.url('/allow') } })
      .expect(201);
    await request(t.url).post('/v1/sessions/host-made/save').set(as(HOST)).expect(200);
    const second = await startTestServer({
      fake: t.fake,
      dataDir: t.dataDir,
      root: t.root,
      config: { apiTokens: TOKENS },
    });
    try {
      await request(second.url)
        .post('/v1/sessions')
        .set(as(TENANT))
        .send({ sessionId: 'host-made', resume: true })
        .expect(201);
      const before = hooks.on('/allow').length;
      const answer = (
        await request(second.url)
          .post('/v1/sessions/host-made/tools/read/governed')
          .set(as(TENANT))
          .send({ args: { file_path: 'a.txt' } })
          .expect(200)
      ).body as ToolAnswer;
      expect(answer.exitCode).toBe(0);
      expect(hooks.on('/allow').length).toBe(before + 1);
    } finally {
      await second.close();
    }
  });
});

describe('outbound.allow_private_networks', () => {
  let hooks: WebhookServer;
  beforeAll(async () => {
    hooks = await startWebhookServer({
      '/continue': { body: { action: 'continue' } },
      '/allow': { body: { decision: 'allow' } },
    });
  });
  afterAll(async () => {
    await hooks.close();
  });

  it('lets every caller name private addresses; a session made so is checked again at every call once the switch is off', async () => {
    const open = await startTestServer({
      files: { 'a.txt': 'alpha\n' },
      config: { apiTokens: TOKENS, outbound: { allowPrivateNetworks: true } },
    });
    let reopened: TestServer | undefined;
    try {
      const id = (
        await request(open.url)
          .post('/v1/sessions')
          .set(as(TENANT))
          .send({ sessionId: 'lan-bot', budgetHost: { url: hooks.url('/allow') } })
          .expect(201)
      ).body.session.id as string;
      await request(open.url)
        .post(`/v1/sessions/${id}/hooks`)
        .set(as(TENANT))
        .send({ event: 'pre_tool_use', endpoint: { type: 'webhook', url: hooks.url('/continue') } })
        .expect(201);
      const ok = (
        await request(open.url)
          .post(`/v1/sessions/${id}/tools/read/governed`)
          .set(as(TENANT))
          .send({ args: { file_path: 'a.txt' } })
          .expect(200)
      ).body as ToolAnswer;
      expect(ok.exitCode).toBe(0);
      expect(hooks.on('/continue')).toHaveLength(1);
      expect(hooks.on('/allow')).toHaveLength(1);
      await request(open.url).post(`/v1/sessions/${id}/save`).set(as(TENANT)).expect(200);
      await open.close();
      // The operator turns the switch off: the tenant's stored budget host is refused when it is called.
      reopened = await startTestServer({ dataDir: open.dataDir, root: open.root, config: { apiTokens: TOKENS } });
      await request(reopened.url)
        .post('/v1/sessions')
        .set(as(TENANT))
        .send({ sessionId: 'lan-bot', resume: true })
        .expect(201);
      const denied = (
        await request(reopened.url)
          .post('/v1/sessions/lan-bot/tools/read/governed')
          .set(as(TENANT))
          .send({ args: { file_path: 'a.txt' } })
          .expect(200)
      ).body as ToolAnswer;
      expect(denied.exitCode).toBe(1);
      expect(denied.output).toMatch(/budget host failed.*webhook url refused: 127\.0\.0\.1:\d+ is in the loopback/);
      expect(hooks.on('/allow')).toHaveLength(1);
    } finally {
      await reopened?.close();
    }
  });

  it('is read from an ACL config as outbound { allow_private_networks = true }, off by default, and must be a boolean', async () => {
    const on = await loadConfig({
      env: {},
      cwd: process.cwd(),
      configText: 'outbound {\n  allow_private_networks = true\n}\n',
    });
    expect(on.outbound).toEqual({ allowPrivateNetworks: true });
    expect((await loadConfig({ env: {}, cwd: process.cwd(), configText: 'port = 8080\n' })).outbound).toEqual({
      allowPrivateNetworks: false,
    });
    await expect(
      loadConfig({ env: {}, cwd: process.cwd(), configText: 'outbound {\n  allow_private_networks = "yes"\n}\n' }),
    ).rejects.toThrow(/outbound\.allow_?[pP]rivate_?[nN]etworks/);
  });
});
