// The REST routes behind the seed's cancelConfirmations, cancelSubagentTask, memory tiers and run event page
// fields, over plain HTTP: their answers and their refusals in the one error shape.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createSession, runAndWait, useTestServers } from '../support/run-helpers.js';

const start = useTestServers();

describe("the seed's control routes over HTTP", () => {
  it('answers the seed values and refuses with the catalogue codes', async () => {
    const t = await start();
    const plain = await createSession(t);

    // cancelConfirmations: nothing pending is 0.
    expect((await request(t.url).delete(`/v1/sessions/${plain}/confirmations`).expect(200)).body).toEqual({
      cancelled: 0,
    });
    // cancelSubagentTask: an unknown id is 404 TASK_NOT_FOUND naming it.
    const unknown = await request(t.url).post(`/v1/sessions/${plain}/tasks/task-nope/cancel`).expect(404);
    expect(unknown.body.error).toMatchObject({ code: 'TASK_NOT_FOUND', details: { taskId: 'task-nope' } });
    // The memory tiers need a memory store: 409 naming the option.
    const tiers = await request(t.url).get(`/v1/sessions/${plain}/memory/working`).expect(409);
    expect(tiers.body.error).toMatchObject({ code: 'MEMORY_NOT_CONFIGURED', details: { field: 'memoryStore' } });
    await request(t.url).delete(`/v1/sessions/${plain}/memory/short-term`).expect(409);

    const memory = await createSession(t, { memoryStore: { type: 'memory' } });
    await request(t.url)
      .post(`/v1/sessions/${memory}/memory/success`)
      .send({ task: 'a', tools: [], result: 'b' })
      .expect(201);
    expect((await request(t.url).get(`/v1/sessions/${memory}/memory/short-term`).expect(200)).body.items).toHaveLength(
      1,
    );
    expect((await request(t.url).delete(`/v1/sessions/${memory}/memory/short-term`).expect(200)).body).toEqual({
      tier: 'short_term',
      count: 1,
    });
    expect((await request(t.url).delete(`/v1/sessions/${memory}/memory/working`).expect(200)).body).toEqual({
      tier: 'working',
      count: 1,
    });

    // The run event page carries the seed's fields.
    t.fake.script({ text: 'done' });
    const run = await runAndWait(t, plain, 'hello');
    const page = await request(t.url)
      .get(`/v1/sessions/${plain}/runs/${run.runId}/events?after=-1&limit=1`)
      .expect(200);
    expect(page.body).toMatchObject({
      hasMore: true,
      firstAvailableSequence: 0,
      nextAfter: 0,
      nextAfterSequence: 0,
      retentionGap: null,
    });
    expect(page.body.latestSequenceExclusive).toBeGreaterThan(1);

    // A closed session refuses: 410 SESSION_CLOSED, or 404 once it is gone.
    await request(t.url).delete(`/v1/sessions/${memory}`).expect(200);
    const closed = await request(t.url).delete(`/v1/sessions/${memory}/memory/working`);
    expect([404, 410]).toContain(closed.status);
    t.fake.assertDone();
  });
});
