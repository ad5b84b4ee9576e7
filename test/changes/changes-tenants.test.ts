import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { noSandbox } from '../../src/runtime/sandbox/start-sandbox.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { bash, patchText } from './changes-helpers.js';

const MINE = 'token-changes-team-a-00000001';
const THEIRS = 'token-changes-team-b-00000001';
const HOST = 'token-changes-host-direct-0001';
const TOKENS = [
  { token: MINE, principal: 'a', tenantId: 'team-a', scopes: ['sessions'] },
  { token: THEIRS, principal: 'b', tenantId: 'team-b', scopes: ['sessions'] },
  { token: HOST, principal: 'h', tenantId: 'team-a', scopes: ['sessions', 'host_direct'] },
];
const as = (token: string) => (r: request.Test) => r.set('authorization', `Bearer ${token}`);

describe.skipIf(!bwrapWorks())('change sets are the tenant’s own', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { apiTokens: TOKENS } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("another tenant's session and run ids answer 404", async () => {
    // The tenant's own directory (one per tenant when several tenants have tokens), made by the server.
    const id = (await as(MINE)(request(t.url).post('/v1/sessions')).send({}).expect(201)).body.session.id as string;
    t.fake.script({ toolCalls: [bash('t1', 'echo a > a.txt')] }, { text: 'ok' });
    const run = (
      await as(MINE)(request(t.url).post(`/v1/sessions/${id}/runs`))
        .send({ input: 'go', wait: true })
        .expect(200)
    ).body;
    const mine = (await as(MINE)(request(t.url).get(`/v1/sessions/${id}/runs/${run.runId}/changes`)).expect(200)).body;
    expect(mine.files).toMatchObject([{ path: 'a.txt', status: 'added' }]);
    const theirs = await as(THEIRS)(request(t.url).get(`/v1/sessions/${id}/runs/${run.runId}/changes`)).expect(404);
    expect(theirs.body.error.code).toBe('SESSION_NOT_FOUND');
    const range = await as(THEIRS)(
      request(t.url).get(`/v1/sessions/${id}/changes`).query({ from: run.runId, to: run.runId }),
    ).expect(404);
    expect(range.body.error.code).toBe('SESSION_NOT_FOUND');
  });
});

describe('without a working sandbox', () => {
  let server: RunningServer;
  let fake: FakeProvider;
  let root = '';
  beforeAll(async () => {
    fake = await startFakeProvider();
    root = tempDir('a3s-ws-');
    const config = CodeConfigSchema.parse({
      defaultModel: 'openai/test-model',
      providers: { openai: { apiKey: 'sk-test', baseUrl: fake.baseUrl, maxRetries: 0 } },
      dataDir: tempDir('a3s-data-'),
      host: '127.0.0.1',
      port: 0,
      workspaceRoots: [root],
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

  it('a session whose commands are refused captures nothing: 422 commands_refused', async () => {
    const id = (await as(MINE)(request(server.url).post('/v1/sessions')).send({}).expect(201)).body.session.id;
    fake.script({ toolCalls: [bash('r1', 'echo x > x.txt')] }, { text: 'refused' });
    const run = (
      await as(MINE)(request(server.url).post(`/v1/sessions/${id}/runs`))
        .send({ input: 'go', wait: true })
        .expect(200)
    ).body;
    const body = (await as(MINE)(request(server.url).get(`/v1/sessions/${id}/runs/${run.runId}/changes`)).expect(422))
      .body;
    expect(body.error).toMatchObject({ code: 'NO_CHANGE_SET', details: { reason: 'commands_refused' } });
  });

  it('a host_direct session captures on the host with the same hardening: a hostile workspace runs nothing', async () => {
    const id = (await as(HOST)(request(server.url).post('/v1/sessions')).send({}).expect(201)).body.session.id;
    const info = (await as(HOST)(request(server.url).get(`/v1/sessions/${id}`)).expect(200)).body;
    const ws = (info.session ?? info).workspace as string;
    const marker = join(tempDir('a3s-marker-'), 'MARKER');
    const evil = join(root, 'evil.sh');
    writeFileSync(evil, `#!/bin/sh\ntouch ${marker}\ncat\n`, { mode: 0o755 });
    execFileSync('git', ['init', '-q', '.'], { cwd: ws });
    writeFileSync(
      join(ws, '.git', 'config'),
      `[core]\n\tfsmonitor = ${evil}\n[filter "evil"]\n\tclean = ${evil}\n\trequired = true\n[diff "evil"]\n\ttextconv = ${evil}\n`,
    );
    writeFileSync(join(ws, '.gitattributes'), '* filter=evil diff=evil\n');
    writeFileSync(join(ws, '.gitignore'), '*\n');
    fake.script({ toolCalls: [bash('h1', 'echo hidden > hidden.txt')] }, { text: 'ok' });
    const run = (
      await as(HOST)(request(server.url).post(`/v1/sessions/${id}/runs`))
        .send({ input: 'go', wait: true })
        .expect(200)
    ).body;
    const changes = (
      await as(HOST)(request(server.url).get(`/v1/sessions/${id}/runs/${run.runId}/changes`)).expect(200)
    ).body;
    expect(changes.files).toMatchObject([{ path: 'hidden.txt', status: 'added' }]);
    expect(patchText(changes)).toContain('+hidden');
    expect(existsSync(marker)).toBe(false);
  });

  it('revert: a refused session is 422 commands_refused; a host_direct one restores on the host, running nothing', async () => {
    const refused = (await as(MINE)(request(server.url).post('/v1/sessions')).send({}).expect(201)).body.session.id;
    fake.script({ toolCalls: [bash('v1', 'echo x > x.txt')] }, { text: 'refused' });
    const first = (
      await as(MINE)(request(server.url).post(`/v1/sessions/${refused}/runs`))
        .send({ input: 'go', wait: true })
        .expect(200)
    ).body;
    const no = (
      await as(MINE)(request(server.url).post(`/v1/sessions/${refused}/runs/${first.runId}/revert`))
        .send({})
        .expect(422)
    ).body;
    expect(no.error).toMatchObject({ code: 'NO_CHANGE_SET', details: { reason: 'commands_refused' } });

    const id = (await as(HOST)(request(server.url).post('/v1/sessions')).send({}).expect(201)).body.session.id;
    const info = (await as(HOST)(request(server.url).get(`/v1/sessions/${id}`)).expect(200)).body;
    const ws = (info.session ?? info).workspace as string;
    const marker = join(tempDir('a3s-marker-'), 'MARKER');
    const evil = join(root, 'evil-revert.sh');
    writeFileSync(evil, `#!/bin/sh\ntouch ${marker}\ncat\n`, { mode: 0o755 });
    execFileSync('git', ['init', '-q', '.'], { cwd: ws });
    writeFileSync(join(ws, '.git', 'config'), `[core]\n\tfsmonitor = ${evil}\n[filter "evil"]\n\tsmudge = ${evil}\n`);
    writeFileSync(join(ws, '.gitattributes'), '* filter=evil\n');
    writeFileSync(join(ws, 'a.txt'), 'a0\n');
    fake.script({ toolCalls: [bash('v2', 'echo a1 > a.txt && echo b > b.txt')] }, { text: 'ok' });
    const run = (
      await as(HOST)(request(server.url).post(`/v1/sessions/${id}/runs`))
        .send({ input: 'go', wait: true })
        .expect(200)
    ).body;
    const reverted = (
      await as(HOST)(request(server.url).post(`/v1/sessions/${id}/runs/${run.runId}/revert`))
        .send({})
        .expect(200)
    ).body;
    expect(reverted.files).toEqual([
      { path: 'a.txt', action: 'restored' },
      { path: 'b.txt', action: 'deleted' },
    ]);
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a0\n');
    expect(existsSync(join(ws, 'b.txt'))).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });
});
