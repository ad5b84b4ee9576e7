import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { countExisting, deleteKeysWithPrefix, randomKeyPrefix } from '../stores/redis-test-client.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { connectRedisTarget, redisServerConfig, redisTestMode } from '../support/redis-target.js';
import { startTestServer, tempDir, type TestServer, type TestServerOptions } from '../support/test-server.js';

const A = 'token-tenant-a-sessions-0001';
const B = 'token-tenant-b-sessions-0001';
const ADMIN = 'token-admin-all-tenants-0001';
const apiTokens = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];
const as = (token: string) => ({ authorization: `Bearer ${token}` });

// Written once by the version before session ids were per tenant (old layout: `sessions/<id>.json`,
// `checkpoints/<run id>.json`; the workspace path is a placeholder). Never regenerate them.
const LEGACY = join(import.meta.dirname, '..', 'fixtures', 'legacy-store', 'data');
const LEGACY_RUN = 'run_6d8cc259293c453eb8dfaf7e232bfad0';
const legacyText = (path: string, root: string): string =>
  readFileSync(join(LEGACY, path), 'utf8').split('__WORKSPACE__').join(root);

interface SessionView {
  id: string;
  labels: { tenantId?: string };
}

async function history(t: TestServer, token: string, id: string, query = ''): Promise<string[]> {
  const res = await request(t.url).get(`/v1/sessions/${id}/history${query}`).set(as(token)).expect(200);
  return (res.body.messages as { role: string; content: string | null }[])
    .filter((m) => m.role === 'assistant' && m.content)
    .map((m) => m.content as string);
}

async function list(t: TestServer, token: string, query = ''): Promise<string[]> {
  const res = await request(t.url).get(`/v1/sessions${query}`).set(as(token)).expect(200);
  return (res.body.sessions as SessionView[]).map((s) => `${s.labels.tenantId}/${s.id}`).sort();
}

/** Both tenants create "ci" and run it; what every backend must show. */
async function twoTenantsShareAnId(t: TestServer): Promise<void> {
  await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'ci', autoSave: true }).expect(201);
  // The same id in another tenant is another session: 201, not 409.
  const created = await request(t.url)
    .post('/v1/sessions')
    .set(as(B))
    .send({ sessionId: 'ci', autoSave: true })
    .expect(201);
  expect(created.body.session).toMatchObject({ id: 'ci', labels: { tenantId: 'tenant-b' } });
  // Within one tenant an id is still unique.
  expect(
    (await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'ci' }).expect(409)).body.error.code,
  ).toBe('SESSION_EXISTS');

  t.fake.script({ text: 'answer for a' });
  await request(t.url).post('/v1/sessions/ci/runs').set(as(A)).send({ input: 'hello from a', wait: true }).expect(200);
  t.fake.script({ text: 'answer for b' });
  await request(t.url).post('/v1/sessions/ci/runs').set(as(B)).send({ input: 'hello from b', wait: true }).expect(200);
  expect(await history(t, A, 'ci')).toEqual(['answer for a']);
  expect(await history(t, B, 'ci')).toEqual(['answer for b']);
  expect(await list(t, A)).toEqual(['tenant-a/ci']);
  expect(await list(t, B)).toEqual(['tenant-b/ci']);
}

describe('session ids are per tenant (file store)', () => {
  let fake: FakeProvider;
  const servers: TestServer[] = [];
  const start = async (options: TestServerOptions = {}) => {
    const t = await startTestServer({
      fake,
      files: { 'notes.txt': 'legacy notes\n' },
      ...options,
      config: { apiTokens, ...options.config },
    });
    servers.push(t);
    return t;
  };
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterEach(async () => {
    for (const t of servers.splice(0)) await t.close();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('lets two tenants use the same id, each seeing only its own, and keeps both across a restart', async () => {
    const t = await start();
    await twoTenantsShareAnId(t);
    expect(existsSync(join(t.dataDir, 'sessions', 'tenant-a', 'ci.json'))).toBe(true);
    expect(existsSync(join(t.dataDir, 'sessions', 'tenant-b', 'ci.json'))).toBe(true);
    expect(readdirSync(join(t.dataDir, 'sessions')).sort()).toEqual(['tenant-a', 'tenant-b']);

    await t.close();
    servers.splice(servers.indexOf(t), 1);
    const again = await start({ dataDir: t.dataDir, root: t.root });
    expect(await history(again, A, 'ci')).toEqual(['answer for a']);
    expect(await history(again, B, 'ci')).toEqual(['answer for b']);
    t.fake.script({ text: 'second answer for b' });
    await request(again.url).post('/v1/sessions/ci/runs').set(as(B)).send({ input: 'again', wait: true }).expect(200);
    expect(await history(again, B, 'ci')).toEqual(['answer for b', 'second answer for b']);
    expect(await history(again, A, 'ci')).toEqual(['answer for a']);
  });

  it("answers another tenant's id exactly like an id that never existed", async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'a-only', autoSave: true }).expect(201);
    t.fake.script({ text: 'private' });
    const runId = (
      await request(t.url).post('/v1/sessions/a-only/runs').set(as(A)).send({ input: 'x', wait: true }).expect(200)
    ).body.runId as string;

    const probes = (id: string) => [
      request(t.url).get(`/v1/sessions/${id}`),
      request(t.url).get(`/v1/sessions/${id}/history`),
      request(t.url).delete(`/v1/sessions/${id}`),
      request(t.url).get(`/v1/sessions/${id}/runs`),
      request(t.url).get(`/v1/sessions/${id}/runs/${runId}`),
      request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'steal' }),
      request(t.url).post(`/v1/sessions/${id}/runs/${runId}/resume`).send({}),
      request(t.url).post('/v1/sessions').send({ sessionId: id, resume: true }),
    ];
    const theirs = await Promise.all(probes('a-only').map((r) => r.set(as(B))));
    const never = await Promise.all(probes('n-ever').map((r) => r.set(as(B))));
    for (const [index, res] of theirs.entries()) {
      const other = never[index]!;
      expect(res.status, `probe ${index}`).toBe(other.status);
      expect(res.status, `probe ${index}`).toBe(404);
      expect(JSON.stringify(res.body).split('a-only').join('n-ever')).toBe(JSON.stringify(other.body));
    }
    // B may now take the id for itself; A's session is untouched.
    await request(t.url).post('/v1/sessions').set(as(B)).send({ sessionId: 'a-only' }).expect(201);
    expect(await history(t, A, 'a-only')).toEqual(['private']);
    expect(await history(t, B, 'a-only')).toEqual([]);
  });

  it("lets an admin address another tenant's session with ?tenantId=, and no one else", async () => {
    const t = await start();
    await twoTenantsShareAnId(t);
    // The admin's own tenant ("ops") has no "ci".
    expect((await request(t.url).get('/v1/sessions/ci').set(as(ADMIN)).expect(404)).body.error.code).toBe(
      'SESSION_NOT_FOUND',
    );
    const b = await request(t.url).get('/v1/sessions/ci?tenantId=tenant-b').set(as(ADMIN)).expect(200);
    expect(b.body.session.labels.tenantId).toBe('tenant-b');
    expect(await history(t, ADMIN, 'ci', '?tenantId=tenant-b')).toEqual(['answer for b']);
    expect(await history(t, ADMIN, 'ci', '?tenantId=tenant-a')).toEqual(['answer for a']);
    const trace = await request(t.url)
      .get('/v1/sessions/ci/trace?tenantId=tenant-a&limit=2')
      .set(as(ADMIN))
      .expect(200);
    expect(trace.body.events).toHaveLength(2);
    t.fake.script({ text: 'admin ran it' });
    await request(t.url)
      .post('/v1/sessions/ci/runs?tenantId=tenant-b')
      .set(as(ADMIN))
      .send({ input: 'as admin', wait: true })
      .expect(200);
    expect(await history(t, B, 'ci')).toEqual(['answer for b', 'admin ran it']);

    // Listing: an admin sees every tenant's sessions, or one tenant's.
    expect(await list(t, ADMIN)).toEqual(['tenant-a/ci', 'tenant-b/ci']);
    expect(await list(t, ADMIN, '?tenantId=tenant-a')).toEqual(['tenant-a/ci']);
    // A token naming its own tenant is fine; naming another is 403 whatever exists there.
    expect(await history(t, A, 'ci', '?tenantId=tenant-a')).toEqual(['answer for a']);
    for (const path of [
      '/v1/sessions/ci?tenantId=tenant-b',
      '/v1/sessions/nothing?tenantId=tenant-b',
      '/v1/sessions?tenantId=tenant-b',
    ]) {
      const res = await request(t.url).get(path).set(as(A)).expect(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'admin' } });
    }
    expect((await request(t.url).get('/v1/sessions/ci?tenantId=').set(as(ADMIN)).expect(400)).body.error).toMatchObject(
      { code: 'VALIDATION_ERROR', message: /query\.tenantId/ },
    );

    // An admin closes B's session; A's stays open.
    await request(t.url).delete('/v1/sessions/ci?tenantId=tenant-b').set(as(ADMIN)).expect(200);
    expect((await request(t.url).get('/v1/sessions/ci').set(as(B)).expect(410)).body.error.code).toBe('SESSION_CLOSED');
    expect(await history(t, A, 'ci')).toEqual(['answer for a']);
  });

  it('loads, lists and resumes a store of the old layout, moving it idempotently and losing nothing', async () => {
    const dataDir = tempDir('a3s-legacy-');
    const root = tempDir('a3s-legacy-ws-');
    writeFileSync(join(root, 'notes.txt'), 'legacy notes\n');
    cpSync(LEGACY, dataDir, { recursive: true });
    const oldSnapshot = JSON.parse(legacyText('sessions/ci.json', root)) as {
      generation: number;
      session: { messages: unknown[] };
    };
    writeFileSync(join(dataDir, 'sessions', 'ci.json'), legacyText('sessions/ci.json', root));
    writeFileSync(
      join(dataDir, 'checkpoints', `${LEGACY_RUN}.json`),
      legacyText(`checkpoints/${LEGACY_RUN}.json`, root),
    );

    const t = await start({ dataDir, root });
    // Moved at startup into its tenant's directory; the old file is gone.
    expect(readdirSync(join(dataDir, 'sessions'))).toEqual(['tenant-a']);
    expect(await t.server.ctx.store.list()).toEqual([sessionKey('tenant-a', 'ci')]);
    const moved = await t.server.ctx.store.load(sessionKey('tenant-a', 'ci'));
    expect(moved?.generation).toBe(oldSnapshot.generation);
    expect(moved?.session.messages).toEqual(oldSnapshot.session.messages);

    // Loaded by its tenant only; another tenant may use the id for itself.
    expect(await history(t, A, 'ci')).toEqual(['first answer']);
    expect(await list(t, A)).toEqual(['tenant-a/ci']);
    expect((await request(t.url).get('/v1/sessions/ci').set(as(B)).expect(404)).body.error.code).toBe(
      'SESSION_NOT_FOUND',
    );

    // The run the old version left after a tool round resumes from its old-layout checkpoint.
    t.fake.script({ text: 'resumed from the old checkpoint' });
    const resumed = await request(t.url)
      .post(`/v1/sessions/ci/runs/${LEGACY_RUN}/resume`)
      .set(as(A))
      .send({ wait: true })
      .expect(200);
    expect(resumed.body.run.status).toBe('completed');
    expect(await history(t, A, 'ci')).toContain('resumed from the old checkpoint');
    expect(existsSync(join(dataDir, 'checkpoints', `${LEGACY_RUN}.json`))).toBe(false);
    await request(t.url).post('/v1/sessions/ci/save').set(as(A)).expect(200);
    const saved = await t.server.ctx.store.load(sessionKey('tenant-a', 'ci'));

    // A second start on the same directory (the old file copied back as a crash mid-move would leave it) changes nothing.
    await t.close();
    servers.splice(servers.indexOf(t), 1);
    writeFileSync(join(dataDir, 'sessions', 'ci.json'), legacyText('sessions/ci.json', root));
    const again = await start({ dataDir, root });
    expect(readdirSync(join(dataDir, 'sessions'))).toEqual(['tenant-a']);
    expect(await again.server.ctx.store.list()).toEqual([sessionKey('tenant-a', 'ci')]);
    const reloaded = await again.server.ctx.store.load(sessionKey('tenant-a', 'ci'));
    // The shutdown may have saved one more generation; nothing of the session was lost or replaced by the old file.
    expect(reloaded?.generation).toBeGreaterThanOrEqual(saved?.generation ?? Infinity);
    expect(reloaded?.session.messages).toEqual(saved?.session.messages);
    expect(await history(again, A, 'ci')).toContain('resumed from the old checkpoint');
  });
});

describe('session ids are per tenant (Redis store)', () => {
  let fake: FakeProvider;
  let redis: RedisClient;
  let keyPrefix: string;
  const servers: TestServer[] = [];
  const start = async (options: TestServerOptions = {}) => {
    const t = await startTestServer({
      fake,
      ...options,
      config: { apiTokens, ...redisServerConfig(), redisKeyPrefix: keyPrefix, ...options.config },
    });
    servers.push(t);
    return t;
  };
  beforeAll(async () => {
    fake = await startFakeProvider();
    redis = connectRedisTarget();
  });
  afterEach(async () => {
    for (const t of servers.splice(0)) await t.close();
    await deleteKeysWithPrefix(redis, keyPrefix);
  });
  afterAll(async () => {
    await redis.quit();
    await fake.close();
  });

  it('keeps every key of a session under its tenant and id as hash tag, and writes no global set', async () => {
    keyPrefix = randomKeyPrefix();
    const t = await start();
    await twoTenantsShareAnId(t);
    for (const tenant of ['tenant-a', 'tenant-b']) {
      expect(await redis.hget(`${keyPrefix}{${tenant}/ci}:snapshot`, 'gen')).toMatch(/^\d+$/);
      expect(
        await countExisting(
          redis,
          `${keyPrefix}{${tenant}/ci}:lease`,
          `${keyPrefix}{${tenant}/ci}:epoch`,
          `${keyPrefix}{${tenant}/ci}:events`,
        ),
      ).toBe(3);
      expect(await redis.smembers(`${keyPrefix}tenant:{${tenant}}:sessions`)).toEqual(['ci']);
    }
    expect(
      await countExisting(
        redis,
        `${keyPrefix}sessions`,
        `${keyPrefix}session:ci`,
        `${keyPrefix}lease:ci`,
        `${keyPrefix}events:ci`,
      ),
    ).toBe(0);

    // A restarted node hydrates both from Redis.
    await t.close();
    servers.splice(servers.indexOf(t), 1);
    const again = await start({ dataDir: t.dataDir, root: t.root });
    expect(await history(again, A, 'ci')).toEqual(['answer for a']);
    expect(await history(again, B, 'ci')).toEqual(['answer for b']);
  });

  // Single Redis only: the old key layout (keys of one session in different hash slots) never ran on a Redis Cluster,
  // so there is nothing to migrate there.
  it.skipIf(redisTestMode() === 'cluster')(
    'loads and resumes sessions and checkpoints of the old key layout, moving them idempotently',
    async () => {
      keyPrefix = randomKeyPrefix();
      const root = tempDir('a3s-legacy-ws-');
      writeFileSync(join(root, 'notes.txt'), 'legacy notes\n');
      const snapshot = legacyText('sessions/ci.json', root);
      const generation = String((JSON.parse(snapshot) as { generation: number }).generation);
      // The old layout, written with raw commands as the earlier version stored it.
      await redis.hset(
        `${keyPrefix}session:ci`,
        'gen',
        generation,
        'enc',
        'json',
        'data',
        JSON.stringify(JSON.parse(snapshot)),
      );
      await redis.sadd(`${keyPrefix}sessions`, 'ci');
      await redis.hset(
        `${keyPrefix}checkpoint:${LEGACY_RUN}`,
        'enc',
        'json',
        'data',
        JSON.stringify(JSON.parse(legacyText(`checkpoints/${LEGACY_RUN}.json`, root))),
      );
      await redis.set(`${keyPrefix}epoch:ci`, '7');

      const t = await start({ root });
      expect(await history(t, A, 'ci')).toEqual(['first answer']);
      expect((await request(t.url).get('/v1/sessions/ci').set(as(B)).expect(404)).body.error.code).toBe(
        'SESSION_NOT_FOUND',
      );
      expect(await countExisting(redis, `${keyPrefix}session:ci`, `${keyPrefix}sessions`)).toBe(0);
      expect(await redis.hget(`${keyPrefix}{tenant-a/ci}:snapshot`, 'gen')).toBe(generation);
      // The epoch moved with it, so fencing never goes back (this node's lease is the next one).
      expect(Number(await redis.get(`${keyPrefix}{tenant-a/ci}:epoch`))).toBeGreaterThan(7);
      expect(await t.server.ctx.store.list('tenant-a')).toEqual([sessionKey('tenant-a', 'ci')]);

      t.fake.script({ text: 'resumed from the old checkpoint' });
      const resumed = await request(t.url)
        .post(`/v1/sessions/ci/runs/${LEGACY_RUN}/resume`)
        .set(as(A))
        .send({ wait: true })
        .expect(200);
      expect(resumed.body.run.status).toBe('completed');
      expect(await redis.exists(`${keyPrefix}checkpoint:${LEGACY_RUN}`)).toBe(0);
      await request(t.url).post('/v1/sessions/ci/save').set(as(A)).expect(200);
      const saved = await t.server.ctx.store.load(sessionKey('tenant-a', 'ci'));

      // Idempotent: the old hash planted again (an old writer, or a crash before its delete) never replaces the newer generation.
      await t.close();
      servers.splice(servers.indexOf(t), 1);
      await redis.hset(
        `${keyPrefix}session:ci`,
        'gen',
        generation,
        'enc',
        'json',
        'data',
        JSON.stringify(JSON.parse(snapshot)),
      );
      await redis.sadd(`${keyPrefix}sessions`, 'ci');
      const again = await start({ root });
      expect(await history(again, A, 'ci')).toContain('resumed from the old checkpoint');
      const reloaded = await again.server.ctx.store.load(sessionKey('tenant-a', 'ci'));
      expect(reloaded?.generation).toBeGreaterThanOrEqual(saved?.generation ?? Infinity);
      expect(reloaded?.session.messages).toEqual(saved?.session.messages);
      expect(await countExisting(redis, `${keyPrefix}session:ci`, `${keyPrefix}sessions`)).toBe(0);
    },
  );
});
