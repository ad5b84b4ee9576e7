import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const A = 'token-identity-tenant-a-0001';
const A_HOST = 'token-identity-tenant-a-host1';
const B = 'token-identity-tenant-b-0001';
const ADMIN = 'token-identity-admin-000001';
const apiTokens = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: A_HOST, principal: 'alice-ci', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];
const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe('SessionOptions.principal and tenantId: a caller without admin may only name its own', () => {
  let fake: FakeProvider;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({ fake, config: { apiTokens } });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('a spoofed principal is 403 FORBIDDEN naming "principal"; nothing is created', async () => {
    const spoof = await request(t.url)
      .post('/v1/sessions')
      .set(as(A))
      .send({ sessionId: 'spoof-p', principal: 'bob' })
      .expect(403);
    expect(spoof.body.error).toMatchObject({ code: 'FORBIDDEN', details: { field: 'principal', scope: 'admin' } });
    expect(spoof.body.error.message).toContain('principal');
    await request(t.url).get('/v1/sessions/spoof-p').set(as(A)).expect(404);
    // host_direct is not admin: a principal of the same tenant is still someone else.
    const host = await request(t.url).post('/v1/sessions').set(as(A_HOST)).send({ principal: 'alice' }).expect(403);
    expect(host.body.error.details.field).toBe('principal');
  });

  it('a spoofed tenantId is 403 FORBIDDEN naming "tenantId", with or without a sessionId, before any lookup', async () => {
    for (const body of [
      { tenantId: 'tenant-b' },
      { sessionId: 'spoof-t', tenantId: 'tenant-b' },
      { sessionId: 'spoof-t', tenantId: 'tenant-b', resume: true },
    ]) {
      const spoof = await request(t.url).post('/v1/sessions').set(as(A)).send(body).expect(403);
      expect(spoof.body.error).toMatchObject({ code: 'FORBIDDEN', details: { field: 'tenantId', scope: 'admin' } });
    }
    // Both spoofed: the tenant is named first.
    const both = await request(t.url)
      .post('/v1/sessions')
      .set(as(A))
      .send({ tenantId: 'tenant-b', principal: 'bob' })
      .expect(403);
    expect(both.body.error.details.field).toBe('tenantId');
    const listed = (await request(t.url).get('/v1/sessions').set(as(B)).expect(200)).body.sessions as unknown[];
    expect(listed).toEqual([]);
  });

  it("the token's own values are accepted, and the events carry them", async () => {
    const created = await request(t.url)
      .post('/v1/sessions')
      .set(as(A))
      .send({ sessionId: 'own', principal: 'alice', tenantId: 'tenant-a', autoSave: true })
      .expect(201);
    expect(created.body.session.labels).toMatchObject({ tenantId: 'tenant-a', principal: 'alice' });
    fake.script({ text: 'hi' });
    await request(t.url).post('/v1/sessions/own/runs').set(as(A)).send({ input: 'hello', wait: true }).expect(200);
    const events = (await request(t.url).get('/v1/sessions/own/trace?limit=1000').set(as(A)).expect(200)).body
      .events as EventEnvelope[];
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) expect(event.metadata).toMatchObject({ tenant_id: 'tenant-a', principal: 'alice' });
    fake.assertDone();
  });

  it('resume may not relabel the session with another principal; the own principal relabels it', async () => {
    await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'relabel', autoSave: true }).expect(201);
    await request(t.url).delete('/v1/sessions/relabel').set(as(A)).expect(200);
    const spoof = await request(t.url)
      .post('/v1/sessions')
      .set(as(A))
      .send({ sessionId: 'relabel', resume: true, principal: 'root' })
      .expect(403);
    expect(spoof.body.error.details.field).toBe('principal');
    // Another principal of the tenant resumes it under its own name.
    const resumed = await request(t.url)
      .post('/v1/sessions')
      .set(as(A_HOST))
      .send({ sessionId: 'relabel', resume: true, principal: 'alice-ci' })
      .expect(201);
    expect(resumed.body).toMatchObject({
      resumed: true,
      session: { labels: { tenantId: 'tenant-a', principal: 'alice-ci' } },
    });
  });

  it('an admin may set both: a session of another tenant under another principal', async () => {
    const created = await request(t.url)
      .post('/v1/sessions')
      .set(as(ADMIN))
      .send({ sessionId: 'for-b', tenantId: 'tenant-b', principal: 'release-bot' })
      .expect(201);
    expect(created.body.session.labels).toMatchObject({ tenantId: 'tenant-b', principal: 'release-bot' });
    const seen = (await request(t.url).get('/v1/sessions/for-b').set(as(B)).expect(200)).body.session;
    expect(seen.labels).toMatchObject({ tenantId: 'tenant-b', principal: 'release-bot' });
  });
});

describe('tokenless loopback server: the anonymous caller holds every scope, as before', () => {
  it('may set principal and tenantId', async () => {
    const t = await startTestServer();
    try {
      const created = await request(t.url)
        .post('/v1/sessions')
        .send({ principal: 'ci-bot', tenantId: 'team-x' })
        .expect(201);
      expect(created.body.session.labels).toMatchObject({ tenantId: 'team-x', principal: 'ci-bot' });
    } finally {
      await t.close();
    }
  });
});
