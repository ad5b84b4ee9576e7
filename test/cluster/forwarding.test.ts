import { createServer, get as httpGet, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSecretsOf } from '../../src/cluster/cluster-secrets.js';
import { ForwardedHeaders } from '../../src/cluster/forwarded-header.js';
import { nodeKey } from '../../src/cluster/node-identity.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { connectRedisTarget, startRedisNodes } from '../support/redis-target.js';
import { tempDir, TEST_CLUSTER_SECRET, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

const TOKEN = 'tenant-a-forwarding-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const ASK_LS = {
  permissionPolicy: { ask: ['ls'], defaultDecision: 'allow' },
  confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 },
};

async function pendingOn(url: string, sessionId: string): Promise<{ toolId: string }> {
  for (let i = 0; i < 200; i++) {
    const res = await request(url).get(`/v1/sessions/${sessionId}/confirmations`).set(auth).expect(200);
    const [first] = res.body.confirmations as { toolId: string }[];
    if (first) return first;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no confirmation became pending');
}

describe('any node serves any request: requests for a session another node owns are forwarded there', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  let prefix: string;
  beforeAll(async () => {
    fake = await startFakeProvider();
    [a, b] = await startRedisNodes(fake, 'a3s-fwd', {
      apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
    });
    prefix = a.config.redisKeyPrefix;
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('a default session (no autoSave) created on A answers on B: info, runs, history, runs list, SSE', async () => {
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'plain' }).expect(201);
    const info = await request(b.url).get('/v1/sessions/plain').set(auth).expect(200);
    expect(info.body).toMatchObject({ session: { id: 'plain' } });
    fake.script({ text: 'hello from A' });
    const run = await request(b.url)
      .post('/v1/sessions/plain/runs')
      .set(auth)
      .send({ input: 'hi', wait: true })
      .expect(200);
    expect(run.body.result.text).toBe('hello from A');
    const history = await request(b.url).get('/v1/sessions/plain/history').set(auth).expect(200);
    expect(JSON.stringify(history.body)).toContain('hello from A');
    const runs = await request(b.url).get('/v1/sessions/plain/runs').set(auth).expect(200);
    expect(JSON.stringify(runs.body)).toContain(run.body.runId);
    // SSE through B, streamed from A as it comes (its own connection, closed at the end: no idle socket left).
    const text = await new Promise<string>((resolve, reject) => {
      const req = httpGet(
        `${b.url}/v1/sessions/plain/events?after=0`,
        { headers: { ...auth, accept: 'text/event-stream' } },
        (res) => {
          expect(res.statusCode).toBe(200);
          expect(res.headers['content-type']).toContain('text/event-stream');
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString('utf8');
            if (body.includes('event: agent_end')) {
              req.destroy();
              resolve(body);
            }
          });
        },
      );
      req.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
    });
    expect(text).toContain('id: 1\n');
    // Nothing of A's address reaches the client.
    expect(JSON.stringify([info.body, run.body, history.body, runs.body])).not.toContain(a.url);
  });

  it('a WebSocket on B is proxied whole to A: confirmations answered over it reach the run on A', async () => {
    await request(a.url)
      .post('/v1/sessions')
      .set(auth)
      .send({ sessionId: 'ws-confirm', ...ASK_LS })
      .expect(201);
    const ws = await subscribe(b.url, 'ws-confirm', { after: 0, token: TOKEN });
    fake.script({ toolCalls: [{ id: 'c1', name: 'ls', arguments: {} }] }, { text: 'listed' });
    const run = request(b.url).post('/v1/sessions/ws-confirm/runs').set(auth).send({ input: 'list', wait: true });
    const done = run.then((res) => res);
    const asked = await ws.waitFor((e) => e.type === 'confirmation_required');
    ws.send({ type: 'confirm', toolId: (asked.payload as { tool_id: string }).tool_id, approved: true });
    const result = await done;
    expect(result.status).toBe(200);
    expect(result.body.result.text).toBe('listed');
    await ws.waitFor(() => ws.controls.some((c) => c.type === 'confirm_result'));
    await ws.waitFor((e) => e.type === 'agent_end');
    expect(ws.controls.some((c) => c.type === 'error')).toBe(false);
    ws.close();
  });

  it('REST confirmations and cancels on B act on the run on A', async () => {
    await request(a.url)
      .post('/v1/sessions')
      .set(auth)
      .send({ sessionId: 'rest-confirm', ...ASK_LS })
      .expect(201);
    fake.script({ toolCalls: [{ id: 'c2', name: 'ls', arguments: {} }] }, { text: 'rejected then done' });
    const run = request(b.url)
      .post('/v1/sessions/rest-confirm/runs')
      .set(auth)
      .send({ input: 'list', wait: true })
      .then((res) => res);
    const asked = await pendingOn(b.url, 'rest-confirm');
    await request(b.url)
      .post(`/v1/sessions/rest-confirm/confirmations/${encodeURIComponent(asked.toolId)}`)
      .set(auth)
      .send({ approved: false, reason: 'not now' })
      .expect(200);
    expect((await run).body.result.text).toBe('rejected then done');
  });

  it('a browser request forwarded to the owner keeps its Host, so the Origin check at the owner sees the origin the browser used', async () => {
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'browser' }).expect(201);
    const bOrigin = `http://${new URL(b.url).host}`;
    fake.script({ text: 'from a page' });
    const run = await request(b.url)
      .post('/v1/sessions/browser/runs')
      .set(auth)
      .set('origin', bOrigin)
      .send({ input: 'hi', wait: true })
      .expect(200);
    expect(run.body.result.text).toBe('from a page');
    const ws = await subscribe(b.url, 'browser', { after: 0, token: TOKEN, headers: { origin: bOrigin } });
    await ws.waitFor((e) => e.type === 'agent_end');
    ws.close();
    // A foreign page is refused on either side of the hop.
    const foreign = await request(b.url)
      .post('/v1/sessions/browser/runs')
      .set(auth)
      .set('origin', 'http://evil.example')
      .send({ input: 'x', wait: true })
      .expect(403);
    expect(foreign.body.error.code).toBe('ORIGIN_NOT_ALLOWED');
  });

  it('with A3S-Route: no-forward the client gets 421 naming the owner, and nothing else changes', async () => {
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'no-fwd' }).expect(201);
    const res = await request(b.url).get('/v1/sessions/no-fwd').set(auth).set('a3s-route', 'no-forward').expect(421);
    expect(res.body.error).toMatchObject({
      code: 'SESSION_OWNED_ELSEWHERE',
      details: { ownerNodeId: 'node-a', ownerUrl: a.url },
    });
    // The header never widens what a caller may do: without credentials it is still 401 on either node.
    await request(b.url).get('/v1/sessions/no-fwd').set('a3s-route', 'no-forward').expect(401);
    await request(b.url).get('/v1/sessions/no-fwd').set('a3s-route', 'anything').expect(401);
  });

  it('forged, replayed, expired and foreign-key A3S-Forwarded headers are refused with 401 FORWARDED_INVALID', async () => {
    const url = '/v1/sessions/none';
    const good = new ForwardedHeaders(clusterSecretsOf({ id: '1', secret: TEST_CLUSTER_SECRET }), 'node-x');
    const header = good.sign('GET', url, '10.0.0.1');
    // The first use passes the hop check (then the client's own credentials decide: 404 for an unknown session).
    await request(a.url).get(url).set(auth).set('a3s-forwarded', header).expect(404);
    const replay = await request(a.url).get(url).set(auth).set('a3s-forwarded', header).expect(401);
    expect(replay.body.error).toMatchObject({ code: 'FORWARDED_INVALID', details: { reason: 'replayed' } });
    const forged = new ForwardedHeaders(
      clusterSecretsOf({ id: '1', secret: 'another-secret-that-is-long-enough-0000' }),
      'node-x',
    ).sign('GET', url, '10.0.0.1');
    expect(
      (await request(a.url).get(url).set(auth).set('a3s-forwarded', forged).expect(401)).body.error.details.reason,
    ).toBe('bad_signature');
    // A signature for another path, method or key id is no signature for this one.
    expect(
      (
        await request(a.url)
          .get(url)
          .set(auth)
          .set('a3s-forwarded', good.sign('GET', '/v1/sessions/other', '10.0.0.1'))
          .expect(401)
      ).body.error.details.reason,
    ).toBe('bad_signature');
    expect(
      (
        await request(a.url)
          .delete(url)
          .set(auth)
          .set('a3s-forwarded', good.sign('GET', url, '10.0.0.1'))
          .expect(401)
      ).body.error.details.reason,
    ).toBe('bad_signature');
    const otherKey = new ForwardedHeaders(clusterSecretsOf({ id: '9', secret: TEST_CLUSTER_SECRET }), 'node-x').sign(
      'GET',
      url,
      '10.0.0.1',
    );
    expect(
      (await request(a.url).get(url).set(auth).set('a3s-forwarded', otherKey).expect(401)).body.error.details.reason,
    ).toBe('bad_signature');
    const old = new ForwardedHeaders(
      clusterSecretsOf({ id: '1', secret: TEST_CLUSTER_SECRET }),
      'node-x',
      () => Date.now() - 120_000,
    ).sign('GET', url, '10.0.0.1');
    expect(
      (await request(a.url).get(url).set(auth).set('a3s-forwarded', old).expect(401)).body.error.details.reason,
    ).toBe('expired');
    const twoHops = good.sign('GET', url, '10.0.0.1').replace(';hop=1;', ';hop=2;');
    expect(
      (await request(a.url).get(url).set(auth).set('a3s-forwarded', twoHops).expect(401)).body.error.details.reason,
    ).toBe('bad_signature');
    expect(
      (await request(a.url).get(url).set(auth).set('a3s-forwarded', 'v1;garbage').expect(401)).body.error.details
        .reason,
    ).toBe('malformed');
  });

  it('an advertise URL in Redis that matches no peer_urls entry is never contacted: 502 OWNER_UNREACHABLE', async () => {
    const decoy: Server = createServer((_req, res) => {
      decoyHits += 1;
      res.end('{}');
    });
    let decoyHits = 0;
    await new Promise<void>((resolve) => decoy.listen(0, '127.0.0.1', resolve));
    const redis = connectRedisTarget();
    try {
      await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'decoyed' }).expect(201);
      // Someone with write access to Redis rewrites A's advertisement to an address outside peer_urls.
      const key = nodeKey(prefix, 'node-a');
      const record = JSON.parse((await redis.get(key)) ?? '{}') as Record<string, unknown>;
      const decoyUrl = `http://localhost:${(decoy.address() as AddressInfo).port}`;
      await redis.set(key, JSON.stringify({ ...record, url: decoyUrl }), 'PX', 5000);
      const res = await request(b.url).get('/v1/sessions/decoyed').set(auth).expect(502);
      expect(res.body.error).toMatchObject({ code: 'OWNER_UNREACHABLE' });
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body.error.message).toContain('peer_urls');
      expect(decoyHits).toBe(0);
      await redis.set(key, JSON.stringify(record), 'PX', 5000);
    } finally {
      redis.disconnect();
      await new Promise((resolve) => decoy.close(resolve));
    }
  });
});

describe('a node that is gone: its unsaved sessions answer 410 NODE_LOST, its saved ones move', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    // Workspaces on storage both nodes mount at the same path, as a cluster needs.
    [a, b] = await startRedisNodes(fake, 'a3s-lost', {
      apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
      workspaceRoots: [tempDir('a3s-shared-ws-')],
    });
  });
  afterAll(async () => {
    await b?.close();
    await fake?.close();
  });

  it('after A stops, B answers NODE_LOST for the unsaved session and serves the saved one', async () => {
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'gone' }).expect(201);
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'kept', autoSave: true }).expect(201);
    await request(b.url).get('/v1/sessions/gone').set(auth).expect(200);
    const follower = await subscribe(a.url, 'kept', { after: 0, token: TOKEN });
    await a.close();
    // Its sessions move to another node: 1012 (service restart) tells clients to reconnect, through any node.
    expect((await follower.waitClosed()).code).toBe(1012);
    for (const path of ['/v1/sessions/gone', '/v1/sessions/gone/history', '/v1/sessions/gone/runs']) {
      const res = await request(b.url).get(path).set(auth).expect(410);
      expect(res.body.error).toMatchObject({ code: 'NODE_LOST', details: { sessionId: 'gone', nodeId: 'node-a' } });
    }
    const lostRun = await request(b.url)
      .post('/v1/sessions/gone/runs')
      .set(auth)
      .send({ input: 'x', wait: true })
      .expect(410);
    expect(lostRun.body.error.code).toBe('NODE_LOST');
    await request(b.url).get('/v1/sessions/kept').set(auth).expect(200);
    // A session that never existed is still 404.
    await request(b.url).get('/v1/sessions/never').set(auth).expect(404);
  });
});
