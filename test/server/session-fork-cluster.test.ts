import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { redisServerConfig } from '../support/redis-target.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { A, as, conversation, TOKENS, type Info } from './fork-helpers.js';

describe('fork across two nodes (Redis)', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    // One workspace root for both nodes, as a cluster shares its volumes.
    const root = tempDir('a3s-fork-cluster-');
    const config = {
      ...redisServerConfig(),
      redisKeyPrefix: `a3s-fork-${Math.random().toString(36).slice(2)}:`,
      apiTokens: TOKENS,
    };
    a = await startTestServer({ fake, root, config: { ...config, nodeId: 'node-a' } });
    b = await startTestServer({ fake, root, config: { ...config, nodeId: 'node-b' } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it("a fork asked of the node that does not own the parent is made by the owner; it survives the owner's shutdown", async () => {
    const post = (t: TestServer, path: string, body: Record<string, unknown>) =>
      request(t.url).post(path).set(as(A)).send(body);
    await post(a, '/v1/sessions', { sessionId: 'on-a', autoSave: true }).expect(201);
    fake.script({ text: 'one' }, { text: 'two' });
    await post(a, '/v1/sessions/on-a/runs', { input: 'first', wait: true }).expect(200);
    const second = (await post(a, '/v1/sessions/on-a/runs', { input: 'second', wait: true }).expect(200)).body
      .runId as string;

    // Asked of B: forwarded to A, which owns the parent and so makes the fork.
    const forked = (await post(b, '/v1/sessions/on-a/fork', { atRunId: second, sessionId: 'fork-b' }).expect(201)).body
      .session as Info;
    expect(forked).toMatchObject({ id: 'fork-b', messageCount: 2, forkedFrom: { sessionId: 'on-a', atMessage: 2 } });
    const listedOnA = (await request(a.url).get('/v1/sessions?forkedFrom=on-a').set(as(A)).expect(200)).body
      .sessions as Info[];
    expect(listedOnA.map((s) => s.id)).toEqual(['fork-b']);

    // A shuts down (saving both); B takes the fork over from Redis, still a fork, with its transcript.
    await a.close();
    const info = (await request(b.url).get('/v1/sessions/fork-b').set(as(A)).expect(200)).body.session as Info;
    expect(info).toMatchObject({ messageCount: 2, forkedFrom: { sessionId: 'on-a', atRunId: second, atMessage: 2 } });
    fake.script({
      expect: (r) => expect(conversation(r)).toEqual(['user:first', 'assistant:one', 'user:on b']),
      text: 'b answers',
    });
    expect(
      (await post(b, '/v1/sessions/fork-b/runs', { input: 'on b', wait: true }).expect(200)).body.result.text,
    ).toBe('b answers');
    // The parent's run records came over too: B forks it at a run as well.
    const again = (await post(b, '/v1/sessions/on-a/fork', { atRunId: second }).expect(201)).body.session as Info;
    expect(again).toMatchObject({ messageCount: 2, forkedFrom: { sessionId: 'on-a', atRunId: second } });
    fake.assertDone();
  });
});
