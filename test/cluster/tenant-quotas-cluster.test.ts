import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { retry, startProcessCluster, type ProcessCluster } from '../support/process-cluster.js';

const TOKEN = 'tenant-quota-cluster-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const apiTokens = [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-q', scopes: ['sessions'] }];

describe("tenant quotas count every live node (Redis), and a dead node's counts go away with its node TTL", () => {
  let cluster: ProcessCluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  it("max 2 open sessions: one on A, one on B, the third is 429 on either; A killed, B opens it once A's entry expires", async () => {
    cluster = await startProcessCluster({ apiTokens, tenantQuotas: { 'tenant-q': { maxOpenSessions: 2 } } });
    const { a, urlA, urlB } = cluster;
    await request(urlA).post('/v1/sessions').set(auth).send({ sessionId: 'q1' }).expect(201);
    await request(urlB).post('/v1/sessions').set(auth).send({ sessionId: 'q2' }).expect(201);
    for (const url of [urlA, urlB]) {
      const refused = await request(url).post('/v1/sessions').set(auth).send({ sessionId: 'q3' }).expect(429);
      expect(refused.body.error).toMatchObject({
        code: 'QUOTA_EXCEEDED',
        details: { quota: 'maxOpenSessions', limit: 2, used: 2, tenantId: 'tenant-q' },
      });
      expect(refused.body.error.message).toContain('tenant_quotas.tenant-q.max_open_sessions');
    }
    // Closing one frees its count cluster-wide.
    await request(urlB).delete('/v1/sessions/q2').set(auth).expect(200);
    const reopened = await request(urlA).post('/v1/sessions').set(auth).send({ sessionId: 'q3' });
    expect(reopened.status, JSON.stringify(reopened.body)).toBe(201);
    await request(urlB).post('/v1/sessions').set(auth).send({ sessionId: 'q4' }).expect(429);

    // A dies without cleanup: its entry (2 sessions) stops counting after cluster.node_ttl_ms (1200 ms here).
    a.child.kill('SIGKILL');
    await a.exited;
    const started = Date.now();
    const opened = await retry(
      () => request(urlB).post('/v1/sessions').set(auth).send({ sessionId: 'q4' }),
      (r) => r.status !== 429,
      10_000,
    );
    expect(opened.status).toBe(201);
    expect(Date.now() - started).toBeLessThan(5000);
    await request(urlB).post('/v1/sessions').set(auth).send({ sessionId: 'q5' }).expect(201);
    await request(urlB).post('/v1/sessions').set(auth).send({ sessionId: 'q6' }).expect(429);
  });

  it("max 1 concurrent run: a run in flight on A makes a run on B 429 with Retry-After, and it passes once A's run ends", async () => {
    cluster = await startProcessCluster({ apiTokens, tenantQuotas: { 'tenant-q': { maxConcurrentRuns: 1 } } });
    const { urlA, urlB, fake } = cluster;
    await request(urlA).post('/v1/sessions').set(auth).send({ sessionId: 'r1' }).expect(201);
    await request(urlB).post('/v1/sessions').set(auth).send({ sessionId: 'r2' }).expect(201);
    fake.script({ text: 'slow run on A', chunks: 10, chunkDelayMs: 150 });
    const slow = request(urlA).post('/v1/sessions/r1/runs').set(auth).send({ input: 'slow', wait: true });
    const pending = slow.then((r) => r);
    await fake.waitForRequests(1, 10_000);
    // B reads A's entry with its next write or heartbeat (node_ttl_ms / 3 = 400 ms here).
    await new Promise((resolve) => setTimeout(resolve, 600));
    const refused = await request(urlB)
      .post('/v1/sessions/r2/runs')
      .set(auth)
      .send({ input: 'me too', wait: true })
      .expect(429);
    expect(refused.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { quota: 'maxConcurrentRuns', limit: 1, used: 1, retryAfterSeconds: 1 },
    });
    expect(refused.headers['retry-after']).toBe('1');
    expect((await pending).status).toBe(200);
    fake.script({ text: 'now on B' });
    const passed = await retry(
      () => request(urlB).post('/v1/sessions/r2/runs').set(auth).send({ input: 'now', wait: true }),
      (r) => r.status !== 429,
      5000,
    );
    expect(passed.status).toBe(200);
    expect(passed.body.result.text).toBe('now on B');
    fake.assertDone();
  });
});
