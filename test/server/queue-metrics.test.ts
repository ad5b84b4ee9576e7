import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/protocol/run-record.js';
import {
  createSession,
  eventually,
  getRun,
  ofType,
  runEvents,
  startRun,
  useTestServers,
} from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';

const server = useTestServers();

interface Task {
  task_id: string;
  payload: unknown;
}

interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

interface Metrics {
  counters: Record<string, Record<string, number>>;
  gauges: Record<string, { pending: number; active: number; external_pending: number }>;
  histograms: Record<string, { wait_ms: Summary; run_ms: Summary }>;
}

async function tasks(t: TestServer, id: string): Promise<Task[]> {
  return (await request(t.url).get(`/v1/sessions/${id}/queue/external-tasks`).expect(200)).body.tasks as Task[];
}

async function metrics(t: TestServer, id: string): Promise<Metrics> {
  const body = (await request(t.url).get(`/v1/sessions/${id}/queue/metrics`).expect(200)).body as { metrics: Metrics };
  return body.metrics;
}

/** Wait until a task for the bash command `command` is pending, and return it. */
async function taskFor(t: TestServer, id: string, command: string): Promise<Task> {
  let found: Task | undefined;
  await eventually(
    async () =>
      (found = (await tasks(t, id)).find((task) => (task.payload as { command?: string }).command === command)) !==
      undefined,
    `the external task for "${command}"`,
  );
  if (!found) throw new Error('unreachable');
  return found;
}

async function finished(t: TestServer, id: string, runId: string): Promise<RunRecord> {
  let run: RunRecord | undefined;
  await eventually(async () => {
    run = await getRun(t, id, runId);
    if (!['completed', 'failed', 'cancelled'].includes(run.status)) return false;
    return (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.busy === false;
  }, `run ${runId} to end`);
  if (!run) throw new Error('unreachable');
  return run;
}

/** The Prometheus sample lines of `name` (e.g. `a3s_queue_calls_total{lane="execute",outcome="failed"} 1`). */
async function promLines(t: TestServer, name: string): Promise<string[]> {
  const res = await request(t.url).get('/metrics').expect(200);
  return res.text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

const zeroCounters = {
  submitted: 0,
  completed: 0,
  failed: 0,
  timed_out: 0,
  cancelled: 0,
  retried: 0,
  dead_lettered: 0,
};
const reads = (count: number) => ({
  invocations: Array.from({ length: count }, (_, n) => ({ tool: 'read', args: { file_path: `f${n}.txt` } })),
  max_concurrency: 16,
});

describe('lane queue metrics (queueConfig.enableMetrics)', () => {
  it('counts completed, failed and timed-out calls per lane with latencies, shows gauges while a task is out, and exports a3s_queue_* on /metrics', async () => {
    const t = await server({ files: { 'a.txt': 'hello\n' } });
    const id = await createSession(t, {
      queueConfig: {
        enableMetrics: true,
        executeConcurrency: 1,
        laneHandlers: { execute: { mode: 'external', timeoutMs: 300 } },
      },
    });
    expect(await metrics(t, id)).toMatchObject({
      counters: { control: zeroCounters, query: zeroCounters, execute: zeroCounters, generate: zeroCounters },
    });
    t.fake.script(
      {
        toolCalls: [
          { id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'c1', name: 'bash', arguments: { command: 'echo ok' } },
          { id: 'c2', name: 'bash', arguments: { command: 'deploy' } },
          { id: 'c3', name: 'bash', arguments: { command: 'make' } },
        ],
      },
      { text: 'done' },
    );
    const runId = await startRun(t, id, 'go');
    const first = await taskFor(t, id, 'echo ok');
    const during = await metrics(t, id);
    expect(during.gauges.execute).toEqual({ pending: 0, active: 1, external_pending: 1 });
    expect(during.gauges.query).toEqual({ pending: 0, active: 0, external_pending: 0 });
    expect(during.counters.execute).toMatchObject({ submitted: 1, completed: 0 });
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${first.task_id}`)
      .send({ success: true, result: 'ok' })
      .expect(200);
    const second = await taskFor(t, id, 'deploy');
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${second.task_id}`)
      .send({ success: false, error: 'refused' })
      .expect(200);
    // "make" is never answered: it times out after 300 ms.
    expect((await finished(t, id, runId)).status).toBe('completed');
    t.fake.assertDone();

    const after = await metrics(t, id);
    expect(Object.keys(after).sort()).toEqual(['counters', 'gauges', 'histograms']);
    expect(after.counters.execute).toEqual({ ...zeroCounters, submitted: 3, completed: 1, failed: 1, timed_out: 1 });
    expect(after.counters.query).toEqual({ ...zeroCounters, submitted: 1, completed: 1 });
    // The two external-task completions went through the control lane, the two provider requests through generate.
    expect(after.counters.control).toEqual({ ...zeroCounters, submitted: 2, completed: 2 });
    expect(after.counters.generate).toEqual({ ...zeroCounters, submitted: 2, completed: 2 });
    expect(after.gauges.execute).toEqual({ pending: 0, active: 0, external_pending: 0 });
    const execute = after.histograms.execute;
    expect(execute.wait_ms.count).toBe(3);
    expect(execute.run_ms.count).toBe(3);
    // The timed-out call held its slot for the lane timeout; percentiles are ordered.
    expect(execute.run_ms.max).toBeGreaterThanOrEqual(290);
    expect(execute.run_ms.p50).toBeLessThanOrEqual(execute.run_ms.p90);
    expect(execute.run_ms.p90).toBeLessThanOrEqual(execute.run_ms.p99);
    expect(execute.run_ms.p99).toBeLessThanOrEqual(execute.run_ms.max);
    expect(after.histograms.generate.wait_ms.count).toBe(2);
    expect(after.histograms.generate.run_ms.count).toBe(2);

    // A queue without enableMetrics answers {metrics: null}; a session without a queue is 409.
    const plainQueue = await createSession(t, { queueConfig: {} });
    expect((await request(t.url).get(`/v1/sessions/${plainQueue}/queue/metrics`).expect(200)).body).toEqual({
      metrics: null,
    });
    const noQueue = await createSession(t);
    const refused = await request(t.url).get(`/v1/sessions/${noQueue}/queue/metrics`).expect(409);
    expect(refused.body.error).toMatchObject({
      code: 'QUEUE_NOT_CONFIGURED',
      details: { sessionId: noQueue, field: 'queueConfig' },
    });

    // /metrics sums the live queues (the one with metrics here).
    expect(await promLines(t, 'a3s_queue_calls_total')).toEqual(
      expect.arrayContaining([
        'a3s_queue_calls_total{lane="execute",outcome="completed"} 1',
        'a3s_queue_calls_total{lane="execute",outcome="failed"} 1',
        'a3s_queue_calls_total{lane="execute",outcome="timed_out"} 1',
        'a3s_queue_calls_total{lane="execute",outcome="cancelled"} 0',
        'a3s_queue_calls_total{lane="query",outcome="completed"} 1',
      ]),
    );
    expect(await promLines(t, 'a3s_queue_submitted_total')).toContain('a3s_queue_submitted_total{lane="execute"} 3');
    expect(await promLines(t, 'a3s_queue_retries_total')).toContain('a3s_queue_retries_total{lane="execute"} 0');
    // Gauges cover every live queue (two here), metrics on or off.
    expect(await promLines(t, 'a3s_queue_pending')).toContain('a3s_queue_pending{lane="execute"} 0');
    expect(await promLines(t, 'a3s_queue_active')).toContain('a3s_queue_active{lane="query"} 0');
    expect(await promLines(t, 'a3s_queue_external_pending')).toEqual(['a3s_queue_external_pending 0']);
    // Closing the session takes its counts out of the sums.
    await request(t.url)
      .delete(`/v1/sessions/${id}`)
      .expect((res) => expect(res.status).toBeLessThan(300));
    expect(await promLines(t, 'a3s_queue_calls_total')).toEqual([]);
  });

  it('enableAllFeatures turns on metrics, alerts, the dead-letter queue and timeoutMs 60000; retries and dead letters are counted', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: {
        enableAllFeatures: true,
        retryPolicy: { strategy: 'fixed', maxRetries: 1, fixedDelayMs: 10 },
        laneHandlers: { execute: { mode: 'external' } },
      },
    });
    t.fake.script({ toolCalls: [{ id: 'c1', name: 'bash', arguments: { command: 'flaky' } }] }, { text: 'gave up' });
    const runId = await startRun(t, id, 'go');
    const firstTry = await taskFor(t, id, 'flaky');
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${firstTry.task_id}`)
      .send({ success: false, error: 'boom 1' })
      .expect(200);
    let secondTry: Task | undefined;
    await eventually(
      async () => (secondTry = (await tasks(t, id)).find((task) => task.task_id !== firstTry.task_id)) !== undefined,
      'the retry',
    );
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${secondTry?.task_id}`)
      .send({ success: false, error: 'boom 2' })
      .expect(200);
    expect((await finished(t, id, runId)).status).toBe('completed');
    t.fake.assertDone();
    const m = await metrics(t, id);
    expect(m.counters.execute).toEqual({ ...zeroCounters, submitted: 1, failed: 1, retried: 1, dead_lettered: 1 });
    expect(m.histograms.execute.run_ms.count).toBe(2);
    const dead = (await request(t.url).get(`/v1/sessions/${id}/queue/dead-letters`).expect(200)).body.deadLetters;
    expect(dead).toHaveLength(1);
    const stats = (await request(t.url).get(`/v1/sessions/${id}/queue/stats`).expect(200)).body as {
      lanes: { lane: string; timeoutMs: number }[];
    };
    expect(stats.lanes.find((l) => l.lane === 'query')?.timeoutMs).toBe(60_000);
    // Explicit values win over enableAllFeatures.
    const off = await createSession(t, { queueConfig: { enableAllFeatures: true, enableMetrics: false } });
    expect((await request(t.url).get(`/v1/sessions/${off}/queue/metrics`).expect(200)).body).toEqual({ metrics: null });
  });
  it('a cancelled run counts its waiting calls and the one at the host as cancelled', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: { enableMetrics: true, queryConcurrency: 1, laneHandlers: { query: { mode: 'external' } } },
    });
    t.fake.script({ toolCalls: [{ id: 'b1', name: 'batch', arguments: reads(3) }] });
    const runId = await startRun(t, id, 'go');
    await eventually(async () => (await metrics(t, id)).gauges.query.pending === 2, 'two reads waiting');
    expect((await metrics(t, id)).gauges.query).toEqual({ pending: 2, active: 1, external_pending: 1 });
    await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).expect(200, { cancelled: true });
    expect((await finished(t, id, runId)).status).toBe('cancelled');
    const m = await metrics(t, id);
    expect(m.counters.query).toEqual({ ...zeroCounters, submitted: 3, cancelled: 3 });
    // Only the read that got the slot has a wait and a run sample.
    expect(m.histograms.query.run_ms.count).toBe(1);
    expect(m.gauges.query).toEqual({ pending: 0, active: 0, external_pending: 0 });
  });
});

describe('lane queue alerts (queueConfig.enableAlerts)', () => {
  it('a lane at 10 × its concurrency waiting raises one queue_depth alert, and again only after it recovered', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: { enableAlerts: true, queryConcurrency: 1, laneHandlers: { query: { mode: 'external' } } },
    });
    t.fake.script(
      { toolCalls: [{ id: 'b1', name: 'batch', arguments: reads(12) }] },
      { toolCalls: [{ id: 'b2', name: 'batch', arguments: reads(12) }] },
      { text: 'read them all' },
    );
    const runId = await startRun(t, id, 'go');
    let answered = 0;
    const seen = new Set<string>();
    while (answered < 24) {
      let next: Task | undefined;
      await eventually(
        async () => (next = (await tasks(t, id)).find((task) => !seen.has(task.task_id))) !== undefined,
        `external read ${answered + 1}`,
      );
      if (!next) throw new Error('unreachable');
      if (answered === 0) {
        // 1 read holds the slot, 11 wait: past the bound of 10.
        await eventually(async () => {
          const stats = (await request(t.url).get(`/v1/sessions/${id}/queue/stats`).expect(200)).body as {
            lanes: { lane: string; pending: number }[];
          };
          return stats.lanes.find((l) => l.lane === 'query')?.pending === 11;
        }, 'eleven reads waiting');
      }
      seen.add(next.task_id);
      await request(t.url)
        .post(`/v1/sessions/${id}/queue/external-tasks/${next.task_id}`)
        .send({ success: true, result: 'x' })
        .expect(200);
      answered += 1;
    }
    expect((await finished(t, id, runId)).status).toBe('completed');
    t.fake.assertDone();
    const alerts = ofType(await runEvents(t, id, runId), 'queue_alert').map(
      (e) => e.payload as { level: string; alert_type: string; message: string },
    );
    expect(alerts).toHaveLength(2);
    for (const alert of alerts) {
      expect(alert).toMatchObject({ level: 'warning', alert_type: 'queue_depth' });
      expect(alert.message).toContain('the query lane has 10 calls waiting for a slot (bound 10');
    }
  });

  it('a call that waited half its lane timeout raises one queue_latency alert for the lane', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: {
        enableAlerts: true,
        enableMetrics: true,
        queryConcurrency: 1,
        laneHandlers: { query: { mode: 'external', timeoutMs: 300 } },
      },
    });
    t.fake.script({ toolCalls: [{ id: 'b1', name: 'batch', arguments: reads(3) }] }, { text: 'nobody answered' });
    const runId = await startRun(t, id, 'go');
    // The host never answers: read 1 times out after 300 ms, read 2 waited ~300 ms (bound 150), read 3 ~600 ms.
    expect((await finished(t, id, runId)).status).toBe('completed');
    t.fake.assertDone();
    const events = await runEvents(t, id, runId);
    const alerts = ofType(events, 'queue_alert').map(
      (e) => e.payload as { level: string; alert_type: string; message: string },
    );
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ level: 'warning', alert_type: 'queue_latency' });
    expect(alerts[0]?.message).toMatch(
      /^a call waited \d+ ms for a slot of the query lane \(bound 150 ms: half its timeout 300 ms\)$/,
    );
    const m = await metrics(t, id);
    expect(m.counters.query).toMatchObject({ submitted: 3, timed_out: 3 });
    expect(m.histograms.query.wait_ms.max).toBeGreaterThanOrEqual(550);
  });

  it('without enableAlerts a deep lane raises nothing', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: { queryConcurrency: 1, laneHandlers: { query: { mode: 'external', timeoutMs: 100 } } },
    });
    t.fake.script({ toolCalls: [{ id: 'b1', name: 'batch', arguments: reads(12) }] }, { text: 'timed out' });
    const runId = await startRun(t, id, 'go');
    expect((await finished(t, id, runId)).status).toBe('completed');
    expect(ofType(await runEvents(t, id, runId), 'queue_alert')).toEqual([]);
  });
});
