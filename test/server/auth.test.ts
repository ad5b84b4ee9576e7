import { createHash } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { assertSafeBind } from '../../src/server/start-server.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

const A = 'token-tenant-a-sessions-0001';
const A_HOST = 'token-tenant-a-hostdirect-01';
const B = 'token-tenant-b-sessions-0001';
const ADMIN = 'token-admin-all-tenants-0001';
const HASHED = 'token-from-a-sha256-digest-01';

describe('auth: tokens, scopes and tenant isolation', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      files: { 'a.txt': 'secret of tenant a\n' },
      config: {
        apiTokens: [
          { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
          { token: A_HOST, principal: 'alice-ci', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
          { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
          { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
          {
            tokenSha256: createHash('sha256').update(HASHED).digest('hex'),
            principal: 'hashed',
            tenantId: 'tenant-a',
            scopes: ['sessions'],
          },
        ],
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('needs a valid bearer token on every route but the health probes', async () => {
    await request(t.url).get('/healthz').expect(200);
    await request(t.url).get('/readyz').expect(200);
    const missing = await request(t.url).get('/v1/sessions').expect(401);
    expect(missing.body.error.code).toBe('UNAUTHORIZED');
    await request(t.url).get('/v1/sessions').set('authorization', 'Bearer nope-nope-nope-nope').expect(401);
    await request(t.url).get('/v1/sessions').set('authorization', `Basic ${A}`).expect(401);
    await request(t.url).get('/v1/sessions').set('authorization', `Bearer ${HASHED}`).expect(200);
  });

  it("keeps tenants apart: another tenant's session is not found on every route", async () => {
    const created = await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${A}`)
      .send({ sessionId: 'a-private' })
      .expect(201);
    expect(created.body.session.labels).toMatchObject({ tenantId: 'tenant-a', principal: 'alice' });
    t.fake.script({ text: 'hi a' });
    const run = await request(t.url)
      .post('/v1/sessions/a-private/runs')
      .set('authorization', `Bearer ${A}`)
      .send({ input: 'hello', wait: true })
      .expect(200);
    const runId = run.body.runId;
    const asB = (r: request.Test) => r.set('authorization', `Bearer ${B}`).expect(404);
    await asB(request(t.url).get('/v1/sessions/a-private'));
    await asB(request(t.url).get('/v1/sessions/a-private/history'));
    await asB(request(t.url).get('/v1/sessions/a-private/runs'));
    await asB(request(t.url).get(`/v1/sessions/a-private/runs/${runId}`));
    await asB(request(t.url).get(`/v1/sessions/a-private/runs/${runId}/events`));
    await asB(request(t.url).post(`/v1/sessions/a-private/runs/${runId}/cancel`));
    await asB(request(t.url).post('/v1/sessions/a-private/runs').send({ input: 'steal' }));
    await asB(request(t.url).post('/v1/sessions/a-private/save'));
    await asB(request(t.url).get('/v1/sessions/a-private/tools'));
    await asB(request(t.url).delete('/v1/sessions/a-private'));
    const resume = await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${B}`)
      .send({ sessionId: 'a-private', resume: true })
      .expect(404);
    expect(resume.body.error.code).toBe('SESSION_NOT_FOUND');
    const listB = await request(t.url).get('/v1/sessions').set('authorization', `Bearer ${B}`).expect(200);
    expect(listB.body.sessions.map((s: { id: string }) => s.id)).not.toContain('a-private');
    // A label naming another tenant is refused, not a way in.
    const spoof = await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${B}`)
      .send({ tenantId: 'tenant-a' })
      .expect(403);
    expect(spoof.body.error).toMatchObject({ code: 'FORBIDDEN', details: { field: 'tenantId' } });
    // Admin sees every tenant.
    const listAdmin = await request(t.url).get('/v1/sessions').set('authorization', `Bearer ${ADMIN}`).expect(200);
    expect(listAdmin.body.sessions.map((s: { id: string }) => s.id)).toContain('a-private');
    t.fake.assertDone();
  });

  it('does not tell another tenant that a session was closed: 404 on every route, 4004 on the WebSocket', async () => {
    await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${A}`)
      .send({ sessionId: 'a-closed' })
      .expect(201);
    await request(t.url).delete('/v1/sessions/a-closed').set('authorization', `Bearer ${A}`).expect(200);
    const asB = (r: request.Test) => r.set('authorization', `Bearer ${B}`).expect(404);
    await asB(request(t.url).get('/v1/sessions/a-closed'));
    await asB(request(t.url).get('/v1/sessions/a-closed/history'));
    await asB(request(t.url).delete('/v1/sessions/a-closed'));
    await asB(request(t.url).post('/v1/sessions/a-closed/runs').send({ input: 'x' }));
    await asB(request(t.url).post('/v1/sessions/a-closed/runs/run_x/resume').send({}));
    const ws = await subscribe(t.url, 'a-closed', { after: 0, token: B });
    expect((await ws.waitClosed()).code).toBe(4004);
    // The owner's tenant (and admin) still learn it is closed.
    await request(t.url).get('/v1/sessions/a-closed').set('authorization', `Bearer ${A}`).expect(410);
    await request(t.url)
      .get('/v1/sessions/a-closed?tenantId=tenant-a')
      .set('authorization', `Bearer ${ADMIN}`)
      .expect(410);
    await request(t.url).delete('/v1/sessions/a-closed').set('authorization', `Bearer ${A}`).expect(200);
  });

  it('needs the host_direct scope for host-direct tool calls', async () => {
    await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${A}`)
      .send({ sessionId: 'a-tools' })
      .expect(201);
    const denied = await request(t.url)
      .post('/v1/sessions/a-tools/tools/bash')
      .set('authorization', `Bearer ${A}`)
      .send({ args: { command: 'echo pwned' } })
      .expect(403);
    expect(denied.body.error).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'host_direct' } });
    const other = await request(t.url)
      .post('/v1/sessions/a-tools/tools/read')
      .set('authorization', `Bearer ${B}`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(403);
    expect(other.body.error.code).toBe('FORBIDDEN');
    const ok = await request(t.url)
      .post('/v1/sessions/a-tools/tools/bash')
      .set('authorization', `Bearer ${A_HOST}`)
      .send({ args: { command: 'echo hello' } })
      .expect(200);
    expect(ok.body).toMatchObject({ exitCode: 0 });
    expect(ok.body.output).toContain('hello');
  });

  it('refuses to listen beyond loopback without tokens', () => {
    expect(() => assertSafeBind(CodeConfigSchema.parse({ host: '0.0.0.0' }))).toThrow(/without API tokens/);
    expect(() => assertSafeBind(CodeConfigSchema.parse({ host: '127.0.0.1' }))).not.toThrow();
    expect(() =>
      assertSafeBind(
        CodeConfigSchema.parse({
          host: '0.0.0.0',
          apiTokens: [{ token: A, principal: 'p', tenantId: 't', scopes: ['sessions'] }],
        }),
      ),
    ).not.toThrow();
  });
});
