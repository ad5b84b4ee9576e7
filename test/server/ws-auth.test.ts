import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { AUTH_TIMEOUT_MS } from '../../src/routes/events-ws.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe, type EventSubscriber } from '../support/ws-client.js';

const TOKEN_A = 'tenant-a-token-0123456789';
const TOKEN_B = 'tenant-b-token-0123456789';
const TOKEN_A_NO_SESSIONS = 'tenant-a-hostonly-012345';
const ADMIN = 'admin-token-0123456789abc';

const isEnd = (e: EventEnvelope) => e.type === 'agent_end';

/** Resolve when a pong answers a ping sent now. */
async function pingPong(sub: EventSubscriber): Promise<void> {
  const before = sub.controls.filter((c) => c.type === 'pong').length;
  sub.send({ type: 'ping' });
  await sub.waitFor(() => sub.controls.filter((c) => c.type === 'pong').length > before);
}

describe('WebSocket event stream: authentication and tenancy', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: {
        apiTokens: [
          { token: TOKEN_A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
          { token: TOKEN_B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
          { token: TOKEN_A_NO_SESSIONS, principal: 'ci', tenantId: 'tenant-a', scopes: ['host_direct'] },
          { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
        ],
      },
    });
    await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${TOKEN_A}`)
      .send({ sessionId: 's-a' })
      .expect(201);
    t.fake.script({ text: 'secret of tenant a' });
    await request(t.url)
      .post('/v1/sessions/s-a/runs')
      .set('authorization', `Bearer ${TOKEN_A}`)
      .send({ input: 'hi', wait: true })
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
  });

  it('accepts a bearer token in the Authorization header', async () => {
    const sub = await subscribe(t.url, 's-a', { after: 0, token: TOKEN_A });
    const end = await sub.waitFor(isEnd);
    expect(end.metadata).toMatchObject({ session_id: 's-a', tenant_id: 'tenant-a', principal: 'alice' });
    expect(sub.sequences()[0]).toBe(1);
    sub.close();
  });

  it('accepts a first {"type":"auth"} message, and refuses other messages before it without closing', async () => {
    const sub = await subscribe(t.url, 's-a', { after: 0 });
    sub.send({ type: 'ping' });
    const refused = await sub.waitFor((f) => f.type === 'error');
    expect(refused.payload).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(sub.events).toEqual([]);
    sub.send({ type: 'auth', token: TOKEN_A });
    await sub.waitFor(isEnd);
    await pingPong(sub);
    expect(sub.sequences()[0]).toBe(1);
    expect(sub.socket.readyState).toBe(sub.socket.OPEN);
    sub.close();
  });

  it('closes with 4001 on a wrong token, by message or by header', async () => {
    const byMessage = await subscribe(t.url, 's-a', { after: 0 });
    byMessage.send({ type: 'auth', token: 'not-a-valid-token-at-all' });
    expect((await byMessage.waitClosed()).code).toBe(4001);
    expect(byMessage.events).toEqual([]);

    const byHeader = await subscribe(t.url, 's-a', { after: 0, token: 'not-a-valid-token-at-all' });
    expect((await byHeader.waitClosed()).code).toBe(4001);
    expect(byHeader.events).toEqual([]);

    const malformedHeader = await subscribe(t.url, 's-a', { after: 0, headers: { authorization: `Token ${TOKEN_A}` } });
    expect((await malformedHeader.waitClosed()).code).toBe(4001);
  });

  it('closes with 4001 after too many messages before authentication', async () => {
    const sub = await subscribe(t.url, 's-a', { after: 0 });
    for (let i = 0; i < 20; i += 1) sub.send({ type: 'ping' });
    expect((await sub.waitClosed()).code).toBe(4001);
    expect(sub.controls.every((c) => c.type === 'error')).toBe(true);
    expect(sub.events).toEqual([]);
  });

  it("closes with 4004 for another tenant's session and never sends its events", async () => {
    const byHeader = await subscribe(t.url, 's-a', { after: 0, token: TOKEN_B });
    expect((await byHeader.waitClosed()).code).toBe(4004);
    expect(byHeader.frames).toEqual([]);

    const byMessage = await subscribe(t.url, 's-a', { after: 0 });
    byMessage.send({ type: 'auth', token: TOKEN_B });
    expect((await byMessage.waitClosed()).code).toBe(4004);
    expect(byMessage.frames).toEqual([]);

    // The same answer as for a session that does not exist at all.
    const unknown = await subscribe(t.url, 'no-such-session', { after: 0, token: TOKEN_B });
    const closed = await unknown.waitClosed();
    expect(closed.code).toBe(4004);
    expect(closed.reason).toContain('not found');
  });

  it('closes with 4003 for a token without the sessions scope; admin sees every tenant', async () => {
    const hostOnly = await subscribe(t.url, 's-a', { after: 0, token: TOKEN_A_NO_SESSIONS });
    expect((await hostOnly.waitClosed()).code).toBe(4003);
    expect(hostOnly.frames).toEqual([]);

    const admin = await subscribe(t.url, 's-a', { after: 0, token: ADMIN, tenantId: 'tenant-a' });
    await admin.waitFor(isEnd);
    admin.close();
  });

  it(
    `closes with 4001 when no auth message arrives within ${AUTH_TIMEOUT_MS} ms`,
    async () => {
      const started = Date.now();
      const sub = await subscribe(t.url, 's-a', { after: 0 });
      const closed = await sub.waitClosed(AUTH_TIMEOUT_MS + 10_000);
      expect(closed.code).toBe(4001);
      expect(closed.reason).toContain('no auth message');
      // Not before the timeout (no upper bound: the machine may be slow).
      expect(Date.now() - started).toBeGreaterThanOrEqual(AUTH_TIMEOUT_MS - 50);
      expect(sub.frames).toEqual([]);
    },
    AUTH_TIMEOUT_MS + 20_000,
  );
});
