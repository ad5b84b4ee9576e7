import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';
import { ECHO_SERVER } from '../mcp/mcp-test-helpers.js';
import { subscribe } from '../support/ws-client.js';

const ADMIN = 'token-cluster-admin-00000001';
const USER = 'token-cluster-user-000000001';
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

describe('cluster events, passivation and relabelling on one node', () => {
  let t: TestServer;
  let hooks: WebhookServer;
  beforeAll(async () => {
    hooks = await startWebhookServer({ '/observe': { body: { action: 'continue' } } });
    t = await startTestServer({
      config: {
        apiTokens: [
          { token: ADMIN, principal: 'ops', tenantId: 'ops', scopes: ['admin'] },
          { token: USER, principal: 'alice', tenantId: 'acme', scopes: ['sessions'] },
        ],
        // The sessions-only tenant registers a webhook on 127.0.0.1: only this operator switch lets it.
        outbound: { allowPrivateNetworks: true },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await hooks.close();
  });

  it('injected events reach subscribers and hooks; only admin may inject; bad payloads name the field', async () => {
    const id = (await request(t.url).post('/v1/sessions').set(auth(USER)).send({ correlationId: 'corr-1' }).expect(201))
      .body.session.id;
    await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .set(auth(USER))
      .send({ event: 'peer_invocation', endpoint: { type: 'webhook', url: hooks.url('/observe') } })
      .expect(201);
    const ws = await subscribe(t.url, id, { after: 0, token: USER });
    await request(t.url)
      .post(`/v1/sessions/${id}/cluster-events`)
      .set(auth(USER))
      .send({ type: 'peer_invocation', payload: { from_session_id: 's9', from_tenant_id: 't9', correlation_id: 'c9' } })
      .expect(403);
    await request(t.url)
      .post(`/v1/sessions/${id}/cluster-events?tenantId=acme`)
      .set(auth(ADMIN))
      .send({ type: 'peer_invocation', payload: { from_session_id: 's9', from_tenant_id: 't9', correlation_id: 'c9' } })
      .expect(202);
    const seen = await ws.waitFor((e) => e.type === 'peer_invocation');
    expect(seen.payload).toMatchObject({ from_session_id: 's9', correlation_id: 'c9' });
    expect(seen.metadata).toMatchObject({ tenant_id: 'acme', principal: 'alice', correlation_id: 'corr-1' });
    for (let i = 0; i < 100 && hooks.on('/observe').length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(hooks.on('/observe').at(-1)?.body).toMatchObject({ kind: 'peer_invocation', from_session_id: 's9' });
    const bad = await request(t.url)
      .post(`/v1/sessions/${id}/cluster-events?tenantId=acme`)
      .set(auth(ADMIN))
      .send({ type: 'passivation_requested', payload: { reason: 'manual', deadline_ms: -1 } })
      .expect(400);
    expect(bad.body.error.message).toContain('body.payload.deadline_ms');
    ws.close();
  });

  it('passivation saves the session and drops it from memory; the next request hydrates it with its history; resume may relabel', async () => {
    const id = (await request(t.url).post('/v1/sessions').set(auth(USER)).send({ correlationId: 'before' }).expect(201))
      .body.session.id;
    t.fake.script({ text: 'remember me' });
    await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(auth(USER))
      .send({ input: 'hello', wait: true })
      .expect(200);
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/cluster-events?tenantId=acme`)
      .set(auth(ADMIN))
      .send({ type: 'passivation_requested', payload: { reason: 'manual', deadline_ms: Date.now() + 1000 } })
      .expect(202);
    expect(out.body.passivated).toBe(true);
    const listed = (await request(t.url).get('/v1/sessions').set(auth(USER)).expect(200)).body.sessions.map(
      (s: { id: string }) => s.id,
    );
    expect(listed).not.toContain(id);
    const history = (await request(t.url).get(`/v1/sessions/${id}/history`).set(auth(USER)).expect(200)).body.messages;
    expect(history.map((m: { content: string }) => m.content)).toEqual(['hello', 'remember me']);
    await request(t.url)
      .post(`/v1/sessions/${id}/cluster-events?tenantId=acme`)
      .set(auth(ADMIN))
      .send({ type: 'passivation_requested', payload: { reason: 'migration' } })
      .expect(202);
    const relabelled = await request(t.url)
      .post('/v1/sessions')
      .set(auth(USER))
      .send({ sessionId: id, resume: true, correlationId: 'after' })
      .expect(201);
    expect(relabelled.body.session.labels).toMatchObject({ tenantId: 'acme', correlationId: 'after' });
    t.fake.assertDone();
  });
});

describe('the idle reaper', () => {
  it('passivates sessions idle longer than sessionIdleTimeoutMs; the next request hydrates them', async () => {
    const t = await startTestServer({ config: { sessionIdleTimeoutMs: 1000 } });
    try {
      const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
      let listed: string[] = [id];
      for (let i = 0; i < 100 && listed.includes(id); i++) {
        await new Promise((r) => setTimeout(r, 100));
        listed = (await request(t.url).get('/v1/sessions').expect(200)).body.sessions.map((s: { id: string }) => s.id);
      }
      expect(listed).not.toContain(id);
      expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.id).toBe(id);
    } finally {
      await t.close();
    }
  });

  it('keeps where it is a session with a WebSocket host attached or a stdio MCP server it started', async () => {
    // The echo server's script is in this checkout: mounted read-only into the sandbox its servers start in.
    const t = await startTestServer({
      config: { sessionIdleTimeoutMs: 1000, sandbox: { readOnlyPaths: [process.cwd()] } },
    });
    try {
      const plain = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id as string;
      const hosted = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id as string;
      const stdio = (
        await request(t.url)
          .post('/v1/sessions')
          .send({
            mcpServers: [
              {
                name: 'echo',
                transport: { type: 'stdio', command: process.execPath, args: [ECHO_SERVER, 'reaper-secret'] },
              },
            ],
          })
          .expect(201)
      ).body.session.id as string;
      const ws = await subscribe(t.url, hosted, { after: 0 });
      ws.send({ type: 'host_register' });
      await ws.waitFor(() => ws.controls.some((c) => c.type === 'host_registered'));
      const live = async () =>
        (await request(t.url).get('/v1/sessions').expect(200)).body.sessions.map(
          (s: { id: string }) => s.id,
        ) as string[];
      let listed = await live();
      for (let i = 0; i < 100 && listed.includes(plain); i++) {
        await new Promise((r) => setTimeout(r, 100));
        listed = await live();
      }
      expect(listed).not.toContain(plain);
      // Two more reaper rounds: the pinned ones stay live (their host and their server would not move).
      await new Promise((r) => setTimeout(r, 1200));
      expect(await live()).toEqual(expect.arrayContaining([hosted, stdio]));
      // Once the host leaves, its session is idle like any other.
      ws.close();
      for (let i = 0; i < 100 && listed.includes(hosted); i++) {
        await new Promise((r) => setTimeout(r, 100));
        listed = await live();
      }
      expect(listed).not.toContain(hosted);
      expect(listed).toContain(stdio);
    } finally {
      await t.close();
    }
  });
});
