import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { redisServerConfig, startRedisNodes } from '../support/redis-target.js';
import { openSse } from '../support/sse-client.js';
import { startTestServer, TEST_CLUSTER_SECRET, type TestServer } from '../support/test-server.js';

const ALICE = 'alice-cluster-ticket-token-0123456789';
const BOB = 'bob-cluster-ticket-token-0123456789';
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const NO_FORWARD = { 'a3s-route': 'no-forward' };
const TTL_MS = 1500;

describe('SSE tickets across nodes: a ticket issued by A opens the stream on B (signed with the cluster secret)', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  const apiTokens = [
    { token: ALICE, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
    { token: BOB, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  ];
  beforeAll(async () => {
    fake = await startFakeProvider();
    [a, b] = await startRedisNodes(fake, 'a3s-ticket', { apiTokens, limits: { eventTicketTtlMs: TTL_MS } });
    for (const id of ['t1', 't2'])
      await request(a.url).post('/v1/sessions').set(as(ALICE)).send({ sessionId: id, autoSave: true }).expect(201);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  const ticketOn = async (url: string, token: string, sessionId: string): Promise<string> =>
    (
      (await request(url).post('/v1/auth/ticket').set(as(token)).send({ sessionId }).expect(200)).body as {
        ticket: string;
      }
    ).ticket;

  it("opens t1 on B without forwarding, again and again; not t2, not another tenant's, not tampered, not after expiry", async () => {
    fake.script({ text: 'over the cluster' });
    const runId = (
      await request(a.url).post('/v1/sessions/t1/runs').set(as(ALICE)).send({ input: 'hi', wait: true }).expect(200)
    ).body.runId as string;
    const ticket = await ticketOn(a.url, ALICE, 't1');
    for (let i = 0; i < 2; i += 1) {
      const reader = await openSse(`${b.url}/v1/sessions/t1/events?after=0&ticket=${ticket}`, NO_FORWARD);
      expect(reader.status).toBe(200);
      await reader.waitFor((e: EventEnvelope) => e.type === 'agent_end' && e.metadata.run_id === runId);
      reader.abort();
    }
    const other = await openSse(`${b.url}/v1/sessions/t2/events?after=0&ticket=${ticket}`, NO_FORWARD);
    expect(other.status).toBe(401);
    expect(other.body).toMatchObject({
      error: { code: 'UNAUTHORIZED', message: expect.stringContaining('query.ticket') },
    });
    // Beside another tenant's token: refused; another tenant's ticket names its own (missing) t1.
    expect(
      (await openSse(`${b.url}/v1/sessions/t1/events?ticket=${ticket}`, { ...NO_FORWARD, ...as(BOB) })).status,
    ).toBe(401);
    const bobs = await ticketOn(a.url, BOB, 't1');
    const cross = await openSse(`${b.url}/v1/sessions/t1/events?after=0&ticket=${bobs}`, NO_FORWARD);
    expect(cross.status).toBe(404);
    const [body, mac] = ticket.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const longer = Buffer.from(JSON.stringify({ ...claims, exp: (claims.exp as number) + 3_600_000 })).toString(
      'base64url',
    );
    expect((await openSse(`${b.url}/v1/sessions/t1/events?after=0&ticket=${longer}.${mac}`, NO_FORWARD)).status).toBe(
      401,
    );
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 100));
    const late = await openSse(`${b.url}/v1/sessions/t1/events?after=0&ticket=${ticket}`, NO_FORWARD);
    expect(late.status).toBe(401);
  });

  it("a key rotation: a node whose previous_secret is the issuer's key accepts the ticket; one that no longer has that key refuses it", async () => {
    const NEXT = 'next-cluster-secret-0123456789abcdefgh';
    const node = (nodeId: string, cluster: Record<string, unknown>) =>
      startTestServer({
        fake,
        config: {
          ...redisServerConfig(),
          redisKeyPrefix: a.config.redisKeyPrefix,
          nodeId,
          apiTokens,
          limits: { eventTicketTtlMs: 60_000 },
          cluster: { ...cluster, peerUrls: [] },
        },
      });
    const rotating = await node('node-c', {
      secret: NEXT,
      secretId: '2',
      previousSecret: TEST_CLUSTER_SECRET,
      previousSecretId: '1',
    });
    const rotated = await node('node-d', { secret: NEXT, secretId: '2' });
    try {
      const fromA = await ticketOn(a.url, ALICE, 't1');
      const accepted = await openSse(`${rotating.url}/v1/sessions/t1/events?after=0&ticket=${fromA}`, NO_FORWARD);
      expect(accepted.status).toBe(200);
      accepted.abort();
      const refused = await openSse(`${rotated.url}/v1/sessions/t1/events?after=0&ticket=${fromA}`, NO_FORWARD);
      expect(refused.status).toBe(401);
      // A ticket the rotated node signs (key 2) opens the stream on the rotating node too.
      const fromD = await ticketOn(rotated.url, ALICE, 't1');
      const both = await openSse(`${rotating.url}/v1/sessions/t1/events?after=0&ticket=${fromD}`, NO_FORWARD);
      expect(both.status).toBe(200);
      both.abort();
    } finally {
      await rotated.close();
      await rotating.close();
    }
  });
});
