import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileCheckpointStore } from '../../src/stores/file-checkpoint-store.js';
import { FileSessionStore } from '../../src/stores/file-session-store.js';
import { RedisCheckpointStore } from '../../src/stores/redis-checkpoint-store.js';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { RedisSessionStore } from '../../src/stores/redis-session-store.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { RetentionSweeper } from '../../src/runtime/retention/retention-sweeper.js';
import { createLocalOwnership } from '../../src/runtime/ports/session-ownership.js';
import { deleteKeysWithPrefix, randomKeyPrefix } from '../stores/redis-test-client.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { connectRedisTarget, redisServerConfig } from '../support/redis-target.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const DAY = 24 * 60 * 60 * 1000;

describe('retention of closed sessions and DELETE ?purge=true', () => {
  let fake: FakeProvider;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterEach(async () => {
    for (const t of servers.splice(0)) await t.close();
  });
  afterAll(async () => {
    await fake.close();
  });
  const start = async (config: Record<string, unknown> = {}, dataDir?: string) => {
    const t = await startTestServer({ fake, ...(dataDir ? { dataDir } : {}), config });
    servers.push(t);
    return t;
  };

  it('nothing is deleted by default: a closed session stays stored and resume: true reopens it', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 'keep', autoSave: true }).expect(201);
    await request(t.url).delete('/v1/sessions/keep').expect(200);
    expect(existsSync(join(t.dataDir, 'sessions', 'default', 'keep.json'))).toBe(true);
    await request(t.url).post('/v1/sessions').send({ sessionId: 'keep', resume: true }).expect(201);
  });

  it('the sweep deletes closed sessions older than closed_session_days, with their checkpoints; open and recent ones stay (fake clock)', async () => {
    const dir = tempDir('a3s-retention-');
    const store = new FileSessionStore({ dir: join(dir, 'sessions') });
    const checkpoints = new FileCheckpointStore({ dir: join(dir, 'checkpoints') });
    await store.init();
    await checkpoints.init();
    const ownership = createLocalOwnership('sweeper-node');
    // Three stored sessions written through a real server: one closed, one closed later, one open.
    const t = await start({}, dir);
    for (const id of ['old-closed', 'new-closed', 'open'])
      await request(t.url).post('/v1/sessions').send({ sessionId: id, autoSave: true }).expect(201);
    fake.script({ toolCalls: [{ id: 'l1', name: 'ls', arguments: {} }] }, { hang: true });
    const started = await request(t.url).post('/v1/sessions/old-closed/runs').send({ input: 'list' }).expect(202);
    // Wait for the first tool round's checkpoint, so the close below interrupts a run mid-way.
    for (let i = 0; i < 200 && !(await checkpoints.load(sessionKey('default', 'old-closed'), started.body.runId)); i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await request(t.url).delete('/v1/sessions/old-closed').expect(200);
    await request(t.url).delete('/v1/sessions/new-closed').expect(200);
    await t.close();
    servers.splice(0);
    const closedAt = JSON.parse(readFileSync(join(dir, 'sessions', 'default', 'old-closed.json'), 'utf8'))
      .saved_at_ms as number;
    // The run the close cancelled kept no checkpoint; plant one as an interrupted run would leave it.
    await checkpoints.save(sessionKey('default', 'old-closed'), {
      ...(await checkpointOf(started.body.runId)),
      run_id: started.body.runId,
    });

    let now = closedAt + 2 * DAY;
    const sweeper = new RetentionSweeper({
      store,
      checkpoints,
      ownership,
      closedSessionDays: 3,
      now: () => now,
      isLive: () => false,
    });
    expect(await sweeper.sweep()).toEqual({ scanned: 3, purged: 0 });
    now = closedAt + 3 * DAY + 1;
    // Make new-closed younger than old-closed: its last save is a day later.
    const young = join(dir, 'sessions', 'default', 'new-closed.json');
    const snapshot = JSON.parse(readFileSync(young, 'utf8'));
    writeFileSync(young, JSON.stringify({ ...snapshot, saved_at_ms: closedAt + DAY }));
    expect(await sweeper.sweep()).toEqual({ scanned: 3, purged: 1 });
    expect((await store.list()).sort()).toEqual([sessionKey('default', 'new-closed'), sessionKey('default', 'open')]);
    expect(await checkpoints.load(sessionKey('default', 'old-closed'), started.body.runId)).toBeUndefined();
    now = closedAt + 10 * DAY;
    // A session live on this node is never swept, and an open one never is.
    const live = new RetentionSweeper({
      store,
      checkpoints,
      ownership,
      closedSessionDays: 3,
      now: () => now,
      isLive: (key) => key === sessionKey('default', 'new-closed'),
    });
    expect(await live.sweep()).toEqual({ scanned: 1, purged: 0 });
    expect(await sweeper.sweep()).toEqual({ scanned: 2, purged: 1 });
    expect(await store.list()).toEqual([sessionKey('default', 'open')]);
    fake.assertDone();

    async function checkpointOf(runId: string) {
      return {
        schema_version: 1 as const,
        run_id: runId,
        session_id: 'old-closed',
        turn: 1,
        input: 'list',
        side_question: false,
        messages: [{ role: 'system' as const, content: 'x' }],
        total_usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        tool_calls_count: 1,
        verification_reports: [],
        convergence: { tool_rounds: 1, parse_failures: 0, continuations: 0, last_call_key: '', same_call_count: 0 },
        checkpoint_ms: 0,
      };
    }
  });

  it('the sweep runs at start: a server with retention.closed_session_days finds old closed sessions gone', async () => {
    const dataDir = tempDir('a3s-retention-');
    const t = await start({}, dataDir);
    await request(t.url).post('/v1/sessions').send({ sessionId: 'ancient', autoSave: true }).expect(201);
    await request(t.url).delete('/v1/sessions/ancient').expect(200);
    await t.close();
    servers.splice(0);
    const file = join(dataDir, 'sessions', 'default', 'ancient.json');
    const snapshot = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...snapshot, saved_at_ms: Date.now() - 40 * DAY }));
    const again = await start({ retention: { closedSessionDays: 30 } }, dataDir);
    for (let i = 0; i < 100 && existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(file)).toBe(false);
    await request(again.url).post('/v1/sessions').send({ sessionId: 'ancient', resume: true }).expect(404);
  });

  it('DELETE ?purge=true deletes at once (live or only stored); another tenant cannot; unknown is 404', async () => {
    const A = 'token-tenant-a-retention-1';
    const B = 'token-tenant-b-retention-1';
    const apiTokens = [
      { token: A, principal: 'a', tenantId: 'tenant-a', scopes: ['sessions'] },
      { token: B, principal: 'b', tenantId: 'tenant-b', scopes: ['sessions'] },
    ];
    const t = await start({ apiTokens });
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const dir = join(t.dataDir, 'sessions', 'tenant-a');
    mkdirSync(dir, { recursive: true });
    await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'gone', autoSave: true }).expect(201);
    expect(existsSync(join(dir, 'gone.json'))).toBe(true);
    // Tenant B addressing the same id reaches its own (nonexistent) session.
    await request(t.url).delete('/v1/sessions/gone?purge=true').set(as(B)).expect(404);
    expect(existsSync(join(dir, 'gone.json'))).toBe(true);
    expect((await request(t.url).delete('/v1/sessions/gone?purge=true').set(as(A)).expect(200)).body).toEqual({
      closed: true,
      purged: true,
    });
    expect(existsSync(join(dir, 'gone.json'))).toBe(false);
    await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'gone', resume: true }).expect(404);
    // Closed first, purged later: the stored closed snapshot goes.
    await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'later', autoSave: true }).expect(201);
    await request(t.url).delete('/v1/sessions/later').set(as(A)).expect(200);
    expect((await request(t.url).delete('/v1/sessions/later?purge=true').set(as(A)).expect(200)).body).toEqual({
      closed: false,
      purged: true,
    });
    await request(t.url).delete('/v1/sessions/never?purge=true').set(as(A)).expect(404);
    expect((await request(t.url).delete('/v1/sessions/later?purge=maybe').set(as(A)).expect(400)).body.error.code).toBe(
      'VALIDATION_ERROR',
    );
  });
});

describe('retention on Redis: closed sessions expire by TTL', () => {
  let redis: RedisClient;
  let fake: FakeProvider;
  const keyPrefix = randomKeyPrefix();
  beforeAll(async () => {
    fake = await startFakeProvider();
    redis = connectRedisTarget();
  });
  afterAll(async () => {
    await deleteKeysWithPrefix(redis, keyPrefix);
    await redis.quit();
    await fake.close();
  });

  it('closing sets the TTL of the snapshot and event keys; reopening clears it', async () => {
    const t = await startTestServer({
      fake,
      config: { ...redisServerConfig(), redisKeyPrefix: keyPrefix, retention: { closedSessionDays: 2 } },
    });
    try {
      await request(t.url).post('/v1/sessions').send({ sessionId: 'ttl', autoSave: true }).expect(201);
      const snapshotKey = `${keyPrefix}{default/ttl}:snapshot`;
      expect(await redis.pttl(snapshotKey)).toBe(-1);
      await request(t.url).delete('/v1/sessions/ttl').expect(200);
      const ttl = await redis.pttl(snapshotKey);
      expect(ttl).toBeGreaterThan(2 * DAY - 60_000);
      expect(ttl).toBeLessThanOrEqual(2 * DAY);
      await request(t.url).post('/v1/sessions').send({ sessionId: 'ttl', resume: true }).expect(201);
      expect(await redis.pttl(snapshotKey)).toBe(-1);
      // Purged under the session's lease (the saves and deletes of a Redis store are fenced by it): open, then closed.
      expect((await request(t.url).delete('/v1/sessions/ttl?purge=true').expect(200)).body).toEqual({
        closed: true,
        purged: true,
      });
      expect(await redis.exists(snapshotKey)).toBe(0);
      expect(await redis.smembers(`${keyPrefix}tenant:{default}:sessions`)).toEqual([]);
      await request(t.url).post('/v1/sessions').send({ sessionId: 'stored', autoSave: true }).expect(201);
      await request(t.url).delete('/v1/sessions/stored').expect(200);
      expect((await request(t.url).delete('/v1/sessions/stored?purge=true').expect(200)).body).toEqual({
        closed: false,
        purged: true,
      });
      expect(await redis.exists(`${keyPrefix}{default/stored}:snapshot`)).toBe(0);
      // A closed session whose snapshot expired by its TTL leaves an index entry; the sweep takes it out.
      await request(t.url).post('/v1/sessions').send({ sessionId: 'expired', autoSave: true }).expect(201);
      await request(t.url).delete('/v1/sessions/expired').expect(200);
      await redis.del(`${keyPrefix}{default/expired}:snapshot`);
      expect(await redis.smembers(`${keyPrefix}tenant:{default}:sessions`)).toEqual(['expired']);
      const stores = {
        store: new RedisSessionStore({ redis, keyPrefix }),
        checkpoints: new RedisCheckpointStore({ redis, keyPrefix }),
        ownership: createLocalOwnership('sweeper'),
      };
      const sweeper = new RetentionSweeper({
        ...stores,
        closedSessionDays: 2,
        now: () => Date.now(),
        isLive: () => false,
      });
      expect(await sweeper.sweep()).toEqual({ scanned: 1, purged: 0 });
      expect(await redis.smembers(`${keyPrefix}tenant:{default}:sessions`)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
