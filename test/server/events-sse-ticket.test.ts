import { EventSource } from 'eventsource';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { openSse } from '../support/sse-client.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789';
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const eventsOfTextRun = (chunks: number) => chunks + 12;
const TTL_MS = 1500;

describe('EventSource auth with tickets (POST /v1/auth/ticket)', () => {
  let t: TestServer;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const ticketFor = async (
    token: string,
    sessionId: string,
  ): Promise<{ ticket: string; expiresAt: string; expiresAtMs: number }> =>
    (await request(t.url).post('/v1/auth/ticket').set(as(token)).send({ sessionId }).expect(200)).body;
  beforeAll(async () => {
    t = await startTestServer({
      config: {
        apiTokens: [
          { token: ALICE, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
          { token: BOB, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
        ],
        limits: { eventTicketTtlMs: TTL_MS },
      },
    });
    for (const id of ['s1', 's2'])
      await request(t.url).post('/v1/sessions').set(as(ALICE)).send({ sessionId: id }).expect(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("issues a ticket bound to the session; it opens that session's stream, again and again, without a header", async () => {
    const before = Date.now();
    const issued = await ticketFor(ALICE, 's1');
    expect(issued.ticket).toMatch(/^[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{43}$/);
    expect(issued.expiresAtMs).toBeGreaterThanOrEqual(before + TTL_MS);
    expect(issued.expiresAtMs).toBeLessThanOrEqual(Date.now() + TTL_MS);
    expect(new Date(issued.expiresAt).getTime()).toBe(issued.expiresAtMs);
    t.fake.script({ text: 'hello' });
    const runId = (
      await request(t.url).post('/v1/sessions/s1/runs').set(as(ALICE)).send({ input: 'hi', wait: true }).expect(200)
    ).body.runId as string;
    for (let i = 0; i < 2; i += 1) {
      const reader = await openSse(`${t.url}/v1/sessions/s1/events?after=0&ticket=${issued.ticket}`);
      expect(reader.status).toBe(200);
      await reader.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === runId);
      expect(reader.events()[0]?.metadata.session_id).toBe('s1');
      reader.abort();
    }
  });

  it("is refused (401) on another session, on any other route, beside another caller's token, and the ticket route needs a token", async () => {
    const { ticket } = await ticketFor(ALICE, 's1');
    const other = await openSse(`${t.url}/v1/sessions/s2/events?ticket=${ticket}`);
    expect(other.status).toBe(401);
    expect(other.body).toMatchObject({
      error: { code: 'UNAUTHORIZED', message: expect.stringContaining('query.ticket') },
    });
    for (const path of ['/v1/sessions/s1', '/v1/sessions', '/v1/sessions/s1/runs', '/v1/sessions/s1/history']) {
      const response = await request(t.url).get(`${path}?ticket=${ticket}`);
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
    }
    // A ticket is its issuer's: with another tenant's token beside it, refused.
    const mixed = await openSse(`${t.url}/v1/sessions/s1/events?ticket=${ticket}`, as(BOB));
    expect(mixed.status).toBe(401);
    const unknown = await openSse(`${t.url}/v1/sessions/s1/events?ticket=not-a-ticket`);
    expect(unknown.status).toBe(401);
    // Without a ticket or header: 401.
    expect((await openSse(`${t.url}/v1/sessions/s1/events`)).status).toBe(401);
    await request(t.url).post('/v1/auth/ticket').send({ sessionId: 's1' }).expect(401);
    const bad = await request(t.url).post('/v1/auth/ticket').set(as(ALICE)).send({ session: 's1' }).expect(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect(bad.body.error.message).toContain('body');
    // Another tenant naming tenant-a is forbidden; another tenant's ticket for "s1" names its own (missing) s1.
    await request(t.url)
      .post('/v1/auth/ticket')
      .set(as(BOB))
      .send({ sessionId: 's1', tenantId: 'tenant-a' })
      .expect(403);
    const bobs = await ticketFor(BOB, 's1');
    const cross = await openSse(`${t.url}/v1/sessions/s1/events?after=0&ticket=${bobs.ticket}`);
    expect(cross.status).toBe(404);
    expect(cross.body).toMatchObject({ error: { code: 'SESSION_NOT_FOUND' } });
    const crossTenant = await openSse(`${t.url}/v1/sessions/s1/events?after=0&tenantId=tenant-a&ticket=${bobs.ticket}`);
    expect(crossTenant.status).toBe(403);
  });

  it('expires after limits.eventTicketTtlMs, but a stream opened with it stays open', async () => {
    const { ticket } = await ticketFor(ALICE, 's2');
    const open = await openSse(`${t.url}/v1/sessions/s2/events?ticket=${ticket}`);
    expect(open.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 200));
    const late = await openSse(`${t.url}/v1/sessions/s2/events?ticket=${ticket}`);
    expect(late.status).toBe(401);
    expect(late.body).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    t.fake.script({ text: 'still here' });
    const runId = (
      await request(t.url).post('/v1/sessions/s2/runs').set(as(ALICE)).send({ input: 'hi', wait: true }).expect(200)
    ).body.runId as string;
    await open.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === runId);
    open.abort();
  });
});

describe('EventSource (the eventsource package) over SSE', () => {
  const servers: TestServer[] = [];
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  afterAll(async () => {
    for (const server of servers) await server.close();
  });

  it("the eventsource package's EventSource, cut mid-run, reconnects with the same ticket URL and Last-Event-ID and sees every event once, in order", async () => {
    // EventSource waits 3 s before it reconnects: the default ticket lifetime (60 s) covers that.
    const t = await startTestServer({
      config: { apiTokens: [{ token: ALICE, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }] },
    });
    servers.push(t);
    await request(t.url).post('/v1/sessions').set(as(ALICE)).send({ sessionId: 'es-1' }).expect(201);
    const proxy = await startTcpProxy(t.url.replace('http:', 'redis:'));
    const base = proxy.url.replace('redis:', 'http:');
    try {
      const { ticket } = (
        await request(t.url).post('/v1/auth/ticket').set(as(ALICE)).send({ sessionId: 'es-1' }).expect(200)
      ).body as { ticket: string };
      const source = new EventSource(`${base}/v1/sessions/es-1/events?after=0&ticket=${ticket}`);
      const seen: EventEnvelope[] = [];
      let opens = 0;
      source.addEventListener('open', () => (opens += 1));
      const chunks = 80;
      const done = new Promise<void>((resolve) => {
        for (const type of [
          'agent_start',
          'run_status_changed',
          'context_resolving',
          'context_resolved',
          'run_capability_bound',
          'turn_start',
          'model_presentation_bound',
          'model_input_bound',
          'text_delta',
          'model_usage_bound',
          'turn_end',
          'agent_end',
        ]) {
          source.addEventListener(type, (message) => {
            const envelope = JSON.parse(message.data) as EventEnvelope;
            expect(message.lastEventId).toBe(String(envelope.metadata.session_sequence));
            seen.push(envelope);
            if (type === 'agent_end') resolve();
          });
        }
      });
      t.fake.script({ text: 'e'.repeat(chunks), chunks, chunkDelayMs: 60 });
      await request(t.url).post('/v1/sessions/es-1/runs').set(as(ALICE)).send({ input: 'go' }).expect(202);
      while (seen.length < 10) await new Promise((resolve) => setTimeout(resolve, 20));
      // Cut the link: the server end closes, EventSource reconnects (after its retry delay) through the proxy.
      proxy.cut('reset');
      proxy.restore();
      await done;
      source.close();
      expect(opens).toBeGreaterThanOrEqual(2);
      expect(seen.map((e) => e.metadata.session_sequence)).toEqual(range(1, eventsOfTextRun(chunks)));
    } finally {
      await proxy.close();
    }
  }, 30_000);
});
