import { createServer, type Server } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { noSandbox } from '../../src/runtime/sandbox/start-sandbox.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { toolMessage } from '../support/run-helpers.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP)
  console.warn('sandbox tenant tests skipped: bubblewrap (bwrap) is not installed or user namespaces are off');

const SESSIONS = 'token-sbx-sessions-only-0001';
const HOST = 'token-sbx-host-direct-000001';
const TOKENS = [
  { token: SESSIONS, principal: 'bot', tenantId: 'team', scopes: ['sessions'] },
  { token: HOST, principal: 'ci', tenantId: 'team', scopes: ['sessions', 'host_direct'] },
];
const as = (token: string) => (r: request.Test) => r.set('authorization', `Bearer ${token}`);

async function pendingConfirmation(
  url: string,
  id: string,
  token: string,
): Promise<{ argsDigest: string; toolId: string }> {
  for (let i = 0; i < 300; i++) {
    const list = (await as(token)(request(url).get(`/v1/sessions/${id}/confirmations`)).expect(200)).body.confirmations;
    if (list.length > 0) return list[0];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no pending confirmation');
}

async function waitRun(url: string, id: string, runId: string, token: string): Promise<{ status: string }> {
  for (let i = 0; i < 500; i++) {
    const run = (await as(token)(request(url).get(`/v1/sessions/${id}/runs/${runId}`)).expect(200)).body.run ?? {};
    if (['completed', 'failed', 'cancelled'].includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('run did not finish');
}

describe.skipIf(!HAVE_BWRAP)('sandbox with API tokens (mode required by default)', () => {
  let t: TestServer;
  let listener: Server;
  let port = 0;
  beforeAll(async () => {
    process.env.DATABASE_URL = 'postgres://u:tenant-secret@h/db';
    t = await startTestServer({ config: { apiTokens: TOKENS, defaultPermissionPolicy: undefined } });
    listener = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    delete process.env.DATABASE_URL;
    await t?.close();
    await new Promise((resolve) => listener?.close(resolve));
  });

  it('a sessions-only tenant that approves its own bash call runs it, but contained', async () => {
    const id = (
      await as(SESSIONS)(request(t.url).post('/v1/sessions'))
        .send({ confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 } })
        .expect(201)
    ).body.session.id;
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'c_self',
            name: 'bash',
            arguments: { command: 'id -un; cat /proc/$PPID/environ | base64 -w0; echo; env | base64 -w0' },
          },
        ],
      },
      { text: 'done' },
    );
    const started = await as(SESSIONS)(request(t.url).post(`/v1/sessions/${id}/runs`))
      .send({ input: 'go' })
      .expect(202);
    const pending = await pendingConfirmation(t.url, id, SESSIONS);
    await as(SESSIONS)(request(t.url).post(`/v1/sessions/${id}/confirmations/${pending.toolId}`))
      .send({ approved: true, argsDigest: pending.argsDigest })
      .expect(200);
    expect((await waitRun(t.url, id, started.body.runId, SESSIONS)).status).toBe('completed');
    const [user, ...encoded] = toolMessage(t, 'c_self').trim().split('\n');
    expect(user).toBe('sandbox');
    const decoded = encoded.map((line) => Buffer.from(line, 'base64').toString('utf8')).join('\n');
    expect(decoded).toContain('PATH=');
    expect(decoded).not.toMatch(/DATABASE_URL|tenant-secret|token-sbx|A3S_/);
  });

  it('network "allowed" needs host_direct (403 for a sessions-only tenant) and then reaches loopback', async () => {
    const refused = await as(SESSIONS)(request(t.url).post('/v1/sessions'))
      .send({ sandboxNetwork: 'allowed' })
      .expect(403);
    expect(refused.body.error).toMatchObject({
      code: 'FORBIDDEN',
      details: { field: 'sandboxNetwork', scope: 'host_direct' },
    });
    const id = (await as(HOST)(request(t.url).post('/v1/sessions')).send({ sandboxNetwork: 'allowed' }).expect(201))
      .body.session.id;
    const info = (await as(HOST)(request(t.url).get(`/v1/sessions/${id}`)).expect(200)).body;
    expect(info.session ?? info).toMatchObject({ sandbox: 'bwrap', sandboxNetwork: 'allowed' });
    const out = (
      await as(HOST)(request(t.url).post(`/v1/sessions/${id}/tools/bash`))
        .send({ args: { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3` } })
        .expect(200)
    ).body;
    expect(out.output).toContain('hello from the host');
    const closed = (await as(HOST)(request(t.url).post('/v1/sessions')).send({}).expect(201)).body.session.id;
    const none = (
      await as(HOST)(request(t.url).post(`/v1/sessions/${closed}/tools/bash`))
        .send({ args: { command: `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo OPEN || echo CLOSED` } })
        .expect(200)
    ).body;
    expect(none.output).toContain('CLOSED');
  });

  it('commandEnv adds variables; PATH, HOME, GIT_* and LD_* are refused naming the field', async () => {
    const id = (
      await as(SESSIONS)(request(t.url).post('/v1/sessions'))
        .send({ commandEnv: { MY_FLAG: 'on' } })
        .expect(201)
    ).body.session.id;
    // A host-direct call of the same tenant (still in the sandbox: sandbox.host_direct defaults to "sandbox").
    const out = (
      await as(HOST)(request(t.url).post(`/v1/sessions/${id}/tools/bash`))
        .send({ args: { command: 'echo "flag=$MY_FLAG home=$HOME"; id -un' } })
        .expect(200)
    ).body;
    expect(out.output).toContain('flag=on home=/home/sandbox\nsandbox');
    for (const name of ['PATH', 'HOME', 'GIT_DIR', 'LD_PRELOAD', 'BASH_ENV']) {
      const bad = await as(SESSIONS)(request(t.url).post('/v1/sessions'))
        .send({ commandEnv: { [name]: '/x' } })
        .expect(400);
      expect(bad.body.error.details.field).toBe(`commandEnv.${name}`);
    }
  });
});

describe('without a working sandbox', () => {
  let server: RunningServer;
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
    const config = CodeConfigSchema.parse({
      defaultModel: 'openai/test-model',
      providers: { openai: { apiKey: 'sk-test', baseUrl: fake.baseUrl, maxRetries: 0 } },
      dataDir: tempDir('a3s-data-'),
      host: '127.0.0.1',
      port: 0,
      workspaceRoots: [tempDir('a3s-ws-')],
      logLevel: 'silent',
      apiTokens: TOKENS,
      sandbox: { mode: 'auto' },
      defaultPermissionPolicy: { enabled: false },
    });
    server = await startServer(config, { logger: pino({ level: 'silent' }), sandbox: await noSandbox(config) });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('refuses bash and git for sessions created without host_direct, even when the policy allows them', async () => {
    expect((await request(server.url).get('/readyz').expect(200)).body.sandbox).toBe('none');
    const id = (await as(SESSIONS)(request(server.url).post('/v1/sessions')).send({}).expect(201)).body.session.id;
    fake.script(
      {
        toolCalls: [
          { id: 'c_b', name: 'bash', arguments: { command: 'echo ran-on-host' } },
          { id: 'c_g', name: 'git', arguments: { command: 'status' } },
        ],
      },
      { text: 'done' },
    );
    const run = await as(SESSIONS)(request(server.url).post(`/v1/sessions/${id}/runs`))
      .send({ input: 'go', wait: true })
      .expect(200);
    expect(run.body.run.status).toBe('completed');
    const find = (callId: string) =>
      String(
        fake.requests
          .flatMap((r) => r.body.messages as { role: string; tool_call_id?: string; content?: unknown }[])
          .find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content,
      );
    expect(find('c_b')).toContain('no working sandbox');
    expect(find('c_b')).not.toContain('ran-on-host');
    expect(find('c_g')).toContain('no working sandbox');
  });

  it('a host_direct creator still runs commands (on the host)', async () => {
    const id = (await as(HOST)(request(server.url).post('/v1/sessions')).send({}).expect(201)).body.session.id;
    const info = (await as(HOST)(request(server.url).get(`/v1/sessions/${id}`)).expect(200)).body;
    expect(info.session ?? info).toMatchObject({ sandbox: 'none' });
    const out = (
      await as(HOST)(request(server.url).post(`/v1/sessions/${id}/tools/bash/governed`))
        .send({ args: { command: 'echo on-host' } })
        .expect(200)
    ).body;
    expect(out.output).toContain('on-host');
  });
});
