import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { retry, startProcessCluster, type ProcessCluster } from '../support/process-cluster.js';

interface ListedRun {
  runId: string;
  status: string;
  input: string;
  error?: { code: string; message: string };
  endedAtMs?: number;
}

describe('the runs list of a session taken over lists the run its dead node was running', () => {
  let cluster: ProcessCluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  it('autoResume false: a run in flight on A when A dies is listed on B as failed with NODE_LOST, with its input; the earlier run as it was', async () => {
    cluster = await startProcessCluster();
    const { a, urlA, urlB, fake } = cluster;
    await request(urlA).post('/v1/sessions').send({ sessionId: 'lost1', autoSave: true }).expect(201);
    fake.script({ text: 'first done' });
    const first = (await request(urlA).post('/v1/sessions/lost1/runs').send({ input: 'first', wait: true }).expect(200))
      .body.runId as string;
    // A slow answer: the run is mid-stream when A is killed.
    fake.script({ text: 'a slow answer that never ends on A', chunks: 30, chunkDelayMs: 500 });
    const slow = (await request(urlA).post('/v1/sessions/lost1/runs').send({ input: 'the slow one' }).expect(202)).body
      .runId as string;
    await fake.waitForRequests(2, 10_000);
    const killedAtMs = Date.now();
    a.child.kill('SIGKILL');
    await a.exited;

    const listed = await retry(
      async () => {
        const res = await request(urlB).get('/v1/sessions/lost1/runs');
        return res.status === 200 ? (res.body.runs as ListedRun[]) : [];
      },
      (runs) => runs.some((r) => r.runId === slow),
    );
    expect(listed.find((r) => r.runId === first)).toMatchObject({ status: 'completed', input: 'first' });
    expect(listed.find((r) => r.runId === slow)).toMatchObject({
      status: 'failed',
      input: 'the slow one',
      error: { code: 'NODE_LOST' },
    });
    const lost = listed.find((r) => r.runId === slow) as ListedRun & { createdAtMs: number };
    expect(lost.endedAtMs).toEqual(expect.any(Number));
    // Its start as A published it (agent_start), not the takeover's time.
    expect(lost.createdAtMs).toBeLessThan(killedAtMs);
    const one = (await request(urlB).get(`/v1/sessions/lost1/runs/${slow}`).expect(200)).body.run as ListedRun;
    expect(one).toMatchObject({ status: 'failed', error: { code: 'NODE_LOST' } });
    // The session itself is B's now, idle: a new run starts there.
    fake.script({ text: 'on B' });
    expect(
      (await request(urlB).post('/v1/sessions/lost1/runs').send({ input: 'again', wait: true }).expect(200)).body.result
        .text,
    ).toBe('on B');
  });
});
