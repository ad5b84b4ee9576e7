import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startRedisNodes } from '../support/redis-target.js';
import { openSse } from '../support/sse-client.js';
import type { TestServer } from '../support/test-server.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const isEndOf = (runId: string) => (e: EventEnvelope) => e.type === 'agent_end' && e.metadata.run_id === runId;

describe('SSE on the node that does not own the session (follows the Redis stream)', () => {
  const TOKEN = 'cluster-sse-token-0123456789';
  const auth = { authorization: `Bearer ${TOKEN}` };
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    const apiTokens = [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }];
    // No peer_urls: B forwards nothing, so its SSE readers follow A's stream through Redis (the path tested here).
    [a, b] = await startRedisNodes(fake, 'a3s-sse', { apiTokens, cluster: { peerUrls: [] } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it("a reader on B, cut mid-run, resumes on B with Last-Event-ID and sees every event of A's run once, in order", async () => {
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'c1', autoSave: true }).expect(201);
    fake.script({ text: 'first' });
    const run1 = (
      await request(a.url).post('/v1/sessions/c1/runs').set(auth).send({ input: 'one', wait: true }).expect(200)
    ).body.runId as string;
    const first = await openSse(`${b.url}/v1/sessions/c1/events?after=0`, auth);
    expect(first.status).toBe(200);
    await first.waitFor(isEndOf(run1));

    const chunks = 50;
    fake.script({ text: 'b'.repeat(chunks), chunks, chunkDelayMs: 20 });
    const run2 = (await request(a.url).post('/v1/sessions/c1/runs').set(auth).send({ input: 'two' }).expect(202)).body
      .runId as string;
    await first.waitFor(
      (e) => e.metadata.run_id === run2 && e.type === 'text_delta' && (e.metadata.sequence ?? 0) >= 8,
    );
    first.abort();
    await first.ended;
    const cursor = Number(first.lastId());

    const resumed = await openSse(`${b.url}/v1/sessions/c1/events`, { ...auth, 'last-event-id': String(cursor) });
    expect(resumed.status).toBe(200);
    const end = await resumed.waitFor(isEndOf(run2));
    const all = [...first.events(), ...resumed.events()].map((e) => e.metadata.session_sequence);
    expect(all).toEqual(range(1, end.metadata.session_sequence));
    expect(resumed.events().every((e) => e.metadata.session_id === 'c1')).toBe(true);
    resumed.abort();

    // A ticket issued by B opens the stream on B too.
    const { ticket } = (await request(b.url).post('/v1/auth/ticket').set(auth).send({ sessionId: 'c1' }).expect(200))
      .body as { ticket: string };
    const byTicket = await openSse(
      `${b.url}/v1/sessions/c1/events?after=${end.metadata.session_sequence - 1}&ticket=${ticket}`,
    );
    const last = await byTicket.waitFor(isEndOf(run2));
    expect(byTicket.events()).toEqual([last]);
    byTicket.abort();
  });
});
