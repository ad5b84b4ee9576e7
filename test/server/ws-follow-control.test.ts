import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MESSAGES_BEFORE_ATTACH, MAX_MESSAGES_BEFORE_AUTH } from '../../src/routes/events-ws.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import type { TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';
import { startRedisNodes } from '../support/redis-target.js';

describe('a WebSocket that follows a session another node owns', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    // No peer_urls: B forwards nothing (with them the socket is proxied to A: test/cluster/forwarding.test.ts).
    [a, b] = await startRedisNodes(fake, 'a3s-follow', { cluster: { peerUrls: [] } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('refuses confirm and cancel with SESSION_OWNED_ELSEWHERE naming the owner, answers pings, and keeps streaming', async () => {
    await request(a.url).post('/v1/sessions').send({ sessionId: 'f1', autoSave: true }).expect(201);
    fake.script({ text: 'first' });
    await request(a.url).post('/v1/sessions/f1/runs').send({ input: 'one', wait: true }).expect(200);
    const ws = await subscribe(b.url, 'f1', { after: 0 });
    // The replayed run shows the socket is following A's stream.
    await ws.waitFor((e) => e.type === 'agent_end');
    // More messages than an unauthenticated socket may send: a follower is authenticated and stays open.
    for (let i = 0; i <= MAX_MESSAGES_BEFORE_AUTH; i++) ws.send({ type: 'ping' });
    ws.send({ type: 'confirm', toolId: 'tool-1', approved: true });
    ws.send({ type: 'cancel', runId: 'run-1' });
    ws.send({ type: 'host_register' });
    ws.send({ type: 'steer', runId: 'run-1', input: 'x', requestId: 'r1' });
    ws.send({ type: 'interrupt', runId: 'run-1' });
    await ws.waitFor(() => ws.controls.filter((c) => c.type === 'error').length === 5);
    expect(ws.controls.filter((c) => c.type === 'pong')).toHaveLength(MAX_MESSAGES_BEFORE_AUTH + 1);
    const [confirm, cancel, host, steer, interrupt] = ws.controls
      .filter((c) => c.type === 'error')
      .map((c) => c.payload as { code: string; message: string; field?: string });
    for (const refusal of [confirm, cancel, host, steer, interrupt]) {
      expect(refusal?.code).toBe('SESSION_OWNED_ELSEWHERE');
      expect(refusal?.message).toContain('node-a');
      expect(refusal?.message).toContain(a.url);
    }
    expect(confirm).toMatchObject({ field: 'toolId' });
    expect(confirm?.message).toMatch(/^confirm: .*POST \/v1\/sessions\/f1\/confirmations\/tool-1/);
    expect(cancel).toMatchObject({ field: 'runId' });
    expect(cancel?.message).toMatch(/^cancel: .*POST \/v1\/sessions\/f1\/runs\/run-1\/cancel/);
    expect(steer).toMatchObject({ field: 'runId' });
    expect(steer?.message).toMatch(/^steer: .*POST \/v1\/sessions\/f1\/runs\/run-1\/steer at the owner/);
    expect(interrupt?.message).toMatch(/^interrupt: .*POST \/v1\/sessions\/f1\/runs\/run-1\/interrupt at the owner/);
    expect(
      ws.controls.some(
        (c) => c.type === 'confirm_result' || c.type === 'cancel_result' || c.type === 'host_registered',
      ),
    ).toBe(false);

    fake.script({ text: 'second' });
    const second = await request(a.url).post('/v1/sessions/f1/runs').send({ input: 'two', wait: true }).expect(200);
    const end = await ws.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === second.body.runId);
    expect(end.metadata).toMatchObject({ session_id: 'f1' });
    ws.close();
    expect((await ws.closed).code).not.toBe(4001);
  });
});

describe('a WebSocket that follows an unsaved session another node owns', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    [a, b] = await startRedisNodes(fake, 'a3s-follow-unsaved', { cluster: { peerUrls: [] } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('follows its events through the shared stream (its home record says it exists), as for a saved one', async () => {
    await request(a.url).post('/v1/sessions').send({ sessionId: 'plain-follow' }).expect(201);
    fake.script({ text: 'unsaved but followed' });
    await request(a.url).post('/v1/sessions/plain-follow/runs').send({ input: 'one', wait: true }).expect(200);
    const ws = await subscribe(b.url, 'plain-follow', { after: 0 });
    const end = await ws.waitFor((e) => e.type === 'agent_end');
    expect(end.metadata).toMatchObject({ session_id: 'plain-follow' });
    ws.close();
    // A session that exists nowhere is still not found.
    const missing = await subscribe(b.url, 'never-created', { after: 0 });
    expect((await missing.closed).code).toBe(4004);
  });
});

describe('messages sent while an authenticated socket is still attaching', () => {
  const TOKEN = 'tenant-a-token-0123456789';
  const auth = { authorization: `Bearer ${TOKEN}` };
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    const apiTokens = [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }];
    [a, b] = await startRedisNodes(fake, 'a3s-attach', { apiTokens, cluster: { peerUrls: [] } });
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'q1', autoSave: true }).expect(201);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  // Sent as soon as the socket opens, while the server is still looking the session up (and, on B, joining A's stream).
  const pings = MAX_MESSAGES_BEFORE_AUTH + 4;
  async function pingsThenCancel(url: string, runId: string) {
    const ws = await subscribe(url, 'q1', { after: 0, token: TOKEN });
    for (let i = 0; i < pings; i++) ws.send({ type: 'ping' });
    ws.send({ type: 'cancel', runId });
    await ws.waitFor((f) => f.type === 'error' || f.type === 'cancel_result');
    return ws;
  }

  it('a follower answers every ping in order, then refuses the cancel with SESSION_OWNED_ELSEWHERE, and stays open', async () => {
    fake.script({ text: 'first' });
    const runId = (
      await request(a.url).post('/v1/sessions/q1/runs').set(auth).send({ input: 'one', wait: true }).expect(200)
    ).body.runId as string;
    const ws = await pingsThenCancel(b.url, runId);
    expect(ws.controls.map((c) => c.type)).toEqual([...Array<string>(pings).fill('pong'), 'error']);
    const refusal = ws.controls.at(-1)?.payload as { code: string; message: string; field?: string };
    expect(refusal).toMatchObject({ code: 'SESSION_OWNED_ELSEWHERE', field: 'runId' });
    expect(refusal.message).toMatch(/^cancel: .*node-a/);
    await ws.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === runId);
    expect(ws.socket.readyState).toBe(ws.socket.OPEN);
    ws.close();
    expect((await ws.closed).code).not.toBe(4001);
  });

  it('a local subscriber answers every ping in order, then the cancel, and stays open', async () => {
    fake.script({ text: 'second' });
    const runId = (
      await request(a.url).post('/v1/sessions/q1/runs').set(auth).send({ input: 'two', wait: true }).expect(200)
    ).body.runId as string;
    const ws = await pingsThenCancel(a.url, runId);
    expect(ws.controls.map((c) => c.type)).toEqual([...Array<string>(pings).fill('pong'), 'cancel_result']);
    expect(ws.controls.at(-1)?.payload).toEqual({ run_id: runId, cancelled: false });
    await ws.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === runId);
    expect(ws.socket.readyState).toBe(ws.socket.OPEN);
    ws.close();
    expect((await ws.closed).code).not.toBe(4001);
  });

  it(`closes with 1008 when more than ${MAX_MESSAGES_BEFORE_ATTACH} messages wait for the subscription`, async () => {
    // Live-only: joining A's stream first looks up its newest event, one more round trip to Redis.
    const ws = await subscribe(b.url, 'q1', { token: TOKEN });
    for (let i = 0; i <= MAX_MESSAGES_BEFORE_ATTACH * 4; i++) ws.send({ type: 'cancel', runId: 'run-x' });
    const closed = await ws.waitClosed();
    expect(closed.code).toBe(1008);
    expect(closed.reason).toContain('before the subscription was attached');
  });
});
