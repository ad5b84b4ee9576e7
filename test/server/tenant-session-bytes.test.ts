import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_OVERHEAD_BYTES } from '../../src/config/session-bytes-limit.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { useTestServers } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const A = 'token-session-bytes-tenant-a1';
const B = 'token-session-bytes-tenant-b1';
const ADMIN = 'token-session-bytes-admin-001';
const apiTokens = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Large session options (~100 KB of prompt slots), all of one size: ids are `<prefix>-000` ... */
const large = (prefix: string, i: number) => ({
  sessionId: `${prefix}-${String(i).padStart(3, '0')}`,
  guidelines: 'g'.repeat(50_000),
  extra: 'e'.repeat(50_000),
});
/** What one such session counts against its tenant when created. */
const PER_SESSION = SESSION_OVERHEAD_BYTES + bytesOf(large('big', 0));
const SESSIONS = 200;

async function createAll(url: string, token: string, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, (_, j) =>
        request(url)
          .post('/v1/sessions')
          .set(as(token))
          .send(large(prefix, i + j))
          .expect(201),
      ),
    );
  }
}

describe('limits.max_session_bytes_per_tenant over HTTP: 429 QUOTA_EXCEEDED with Retry-After, per tenant, freed on close', () => {
  let fake: FakeProvider;
  let t: TestServer;
  // Room for exactly SESSIONS sessions of the large options, and a little slack (less than an empty session's overhead).
  const limit = SESSIONS * PER_SESSION + 1000;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({ fake, config: { apiTokens, limits: { maxSessionBytesPerTenant: limit } } });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it(`${SESSIONS} sessions of large options fill tenant-a; the next is refused naming the limit while tenant-b still creates`, async () => {
    await createAll(t.url, A, 'big', SESSIONS);
    const over = await request(t.url).post('/v1/sessions').set(as(A)).send(large('big', SESSIONS)).expect(429);
    expect(over.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: {
        quota: 'maxSessionBytesPerTenant',
        limit,
        used: SESSIONS * PER_SESSION,
        requested: PER_SESSION,
        tenantId: 'tenant-a',
        retryAfterSeconds: 1,
      },
    });
    expect(over.headers['retry-after']).toBe('1');
    expect(over.body.error.message).toContain('limits.max_session_bytes_per_tenant');
    // A small session does not fit either: the tenant is full, not the options.
    await request(t.url).post('/v1/sessions').set(as(A)).send({}).expect(429);
    await request(t.url).get(`/v1/sessions/big-${SESSIONS}`).set(as(A)).expect(404);
    // The other tenant is not affected.
    await request(t.url).post('/v1/sessions').set(as(B)).send(large('bob', 0)).expect(201);
    const metrics = (await request(t.url).get('/metrics').set(as(ADMIN)).expect(200)).text;
    expect(metrics).toContain(`a3s_tenant_session_bytes{tenant="tenant-a"} ${SESSIONS * PER_SESSION}`);
    expect(metrics).toContain(`a3s_tenant_session_bytes{tenant="tenant-b"} ${PER_SESSION}`);
  });

  it('closing a session frees its bytes at once; passivating one does too, and hydrating it counts it again', async () => {
    await request(t.url).delete('/v1/sessions/big-000').set(as(A)).expect(200);
    await request(t.url).post('/v1/sessions').set(as(A)).send(large('big', SESSIONS)).expect(201);
    await request(t.url)
      .post('/v1/sessions')
      .set(as(A))
      .send(large('big', SESSIONS + 1))
      .expect(429);
    // Evicted (passivated) from memory: its room is free until a request hydrates it.
    await t.server.ctx.agent.passivate(sessionKey('tenant-a', 'big-001'), 0);
    await request(t.url)
      .post('/v1/sessions')
      .set(as(A))
      .send(large('big', SESSIONS + 1))
      .expect(201);
    const again = await request(t.url).get('/v1/sessions/big-001').set(as(A)).expect(429);
    expect(again.body.error.details).toMatchObject({ quota: 'maxSessionBytesPerTenant', tenantId: 'tenant-a' });
    // Resuming it (restoring it from the store) is bounded the same way.
    const resume = await request(t.url)
      .post('/v1/sessions')
      .set(as(A))
      .send({ sessionId: 'big-001', resume: true })
      .expect(429);
    expect(resume.headers['retry-after']).toBe('1');
    await request(t.url)
      .delete(`/v1/sessions/big-${SESSIONS + 1}`)
      .set(as(A))
      .expect(200);
    await request(t.url).get('/v1/sessions/big-001').set(as(A)).expect(200);
  });
});

describe('limits.max_session_bytes_per_tenant counts what runs add', () => {
  const start = useTestServers();

  it("a session's transcript after its run counts: a long answer fills the tenant's room", async () => {
    const t = await start({
      config: {
        apiTokens,
        limits: { maxSessionOptionsBytes: 4096, maxSessionBytesPerTenant: 3 * SESSION_OVERHEAD_BYTES + 40_000 },
      },
    });
    await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'chatty' }).expect(201);
    await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'second' }).expect(201);
    t.fake.script({ text: 'a'.repeat(40_000) });
    await request(t.url)
      .post('/v1/sessions/chatty/runs')
      .set(as(A))
      .send({ input: 'a long answer please', wait: true })
      .expect(200);
    const over = await request(t.url).post('/v1/sessions').set(as(A)).send({}).expect(429);
    expect(over.body.error.details.used).toBeGreaterThan(2 * SESSION_OVERHEAD_BYTES + 40_000);
    await request(t.url).delete('/v1/sessions/chatty').set(as(A)).expect(200);
    await request(t.url).post('/v1/sessions').set(as(A)).send({}).expect(201);
    t.fake.assertDone();
  });

  it('a tokenless server is unbounded unless the key is set', async () => {
    const t = await start();
    expect(t.server.ctx.agent.deps.sessionBytes).toBeUndefined();
    await request(t.url).post('/v1/sessions').send(large('free', 0)).expect(201);
  });
});
