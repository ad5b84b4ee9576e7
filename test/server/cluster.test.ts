import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { retry, startProcessCluster, type ProcessCluster } from '../support/process-cluster.js';
import { subscribe } from '../support/ws-client.js';

describe('a cluster of server processes on one Redis', () => {
  const started: ProcessCluster[] = [];
  afterEach(async () => {
    for (const running of started.splice(0)) await running.close();
  });

  async function cluster(): Promise<ProcessCluster> {
    const running = await startProcessCluster();
    started.push(running);
    return running;
  }

  it('routes to the owner (421), answers SESSION_BUSY on any node, and a run resumed on B after A dies streams to a subscriber on B without gaps or duplicates', async () => {
    const { a, urlA, urlB, fake } = await cluster();
    await request(urlA).post('/v1/sessions').send({ sessionId: 'c1', autoSave: true }).expect(201);
    // With A3S-Route: no-forward the client is told where the session is (without it, B forwards to A).
    const misdirected = await request(urlB).get('/v1/sessions/c1').set('a3s-route', 'no-forward').expect(421);
    await request(urlB).get('/v1/sessions/c1').expect(200);
    expect(misdirected.body.error).toMatchObject({
      code: 'SESSION_OWNED_ELSEWHERE',
      details: { ownerNodeId: 'node-a', ownerUrl: urlA },
    });

    // Not forwarded: the socket follows A's events through Redis, and goes on when B takes the session over.
    const ws = await subscribe(urlB, 'c1', { after: 0, headers: { 'a3s-route': 'no-forward' } });
    fake.script(
      { toolCalls: [{ id: 'k1', name: 'bash', arguments: { command: 'echo one >> log.txt' } }] },
      { toolCalls: [{ id: 'k2', name: 'bash', arguments: { command: 'echo two >> log.txt' } }] },
      { hang: true },
    );
    const started = await request(urlA).post('/v1/sessions/c1/runs').send({ input: 'write the log' }).expect(202);
    const busy = await request(urlB).post('/v1/sessions/c1/runs').send({ input: 'me too' }).expect(409);
    expect(busy.body.error).toMatchObject({ code: 'SESSION_BUSY', details: { activeRunId: started.body.runId } });
    await fake.waitForRequests(3, 20_000);
    await ws.waitFor((e) => e.type === 'checkpoint_saved' && (e.payload as { turn: number }).turn === 2);

    a.child.kill('SIGKILL');
    await a.exited;
    fake.script({ text: 'finished on B' });
    const resumed = await retry(
      () => request(urlB).post(`/v1/sessions/c1/runs/${started.body.runId}/resume`).send({ wait: true }),
      (r) => r.status === 200,
    );
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body.result.text).toBe('finished on B');
    const log = await request(urlB)
      .post('/v1/sessions/c1/tools/read')
      .send({ args: { file_path: 'log.txt' } })
      .expect(200);
    expect(log.body.output.match(/one/g)).toHaveLength(1);
    expect(log.body.output.match(/two/g)).toHaveLength(1);

    const end = await ws.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === resumed.body.runId);
    expect(end.payload).toMatchObject({ status: 'completed' });
    const sequences = ws.frames
      .filter((f) => f.metadata.session_sequence !== undefined)
      .map((f) => f.metadata.session_sequence);
    expect(sequences).toEqual(sequences.map((_, i) => sequences[0] + i));
    expect(ws.frames.some((f) => f.type === 'run_resumed')).toBe(true);
    ws.close();
    // Processes started and killed: under a loaded CI machine this takes more than the 30 s default.
  }, 90_000);

  it("with autoResume, the node that takes a dead node's session over marks the lost run NODE_LOST and resumes it", async () => {
    const { a, urlA, urlB, fake } = await cluster();
    await request(urlA).post('/v1/sessions').send({ sessionId: 'c3', autoSave: true, autoResume: true }).expect(201);
    fake.script(
      { toolCalls: [{ id: 'ar1', name: 'bash', arguments: { command: 'echo once >> auto.txt' } }] },
      { hang: true },
    );
    const started = await request(urlA).post('/v1/sessions/c3/runs').send({ input: 'go' }).expect(202);
    await fake.waitForRequests(2, 20_000);
    a.child.kill('SIGKILL');
    await a.exited;
    fake.script({ text: 'auto-resumed on B' });
    const taken = await retry(
      () => request(urlB).get('/v1/sessions/c3'),
      (r) => r.status === 200,
    );
    expect(taken.status).toBe(200);
    const runs = await retry(
      async () =>
        (await request(urlB).get('/v1/sessions/c3/runs').expect(200)).body.runs as {
          runId: string;
          status: string;
          error?: { code: string };
          metadata?: Record<string, unknown>;
        }[],
      (list) => list.some((r) => r.metadata?.resumed_from_run_id === started.body.runId && r.status === 'completed'),
    );
    expect(runs.find((r) => r.runId === started.body.runId)).toMatchObject({
      status: 'failed',
      error: { code: 'NODE_LOST' },
    });
    expect(runs.find((r) => r.metadata?.resumed_from_run_id === started.body.runId)).toMatchObject({
      status: 'completed',
    });
    const file = await request(urlB)
      .post('/v1/sessions/c3/tools/read')
      .send({ args: { file_path: 'auto.txt' } })
      .expect(200);
    expect(file.body.output.match(/once/g)).toHaveLength(1);
  }, 90_000);

  it('a node paused past its lease loses the session: B takes over, and when A wakes its writes are fenced and it gives the session up', async () => {
    const { a, urlA, urlB, fake } = await cluster();
    await request(urlA).post('/v1/sessions').send({ sessionId: 'c2', autoSave: true }).expect(201);
    a.child.kill('SIGSTOP');
    // B hydrates the session once A's lease expired.
    // Not forwarded: a forward to the paused A would wait for it (up to the hop's 30 s headers timeout).
    const taken = await retry(
      () => request(urlB).get('/v1/sessions/c2').set('a3s-route', 'no-forward'),
      (r) => r.status === 200,
    );
    expect(taken.status).toBe(200);
    fake.script({ text: 'B was here' });
    await request(urlB).post('/v1/sessions/c2/runs').send({ input: 'hello B', wait: true }).expect(200);

    a.child.kill('SIGCONT');
    // A either notices the lost lease first (421) or tries to save and is refused by the fence (500).
    const save = await request(urlA).post('/v1/sessions/c2/save').set('a3s-route', 'no-forward');
    expect([421, 500]).toContain(save.status);
    if (save.status === 500) expect(save.body.error.code).toBe('PERSISTENCE_FAILED');
    const gaveUp = await retry(
      () => request(urlA).get('/v1/sessions/c2').set('a3s-route', 'no-forward'),
      (r) => r.status === 421,
    );
    expect(gaveUp.body.error).toMatchObject({ code: 'SESSION_OWNED_ELSEWHERE', details: { ownerNodeId: 'node-b' } });
    // The stored session is B's: A wrote nothing over it.
    const history = (await request(urlB).get('/v1/sessions/c2/history').expect(200)).body.messages;
    expect(history.map((m: { content: string }) => m.content)).toEqual(['hello B', 'B was here']);
  }, 90_000);
});
