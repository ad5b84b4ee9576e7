import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { backendConfig, connectRedisTarget, SESSION_BACKENDS } from '../support/redis-target.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
/** A PNG of exactly `bytes` bytes (the real one, padded). */
const png = (bytes: number): Buffer => Buffer.concat([PNG, Buffer.alloc(bytes - PNG.length)]);

const TOKEN = 'token-tenant-q-attach-001';
const ADMIN = 'token-admin-attach-quota-1';
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const LIMIT = 3000;

describe.each(SESSION_BACKENDS)("attachments count in the tenant's stored bytes (%s)", (backend) => {
  let fake: FakeProvider;
  let t: TestServer;
  const prefix = `a3s-attq-${Math.random().toString(36).slice(2)}`;
  beforeAll(async () => {
    fake = await startFakeProvider();
    const store = backendConfig(backend, prefix);
    t = await startTestServer({
      fake,
      config: {
        ...store,
        providers: imageModelProviders(fake),
        apiTokens: [
          { token: TOKEN, principal: 'q', tenantId: 'tenant-q', scopes: ['sessions'] },
          { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
        ],
        tenantQuotas: { 'tenant-q': { maxStoredBytes: LIMIT } },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    if (backend === 'redis') {
      const redis = connectRedisTarget();
      const left = await redis.keys(`${prefix}*`);
      if (left.length > 0) await redis.del(...left);
      redis.disconnect();
    }
  });
  const created = async () =>
    (await request(t.url).post('/v1/sessions').set(as(TOKEN)).send({}).expect(201)).body.session;
  const session = async () => (await created()).id as string;
  const upload = (id: string, data: Buffer) =>
    request(t.url).post(`/v1/sessions/${id}/attachments`).set(as(TOKEN)).set('content-type', 'image/png').send(data);
  const listed = async (id: string) =>
    (await request(t.url).get(`/v1/sessions/${id}/attachments`).set(as(TOKEN)).expect(200)).body
      .attachments as unknown[];
  const storedBytes = async (): Promise<number> => {
    const metrics = (await request(t.url).get('/metrics').set(as(ADMIN)).expect(200)).text;
    return Number(/a3s_tenant_stored_bytes\{tenant="tenant-q"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  };

  it('uploads, inline parts and read images add; over the quota is QUOTA_EXCEEDED naming it, nothing half stored; purge subtracts', async () => {
    const one = await session();
    await upload(one, png(1000)).expect(201);
    await upload(one, png(1500)).expect(201);
    expect(await storedBytes()).toBe(2500);
    const over = await upload(one, png(600)).expect(429);
    expect(over.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { quota: 'maxStoredBytes', limit: LIMIT, used: 2500, tenantId: 'tenant-q' },
    });
    expect(over.body.error.message).toContain('tenant_quotas.tenant-q.max_stored_bytes');
    // Two inline parts that fit one by one but not together: refused whole, before any provider call.
    const before = fake.requests.length;
    const parts = await request(t.url)
      .post(`/v1/sessions/${one}/runs`)
      .set(as(TOKEN))
      .send({
        input: 'two pictures',
        attachments: [
          { type: 'image', mediaType: 'image/png', data: png(300).toString('base64') },
          { type: 'image', mediaType: 'image/png', data: png(300).toString('base64') },
        ],
      })
      .expect(429);
    expect(parts.body.error.details).toMatchObject({ quota: 'maxStoredBytes', limit: LIMIT });
    expect(fake.requests.length).toBe(before);
    expect(await listed(one)).toHaveLength(2);
    expect(await storedBytes()).toBe(2500);
    // An inline part that fits is stored and counted.
    fake.script({ text: 'seen' });
    await request(t.url)
      .post(`/v1/sessions/${one}/runs`)
      .set(as(TOKEN))
      .send({
        input: 'one',
        wait: true,
        attachments: [{ type: 'image', mediaType: 'image/png', data: png(400).toString('base64') }],
      })
      .expect(200);
    expect(await storedBytes()).toBe(2900);
    // An image read from the workspace is counted like an upload: over the quota, the tool result says why.
    const second = await created();
    const two = second.id as string;
    writeFileSync(join(second.workspace as string, `quota-${backend}.png`), png(200));
    fake.script(
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: `quota-${backend}.png` } }] },
      { text: 'not shown' },
    );
    await request(t.url)
      .post(`/v1/sessions/${two}/runs`)
      .set(as(TOKEN))
      .send({ input: 'look', wait: true })
      .expect(200);
    const tool = fake.requests.at(-1)!.body.messages.find((m) => m.role === 'tool')!;
    expect(tool.content).toMatch(/was not sent: tenant tenant-q is over its quota maxStoredBytes \(2900 of 3000/);
    expect(await listed(two)).toEqual([]);
    // Purging the session gives its bytes back.
    await request(t.url).delete(`/v1/sessions/${one}?purge=true`).set(as(TOKEN)).expect(200);
    expect(await storedBytes()).toBe(0);
    await upload(two, png(2800)).expect(201);
    expect(await storedBytes()).toBe(2800);
  });
});
