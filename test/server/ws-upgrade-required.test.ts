import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

const TOKEN = 'upgrade-token-0123456789';

describe('GET /v1/sessions/:id/events without the WebSocket upgrade', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: { apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'acme', scopes: ['sessions'] }] },
    });
    await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${TOKEN}`)
      .send({ sessionId: 'up-1' })
      .expect(201);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 426 UPGRADE_REQUIRED with the error envelope, the same for an existing session, a missing one and no token', async () => {
    const bodies: unknown[] = [];
    for (const [path, token] of [
      ['/v1/sessions/up-1/events', TOKEN],
      ['/v1/sessions/nobody/events?after=0', TOKEN],
      ['/v1/sessions/up-1/events', undefined],
    ] as const) {
      const call = request(t.url).get(path);
      if (token) void call.set('authorization', `Bearer ${token}`);
      const response = await call.expect(426);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers.upgrade).toBe('websocket');
      expect(response.body.error).toMatchObject({ code: 'UPGRADE_REQUIRED', details: {} });
      expect(response.body.error.message).toContain('WebSocket');
      bodies.push(response.body);
    }
    // Nothing in the answer tells whether the session exists or whether the caller could see it.
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });

  it('still upgrades to a WebSocket that replays and answers pings', async () => {
    t.fake.script({ text: 'hello over the socket' });
    await request(t.url)
      .post('/v1/sessions/up-1/runs')
      .set('authorization', `Bearer ${TOKEN}`)
      .send({ input: 'hi', wait: true })
      .expect(200);
    const ws = await subscribe(t.url, 'up-1', { after: 0, token: TOKEN });
    const end = await ws.waitFor((e) => e.type === 'agent_end');
    expect(end.metadata).toMatchObject({ session_id: 'up-1' });
    expect(ws.sequences()[0]).toBe(1);
    ws.send({ type: 'ping' });
    await ws.waitFor((f) => f.type === 'pong');
    ws.close();
  });
});
