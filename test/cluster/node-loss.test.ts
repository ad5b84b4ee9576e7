import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MainProcess } from '../support/main-process.js';
import { startNginx, type NginxBalancer } from '../support/nginx-balancer.js';
import { retry, startProcessCluster, type ProcessCluster } from '../support/process-cluster.js';
import type { FakeProvider } from '../support/fake-provider.js';

const TOKEN = 'tenant-a-node-loss-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

interface Answer {
  status: number;
  body: { error?: { code?: string }; run?: { status?: string } } & Record<string, unknown>;
}

// Two server processes on one Redis behind Debian's nginx; node A is frozen (SIGSTOP: alive but hung) and
// then killed (SIGKILL) in the middle of runs, as a crashed or partitioned container would be.
describe('a node dies mid-run behind the balancer', () => {
  let cluster: ProcessCluster;
  let fake: FakeProvider;
  let a: MainProcess;
  let aUrl: string;
  let bUrl: string;
  let lb: NginxBalancer;
  beforeAll(async () => {
    // Short heartbeats and leases, so a dead node is noticed within a few seconds.
    cluster = await startProcessCluster({
      apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
      cluster: { nodeTtlMs: 1500, leaseTtlMs: 3000 },
    });
    ({ fake, a, urlA: aUrl, urlB: bUrl } = cluster);
    lb = await startNginx([new URL(aUrl).host, new URL(bUrl).host]);
  }, 120_000);
  afterAll(async () => {
    await lb?.close();
    await cluster?.close();
  });

  /** Ask until `done` holds, keeping every answer (nothing may be a 404 or a 421). */
  const until = async (
    ask: () => Promise<Answer>,
    done: (answer: Answer) => boolean,
    seen: Answer[],
  ): Promise<Answer> => {
    const answer = await retry(
      async () => {
        const got = await ask();
        seen.push(got);
        return got;
      },
      done,
      20_000,
    );
    if (!done(answer)) throw new Error(`still ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer;
  };

  it('a forward to a hung owner ends when its heartbeat stops; then its saved session resumes on B and its unsaved one is 410 NODE_LOST', async () => {
    const seen: Answer[] = [];
    await request(aUrl)
      .post('/v1/sessions')
      .set(auth)
      .send({ sessionId: 'saved', autoSave: true, autoResume: true, permissionPolicy: { defaultDecision: 'allow' } })
      .expect(201);
    await request(aUrl).post('/v1/sessions').set(auth).send({ sessionId: 'plain' }).expect(201);

    // A forwarded wait that outlasts the owner check runs to its end: the hop has no deadline of its own.
    fake.script({ text: 'slow but alive', delayMs: 3000 });
    const slow = await request(bUrl)
      .post('/v1/sessions/plain/runs')
      .set(auth)
      .send({ input: 'take your time', wait: true })
      .expect(200);
    expect(slow.body.result.text).toBe('slow but alive');

    // A run on the saved session: one tool round (checkpointed), then the model hangs.
    fake.script(
      { toolCalls: [{ id: 'k1', name: 'bash', arguments: { command: 'echo one >> log.txt' } }] },
      { hang: true },
    );
    const started = await request(aUrl)
      .post('/v1/sessions/saved/runs')
      .set(auth)
      .send({ input: 'write the log' })
      .expect(202);
    await fake.waitForRequests(3, 20_000);
    // A waited run on the unsaved session, forwarded by B to A, while the model hangs.
    fake.script({ hang: true });
    const hung = request(bUrl)
      .post('/v1/sessions/plain/runs')
      .set(auth)
      .send({ input: 'hang', wait: true })
      .then((res) => res);
    await fake.waitForRequests(4, 20_000);

    const frozenAt = Date.now();
    a.child.kill('SIGSTOP');
    const answer = await hung;
    expect(answer.status).toBe(502);
    expect(answer.body.error.code).toBe('OWNER_UNREACHABLE');
    expect(answer.headers['retry-after']).toBe('1');
    // node_ttl_ms (1.5 s) plus one owner check (2 s), with room for a loaded machine.
    expect(Date.now() - frozenAt).toBeLessThan(10_000);
    a.child.kill('SIGKILL');
    await a.exited;

    // The saved session moves to B once A's lease expires; its run resumes from the checkpoint there.
    fake.script({ text: 'resumed after the kill' });
    await until(
      async () => request(lb.url).get('/v1/sessions/saved').set(auth),
      (r) => r.status === 200,
      seen,
    );
    const resumed = await until(
      async () => request(lb.url).get('/v1/sessions/saved/runs').set(auth),
      (r) => JSON.stringify(r.body).includes('"completed"') && JSON.stringify(r.body).includes(started.body.runId),
      seen,
    );
    const runs = (
      resumed.body as { runs: Array<{ runId: string; status: string; metadata?: Record<string, unknown> }> }
    ).runs;
    const next = runs.find((r) => r.metadata?.resumed_from_run_id === started.body.runId);
    expect(next?.status).toBe('completed');
    // The tool round before the kill ran once: the resumed run sent its result on, and ran no tool again.
    const resumeRequest = fake.requests.at(-1)?.body.messages ?? [];
    expect(resumeRequest.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['k1']);
    expect(next?.metadata).toMatchObject({ resumed_from_turn: 1 });
    const history = await request(lb.url).get('/v1/sessions/saved/history').set(auth).expect(200);
    expect(JSON.stringify(history.body)).toContain('resumed after the kill');

    // The unsaved session is gone with its node: 410 NODE_LOST on whichever node, never 404.
    for (let i = 0; i < 4; i++) {
      const lost = await request(lb.url).get('/v1/sessions/plain').set(auth);
      seen.push(lost);
      expect(lost.status).toBe(410);
      expect(lost.body.error).toMatchObject({ code: 'NODE_LOST', details: { nodeId: 'node-a' } });
    }
    // While A's lease ran out the saved session answered 502 OWNER_UNREACHABLE (retry): never 404 or 421.
    expect(seen.filter((r) => r.status === 404 || r.status === 421)).toEqual([]);
    expect(seen.filter((r) => ![200, 410, 502].includes(r.status))).toEqual([]);
    expect(JSON.stringify(seen.map((r) => r.body))).not.toContain(aUrl);
  }, 90_000);
});
