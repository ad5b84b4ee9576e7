import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const A = 'token-tenant-a-quota-0001';
const B = 'token-tenant-b-quota-0001';
const C = 'token-tenant-c-quota-0001';
const ADMIN = 'token-admin-quota-0000001';
const apiTokens = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  { token: C, principal: 'carol', tenantId: 'tenant-c', scopes: ['sessions'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];
const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe('per-tenant quotas over HTTP: 429 QUOTA_EXCEEDED naming the quota, Retry-After, /metrics', () => {
  let fake: FakeProvider;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: {
        apiTokens,
        tenantQuotas: {
          'tenant-a': { maxOpenSessions: 2, maxConcurrentRuns: 1, maxRunsPerMinute: 3 },
          'tenant-c': { maxStoredBytes: 1500 },
        },
        defaultTenantQuota: { maxOpenSessions: 50 },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('open sessions: the third session of tenant-a is refused by name, other tenants are not affected, a close frees the slot', async () => {
    const first = (await request(t.url).post('/v1/sessions').set(as(A)).send({}).expect(201)).body.session.id;
    await request(t.url).post('/v1/sessions').set(as(A)).send({}).expect(201);
    const over = await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'third' }).expect(429);
    expect(over.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { quota: 'maxOpenSessions', limit: 2, used: 2, tenantId: 'tenant-a' },
    });
    expect(over.body.error.message).toContain('tenant_quotas.tenant-a.max_open_sessions');
    // Nothing was created under the refused id.
    await request(t.url).get('/v1/sessions/third').set(as(A)).expect(404);
    await request(t.url).post('/v1/sessions').set(as(B)).send({}).expect(201);
    await request(t.url).delete(`/v1/sessions/${first}`).set(as(A)).expect(200);
    await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'third' }).expect(201);
  });

  it('concurrent runs and runs per minute answer 429 with Retry-After; /metrics shows usage and limits per tenant', async () => {
    const ids = (
      (await request(t.url).get('/v1/sessions').set(as(A)).expect(200)).body.sessions as { id: string }[]
    ).map((s) => s.id);
    expect(ids).toHaveLength(2);
    const [one, two] = ids as [string, string];
    const before = fake.requests.length;
    fake.script({ hang: true });
    const hanging = await request(t.url)
      .post(`/v1/sessions/${one}/runs`)
      .set(as(A))
      .send({ input: 'hang' })
      .expect(202);
    await fake.waitForRequests(before + 1);
    const busy = await request(t.url).post(`/v1/sessions/${two}/runs`).set(as(A)).send({ input: 'second' }).expect(429);
    expect(busy.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { quota: 'maxConcurrentRuns', limit: 1, used: 1 },
    });
    expect(busy.headers['retry-after']).toBe('1');
    // Another tenant runs meanwhile.
    const other = (await request(t.url).post('/v1/sessions').set(as(B)).send({}).expect(201)).body.session.id;
    fake.script({ text: 'b runs' });
    await request(t.url).post(`/v1/sessions/${other}/runs`).set(as(B)).send({ input: 'hi', wait: true }).expect(200);

    const metrics = (await request(t.url).get('/metrics').set(as(ADMIN)).expect(200)).text;
    expect(metrics).toContain('a3s_tenant_running_runs{tenant="tenant-a"} 1');
    expect(metrics).toContain('a3s_tenant_open_sessions{tenant="tenant-a"} 2');
    expect(metrics).toContain('a3s_tenant_quota_limit{tenant="tenant-a",quota="maxConcurrentRuns"} 1');
    expect(metrics).toContain('a3s_tenant_quota_limit{tenant="tenant-b",quota="maxOpenSessions"} 50');

    await request(t.url).post(`/v1/sessions/${one}/cancel`).set(as(A)).send({}).expect(200);
    await eventually(
      async () =>
        (
          (await request(t.url).get(`/v1/sessions/${one}/runs/${hanging.body.runId}`).set(as(A))).body as {
            run: { status: string };
          }
        ).run.status === 'cancelled',
      'the hanging run to end',
    );
    // Two runs started this minute (the hanging one, and none refused): two more, then the fourth is refused.
    fake.script({ text: 'r2' }, { text: 'r3' });
    await request(t.url).post(`/v1/sessions/${two}/runs`).set(as(A)).send({ input: 'x', wait: true }).expect(200);
    await request(t.url).post(`/v1/sessions/${two}/runs`).set(as(A)).send({ input: 'y', wait: true }).expect(200);
    const perMinute = await request(t.url).post(`/v1/sessions/${two}/runs`).set(as(A)).send({ input: 'z' }).expect(429);
    expect(perMinute.body.error.details).toMatchObject({ quota: 'maxRunsPerMinute', limit: 3, used: 3 });
    const retry = Number(perMinute.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    fake.assertDone();
  });

  it('stored bytes: once the tenant holds more than its quota in saved snapshots, no new session opens', async () => {
    const id = (await request(t.url).post('/v1/sessions').set(as(C)).send({ autoSave: true }).expect(201)).body.session
      .id;
    fake.script({ text: 'a'.repeat(2000) });
    await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(C))
      .send({ input: 'long answer please', wait: true })
      .expect(200);
    const over = await request(t.url).post('/v1/sessions').set(as(C)).send({}).expect(429);
    expect(over.body.error.details).toMatchObject({ quota: 'maxStoredBytes', limit: 1500 });
    const metrics = (await request(t.url).get('/metrics').set(as(ADMIN)).expect(200)).text;
    expect(metrics).toMatch(/a3s_tenant_stored_bytes\{tenant="tenant-c"\} \d{4,}/);
  });
});
