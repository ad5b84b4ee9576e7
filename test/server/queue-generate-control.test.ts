import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../support/fake-provider.js';
import {
  createSession,
  eventually,
  ofType,
  runAndWait,
  runEvents,
  startRun,
  useTestServers,
} from '../support/run-helpers.js';

const server = useTestServers();

type Msg = { role: string; content?: unknown };
const messagesOf = (r: RecordedRequest) => r.body.messages as Msg[];
const runPrompt = (r: RecordedRequest) => String(messagesOf(r).findLast((m) => m.role === 'user')?.content ?? '');
const childStart = (prompt: string) => (r: RecordedRequest) =>
  runPrompt(r).startsWith(prompt) && messagesOf(r).at(-1)?.role === 'user';
const afterTool = (prompt: string) => (r: RecordedRequest) =>
  runPrompt(r).startsWith(prompt) && messagesOf(r).at(-1)?.role === 'tool';

const OPEN_POLICY = { allow: ['read', 'parallel_task'], defaultDecision: 'deny' };
const TASKS = [
  { agent: 'general', description: 'read a', prompt: 'child A: read a.txt' },
  { agent: 'general', description: 'read b', prompt: 'child B: read b.txt' },
];

/** The parent delegates two children at once; each child makes two slow provider requests. */
function scriptParallelChildren(t: Awaited<ReturnType<typeof server>>): void {
  t.fake.script(
    { when: childStart('go'), toolCalls: [{ id: 'p1', name: 'parallel_task', arguments: { tasks: TASKS } }] },
    {
      when: childStart('child A'),
      delayMs: 120,
      toolCalls: [{ id: 'ra', name: 'read', arguments: { file_path: 'a.txt' } }],
    },
    {
      when: childStart('child B'),
      delayMs: 120,
      toolCalls: [{ id: 'rb', name: 'read', arguments: { file_path: 'b.txt' } }],
    },
    { when: afterTool('child A'), delayMs: 120, text: 'A=alpha' },
    { when: afterTool('child B'), delayMs: 120, text: 'B=beta' },
    { when: afterTool('go'), text: 'both done' },
  );
}

describe('queueConfig: the generate lane bounds provider requests', () => {
  it('generateConcurrency 1: two parallel children never have two provider requests in flight at once', async () => {
    const t = await server({
      files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' },
      config: { defaultPermissionPolicy: OPEN_POLICY },
    });
    const id = await createSession(t, { queueConfig: { generateConcurrency: 1, enableMetrics: true } });
    scriptParallelChildren(t);
    const { run } = await runAndWait(t, id, 'go');
    expect(run.status).toBe('completed');
    t.fake.assertDone();
    expect(t.fake.requests).toHaveLength(6);
    expect(t.fake.maxInFlight).toBe(1);
    const metrics = (await request(t.url).get(`/v1/sessions/${id}/queue/metrics`).expect(200)).body.metrics;
    // Every provider request of the parent and of its two children went through the parent's generate lane.
    expect(metrics.counters.generate).toMatchObject({ submitted: 6, completed: 6, failed: 0 });
    // A child waited while the other held the slot.
    expect(metrics.histograms.generate.wait_ms.max).toBeGreaterThanOrEqual(100);
  });

  it('generateConcurrency 2 lets both children ask at once; without a queue they do too', async () => {
    for (const options of [{ queueConfig: { generateConcurrency: 2 } }, {}]) {
      const t = await server({
        files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' },
        config: { defaultPermissionPolicy: OPEN_POLICY },
      });
      const id = await createSession(t, options);
      scriptParallelChildren(t);
      expect((await runAndWait(t, id, 'go')).run.status).toBe('completed');
      t.fake.assertDone();
      expect(t.fake.maxInFlight).toBe(2);
    }
  });

  it('a request waiting for the generate lane when the run is cancelled is never sent', async () => {
    const t = await server({
      files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' },
      config: { defaultPermissionPolicy: OPEN_POLICY },
    });
    const id = await createSession(t, { queueConfig: { generateConcurrency: 1, enableMetrics: true } });
    // The first child to ask holds the only slot with a request that never answers; the other waits for it.
    t.fake.script(
      { when: childStart('go'), toolCalls: [{ id: 'p1', name: 'parallel_task', arguments: { tasks: TASKS } }] },
      { hang: true },
    );
    const runId = await startRun(t, id, 'go');
    await t.fake.waitForRequests(2);
    await eventually(async () => {
      const stats = (await request(t.url).get(`/v1/sessions/${id}/queue/stats`).expect(200)).body;
      const generate = stats.lanes.find((l: { lane: string }) => l.lane === 'generate');
      return generate.active === 1 && generate.pending === 1;
    }, 'one request in flight, one waiting');
    expect((await request(t.url).post(`/v1/sessions/${id}/cancel`).expect(200)).body).toEqual({ cancelled: true });
    await eventually(
      async () =>
        (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}`).expect(200)).body.run.status === 'cancelled',
      'cancelled',
    );
    await eventually(async () => {
      const metrics = (await request(t.url).get(`/v1/sessions/${id}/queue/metrics`).expect(200)).body.metrics;
      return metrics.gauges.generate.pending === 0 && metrics.gauges.generate.active === 0;
    }, 'the generate lane empty');
    const metrics = (await request(t.url).get(`/v1/sessions/${id}/queue/metrics`).expect(200)).body.metrics;
    expect(metrics.counters.generate).toMatchObject({ submitted: 3, completed: 1, failed: 1, cancelled: 1 });
    // The waiting request never reached the provider; the cancel itself was a control operation.
    expect(t.fake.requests).toHaveLength(2);
    expect(t.fake.failures).toEqual([]);
    expect(metrics.counters.control).toMatchObject({ submitted: 1, completed: 1 });
  });
});

describe('queueConfig: control operations go through the control lane', () => {
  it('cancels (session and run), confirmation answers and lane changes are counted in the control lane', async () => {
    const t = await server({ config: { defaultPermissionPolicy: { ask: ['write'], defaultDecision: 'allow' } } });
    const id = await createSession(t, {
      queueConfig: { enableMetrics: true },
      confirmationPolicy: { enabled: true, defaultTimeoutMs: 10_000 },
    });
    t.fake.script(
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { file_path: 'x.txt', content: 'x' } }] },
      { text: 'Wrote it.' },
    );
    const runId = await startRun(t, id, 'write x');
    let toolId = '';
    await eventually(async () => {
      const pending = (await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body;
      toolId = (pending.confirmations ?? pending.pending ?? [])[0]?.toolId ?? '';
      return toolId !== '';
    }, 'a pending confirmation');
    await request(t.url).post(`/v1/sessions/${id}/confirmations/${toolId}`).send({ approved: true }).expect(200);
    await eventually(
      async () =>
        (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}`).expect(200)).body.run.status === 'completed',
      'completed',
    );
    expect((await request(t.url).post(`/v1/sessions/${id}/cancel`).expect(200)).body).toEqual({ cancelled: false });
    expect((await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).expect(200)).body).toEqual({
      cancelled: false,
    });
    await request(t.url).put(`/v1/sessions/${id}/queue/lanes/query`).send({ mode: 'hybrid' }).expect(200);
    const metrics = (await request(t.url).get(`/v1/sessions/${id}/queue/metrics`).expect(200)).body.metrics;
    // The confirmation answer, the session cancel, the run cancel (each found nothing to cancel) and the lane change.
    expect(metrics.counters.control).toMatchObject({ submitted: 4, completed: 4 });
    expect(metrics.histograms.control.run_ms.count).toBe(4);
    expect(ofType(await runEvents(t, id, runId), 'tool_end')).toHaveLength(1);
    t.fake.assertDone();
  });

  it('the control and generate lanes run here only: another mode is UNSUPPORTED_OPTION naming it, at creation and over PUT', async () => {
    const t = await server();
    for (const lane of ['control', 'generate']) {
      const res = await request(t.url)
        .post('/v1/sessions')
        .send({ queueConfig: { laneHandlers: { [lane]: { mode: 'external' } } } })
        .expect(400);
      expect(res.body.error).toMatchObject({
        code: 'UNSUPPORTED_OPTION',
        details: { field: `queueConfig.laneHandlers.${lane}` },
      });
      expect(res.body.error.details.reasons[`queueConfig.laneHandlers.${lane}`]).toContain('internal');
    }
    const ok = await createSession(t, {
      queueConfig: { laneHandlers: { generate: { mode: 'internal', timeoutMs: 5000 } } },
    });
    for (const lane of ['control', 'generate']) {
      const put = await request(t.url)
        .put(`/v1/sessions/${ok}/queue/lanes/${lane}`)
        .send({ mode: 'hybrid' })
        .expect(400);
      expect(put.body.error).toMatchObject({ code: 'UNSUPPORTED_OPTION', details: { field: 'mode' } });
    }
    await request(t.url).put(`/v1/sessions/${ok}/queue/lanes/generate`).send({ mode: 'internal' }).expect(200);
  });
});
