import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { ASK_LS, grantLsAlways } from '../support/allow-always.js';
import { retry, startProcessCluster, type ProcessCluster } from '../support/process-cluster.js';

describe('"allow always" grants survive a takeover (two nodes on Redis)', () => {
  let cluster: ProcessCluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  it('granted on A, A killed: B takes the session over and the next ls runs without a confirmation', async () => {
    cluster = await startProcessCluster();
    const { a, urlA, urlB, fake, root } = cluster;
    writeFileSync(join(root, 'a.txt'), 'alpha\n');
    await request(urlA)
      .post('/v1/sessions')
      .send({ sessionId: 'g1', autoSave: true, ...ASK_LS })
      .expect(201);
    fake.script({ toolCalls: [{ id: 'ls_a', name: 'ls', arguments: {} }] }, { text: 'listed on A' });
    await grantLsAlways(urlA, 'g1');
    a.child.kill('SIGKILL');
    await a.exited;

    fake.script({ toolCalls: [{ id: 'ls_b', name: 'ls', arguments: {} }] }, { text: 'listed on B' });
    const taken = await retry(
      () => request(urlB).get('/v1/sessions/g1'),
      (r) => r.status === 200,
    );
    expect(taken.status).toBe(200);
    const run = await request(urlB).post('/v1/sessions/g1/runs').send({ input: 'list on B', wait: true });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.result.text).toBe('listed on B');
    const trace = (
      await request(urlB).get(`/v1/sessions/g1/runs/${run.body.runId}/events?after=-1&limit=1000`).expect(200)
    ).body.events as { type: string }[];
    expect(trace.length).toBeGreaterThan(0);
    expect(trace.filter((e) => e.type === 'confirmation_required')).toEqual([]);
    const messages = (await request(urlB).get('/v1/sessions/g1/history').expect(200)).body.messages as {
      role: string;
      tool_call_id?: string;
      content: string;
    }[];
    expect(messages.find((m) => m.tool_call_id === 'ls_b')?.content).toContain('a.txt');
    fake.assertDone();
  });
});
