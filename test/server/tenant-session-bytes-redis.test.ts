import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_OVERHEAD_BYTES } from '../../src/config/session-bytes-limit.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { redisServerConfig } from '../support/redis-target.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const A = 'token-session-bytes-redis-a01';
const B = 'token-session-bytes-redis-b01';
const apiTokens = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
];
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Stored (autoSave) sessions with large options, all of one size. */
const large = (i: number) => ({
  sessionId: `big-${i}`,
  autoSave: true,
  guidelines: 'g'.repeat(50_000),
  extra: 'e'.repeat(50_000),
});
const PER_SESSION = SESSION_OVERHEAD_BYTES + bytesOf(large(0));
const FITS = 5;

describe('limits.max_session_bytes_per_tenant on Redis: counted per node, restores from the shared store counted where they go live', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    // Two nodes on one Redis (fresh key prefix) and one workspace root, as a cluster shares its volumes.
    const shared = {
      ...redisServerConfig(),
      redisKeyPrefix: `a3s-session-bytes-${Math.random().toString(36).slice(2)}:`,
      apiTokens,
      limits: { maxSessionBytesPerTenant: FITS * PER_SESSION + 1000 },
    };
    a = await startTestServer({ fake, config: { ...shared, nodeId: 'node-a' } });
    b = await startTestServer({ fake, root: a.root, config: { ...shared, nodeId: 'node-b' } });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await fake.close();
  });

  it('fills node-a for tenant-a (429 + Retry-After), tenant-b still creates; a close frees room, and the session resumed on node-b counts there', async () => {
    for (let i = 0; i < FITS; i += 1) await request(a.url).post('/v1/sessions').set(as(A)).send(large(i)).expect(201);
    const over = await request(a.url).post('/v1/sessions').set(as(A)).send(large(FITS)).expect(429);
    expect(over.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { quota: 'maxSessionBytesPerTenant', used: FITS * PER_SESSION, tenantId: 'tenant-a' },
    });
    expect(over.headers['retry-after']).toBe('1');
    await request(a.url).post('/v1/sessions').set(as(B)).send(large(0)).expect(201);

    // Closed on node-a (stored in Redis, closed): its room on node-a is free at once.
    await request(a.url).delete('/v1/sessions/big-0').set(as(A)).expect(200);
    await request(a.url).post('/v1/sessions').set(as(A)).send(large(FITS)).expect(201);
    await request(a.url)
      .post('/v1/sessions')
      .set(as(A))
      .send(large(FITS + 1))
      .expect(429);

    // Resumed on node-b from the shared store: node-b counts it (node-a's count is its own).
    const resumed = await request(b.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'big-0', resume: true });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(201);
    expect(resumed.body.resumed).toBe(true);
    const used = b.server.ctx.agent.deps.sessionBytes?.used('tenant-a') ?? 0;
    expect(used).toBeGreaterThanOrEqual(PER_SESSION);
    expect(used).toBeLessThan(PER_SESSION + 1000);
    expect(a.server.ctx.agent.deps.sessionBytes?.used('tenant-a')).toBe(FITS * PER_SESSION);
  });
});
