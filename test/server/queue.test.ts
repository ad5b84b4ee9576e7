import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import type { RunRecord } from '../../src/protocol/run-record.js';
import type { RecordedRequest } from '../support/fake-provider.js';
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
  id: string;
  session_id: string;
  lane: string;
  command_type: string;
  payload: unknown;
  timeout_ms: number;
}

interface Stats {
  totalPending: number;
  totalActive: number;
  externalPending: number;
  lanes: { lane: string; pending: number; active: number; maxConcurrency: number; handlerMode: string }[];
}

async function tasks(t: TestServer, id: string): Promise<Task[]> {
  return (await request(t.url).get(`/v1/sessions/${id}/queue/external-tasks`).expect(200)).body.tasks as Task[];
}

async function stats(t: TestServer, id: string): Promise<Stats> {
  return (await request(t.url).get(`/v1/sessions/${id}/queue/stats`).expect(200)).body as Stats;
}

function lane(s: Stats, name: string): Stats['lanes'][number] {
  const found = s.lanes.find((l) => l.lane === name);
  if (!found) throw new Error(`no lane ${name}`);
  return found;
}

/** Wait until the session has `count` external tasks pending, and return them. */
async function pendingTasks(t: TestServer, id: string, count: number): Promise<Task[]> {
  let found: Task[] = [];
  await eventually(async () => (found = await tasks(t, id)).length === count, `${count} pending external task(s)`);
  return found;
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

const toolMessage = (req: RecordedRequest, callId: string) =>
  req.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === callId);
const toolEnds = (events: EventEnvelope[]) =>
  ofType(events, 'tool_end').map(
    (e) => e.payload as { id: string; output: string; exit_code: number; error_kind?: { type: string } },
  );

describe('lane queue: external execute lane completed by the host over REST', () => {
  it('hands bash to the host, gives the model its result (string, JSON, failure), and answers 404/409 for unknown and settled tasks', async () => {
    const t = await server();
    const id = await createSession(t, { queueConfig: { laneHandlers: { execute: { mode: 'external' } } } });
    expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.hasQueue).toBe(true);
    t.fake.script(
      {
        toolCalls: [
          { id: 'c1', name: 'bash', arguments: { command: 'echo from-the-sandbox' } },
          { id: 'c2', name: 'bash', arguments: { command: 'deploy' } },
          { id: 'c3', name: 'bash', arguments: { command: 'rm nothing' } },
        ],
      },
      {
        text: 'done',
        expect: (req) => {
          expect(toolMessage(req, 'c1')?.content).toBe('host ran it');
          expect(toolMessage(req, 'c2')?.content).toBe('{"deployed":true,"version":3}');
          expect(toolMessage(req, 'c3')?.content).toBe('refused by the host');
        },
      },
    );
    const runId = await startRun(t, id, 'go');

    const [first] = await pendingTasks(t, id, 1);
    expect(first).toMatchObject({
      id: first.task_id,
      session_id: id,
      lane: 'Execute',
      command_type: 'bash',
      payload: { command: 'echo from-the-sandbox' },
      timeout_ms: 60_000,
    });
    const during = await stats(t, id);
    expect(during).toMatchObject({ totalPending: 0, totalActive: 1, externalPending: 1 });
    expect(lane(during, 'execute')).toMatchObject({
      pending: 0,
      active: 1,
      maxConcurrency: 2,
      handlerMode: 'external',
    });
    expect(lane(during, 'query')).toMatchObject({ pending: 0, active: 0, maxConcurrency: 4, handlerMode: 'internal' });
    expect(during.lanes.map((l) => l.lane)).toEqual(['control', 'query', 'execute', 'generate']);
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${first.task_id}`)
      .send({ success: true, result: 'host ran it' })
      .expect(200, { completed: true });

    const second = await taskFor(t, id, 'deploy');
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${second.task_id}`)
      .send({ success: true, result: { deployed: true, version: 3 } })
      .expect(200);
    const third = await taskFor(t, id, 'rm nothing');
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${third.task_id}`)
      .send({ success: false, error: 'refused by the host' })
      .expect(200);

    const run = await finished(t, id, runId);
    expect(run.status).toBe('completed');
    t.fake.assertDone();

    // A settled task answers 409 with its recorded outcome; an id never handed out answers 404.
    const again = await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${first.task_id}`)
      .send({ success: true, result: 'late' })
      .expect(409);
    expect(again.body.error).toMatchObject({
      code: 'EXTERNAL_TASK_SETTLED',
      details: { taskId: first.task_id, outcome: 'completed', success: true },
    });
    const failed = await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${third.task_id}`)
      .send({ success: true })
      .expect(409);
    expect(failed.body.error.details).toMatchObject({
      outcome: 'failed',
      success: false,
      error: 'refused by the host',
    });
    const unknown = await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/ext_never`)
      .send({ success: true })
      .expect(404);
    expect(unknown.body.error).toMatchObject({ code: 'EXTERNAL_TASK_NOT_FOUND', details: { taskId: 'ext_never' } });

    const events = await runEvents(t, id, runId);
    const pending = ofType(events, 'external_task_pending').map((e) => e.payload);
    expect(pending).toHaveLength(3);
    expect(pending[0]).toEqual({
      task_id: first.task_id,
      session_id: id,
      lane: 'Execute',
      command_type: 'bash',
      payload: { command: 'echo from-the-sandbox' },
      timeout_ms: 60_000,
    });
    expect(ofType(events, 'external_task_completed').map((e) => e.payload)).toEqual([
      { task_id: first.task_id, session_id: id, success: true },
      { task_id: second.task_id, session_id: id, success: true },
      { task_id: third.task_id, session_id: id, success: false },
    ]);
    expect(toolEnds(events).map((e) => [e.id, e.exit_code, e.output])).toEqual([
      ['c1', 0, 'host ran it'],
      ['c2', 0, '{"deployed":true,"version":3}'],
      ['c3', 1, 'refused by the host'],
    ]);
    // The call starts executing (at the host) once it holds its slot, after the gates.
    expect(ofType(events, 'tool_execution_start')).toHaveLength(3);
    expect(await stats(t, id)).toMatchObject({ totalPending: 0, totalActive: 0, externalPending: 0 });
  });

  it('a task the host does not answer in time gives the model a timeout result naming the limit; a late answer is 409', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: { laneHandlers: { execute: { mode: 'external', timeoutMs: 300 } } },
    });
    t.fake.script(
      { toolCalls: [{ id: 'slow', name: 'bash', arguments: { command: 'make' } }] },
      {
        text: 'gave up',
        expect: (req) =>
          expect(String(toolMessage(req, 'slow')?.content)).toMatch(
            /^Tool bash timed out: the host did not complete external task \S+ within 300 ms \(queueConfig\.laneHandlers\.execute\.timeoutMs\)\.$/,
          ),
      },
    );
    const runId = await startRun(t, id, 'go');
    const [task] = await pendingTasks(t, id, 1);
    expect(task.timeout_ms).toBe(300);
    expect((await finished(t, id, runId)).status).toBe('completed');
    t.fake.assertDone();
    const late = await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${task.task_id}`)
      .send({ success: true, result: 'too late' })
      .expect(409);
    expect(late.body.error.details).toMatchObject({ outcome: 'timed_out' });
    const [end] = toolEnds(await runEvents(t, id, runId));
    expect(end).toMatchObject({ exit_code: 1, error_kind: { type: 'timeout' } });
    expect(await tasks(t, id)).toEqual([]);
  });

  it('queueConfig.timeoutMs is the default handler timeout, and bounds a call run here', async () => {
    const t = await server();
    const id = await createSession(t, { queueConfig: { timeoutMs: 400 } });
    t.fake.script(
      { toolCalls: [{ id: 'sleepy', name: 'bash', arguments: { command: 'sleep 5' } }] },
      {
        text: 'ok',
        expect: (req) =>
          expect(toolMessage(req, 'sleepy')?.content).toBe('Tool bash timed out after 400 ms (queueConfig.timeoutMs).'),
      },
    );
    const started = Date.now();
    const runId = await startRun(t, id, 'go');
    expect((await finished(t, id, runId)).status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(4000);
    t.fake.assertDone();
    expect(lane(await stats(t, id), 'execute').handlerMode).toBe('internal');
    // PUT switches a lane; an omitted timeout is the lane default (here queueConfig.timeoutMs).
    const put = await request(t.url).put(`/v1/sessions/${id}/queue/lanes/query`).send({ mode: 'external' }).expect(200);
    expect(put.body.lane).toMatchObject({ lane: 'query', handlerMode: 'external', timeoutMs: 400 });
  });
});

describe('lane queue: concurrency, cancellation, hybrid', () => {
  it('queryConcurrency 1 lets one read of a batch reach the host at a time; the other waits in the lane', async () => {
    const t = await server({ files: { 'a.txt': 'A', 'b.txt': 'B' } });
    const id = await createSession(t, {
      queueConfig: { queryConcurrency: 1, laneHandlers: { query: { mode: 'external' } } },
    });
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'b1',
            name: 'batch',
            arguments: {
              invocations: [
                { tool: 'read', args: { file_path: 'a.txt' } },
                { tool: 'read', args: { file_path: 'b.txt' } },
              ],
            },
          },
        ],
      },
      { text: 'read both' },
    );
    const runId = await startRun(t, id, 'go');
    const [first] = await pendingTasks(t, id, 1);
    expect(first).toMatchObject({ lane: 'Query', command_type: 'read' });
    // The second read stays queued while the first holds the only slot.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await tasks(t, id)).toHaveLength(1);
    const s = await stats(t, id);
    expect(lane(s, 'query')).toMatchObject({ pending: 1, active: 1, maxConcurrency: 1 });
    expect(s).toMatchObject({ totalPending: 1, totalActive: 1, externalPending: 1 });
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${first.task_id}`)
      .send({ success: true, result: 'first' })
      .expect(200);
    let second: Task | undefined;
    await eventually(async () => {
      second = (await tasks(t, id)).find((task) => task.task_id !== first.task_id);
      return second !== undefined;
    }, 'the second read to reach the host');
    expect(second?.payload).not.toEqual(first.payload);
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${second?.task_id}`)
      .send({ success: true, result: 'second' })
      .expect(200);
    expect((await finished(t, id, runId)).status).toBe('completed');
    t.fake.assertDone();
    const batchOutput = String(toolMessage(t.fake.requests[1], 'b1')?.content);
    expect(batchOutput).toContain('first');
    expect(batchOutput).toContain('second');
  });

  it('executeConcurrency bounds calls run here: with 1, two slow governed bash calls do not overlap; with 2 they do', async () => {
    const t = await server();
    const spans = async (executeConcurrency: number): Promise<[number, number][]> => {
      const id = await createSession(t, { queueConfig: { executeConcurrency } });
      const call = () =>
        request(t.url)
          .post(`/v1/sessions/${id}/tools/bash/governed`)
          .send({ args: { command: 'date +%s%N; sleep 0.6; date +%s%N' } })
          .expect(200);
      const answers = await Promise.all([call(), call()]);
      return answers.map((res) => {
        const [start, end] = String(res.body.output)
          .trim()
          .split(/\s+/)
          .map((n) => Number(BigInt(n) / 1_000_000n));
        return [start, end] as [number, number];
      });
    };
    const overlaps = ([a, b]: [number, number][]) => a[0] < b[1] && b[0] < a[1];
    const serial = await spans(1);
    expect(serial.every(([start, end]) => end - start >= 500)).toBe(true);
    expect(overlaps(serial)).toBe(false);
    expect(overlaps(await spans(2))).toBe(true);
  });

  it('cancelling the run drains its lane: the waiting calls and the one at the host end as cancelled tool results', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: { queryConcurrency: 1, laneHandlers: { query: { mode: 'external' } } },
    });
    t.fake.script({
      toolCalls: [
        {
          id: 'b1',
          name: 'batch',
          arguments: { invocations: [1, 2, 3].map((n) => ({ tool: 'read', args: { file_path: `f${n}.txt` } })) },
        },
      ],
    });
    const runId = await startRun(t, id, 'go');
    const [task] = await pendingTasks(t, id, 1);
    await eventually(async () => lane(await stats(t, id), 'query').pending === 2, 'two reads waiting in the lane');
    await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).expect(200, { cancelled: true });
    expect((await finished(t, id, runId)).status).toBe('cancelled');
    expect(await stats(t, id)).toMatchObject({ totalPending: 0, totalActive: 0, externalPending: 0 });
    expect(await tasks(t, id)).toEqual([]);
    const late = await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${task.task_id}`)
      .send({ success: true })
      .expect(409);
    expect(late.body.error.details).toMatchObject({ outcome: 'cancelled' });
    const events = await runEvents(t, id, runId);
    const children = toolEnds(events).filter((e) => e.id.startsWith('b1.'));
    expect(children).toHaveLength(3);
    for (const child of children) expect(child).toMatchObject({ exit_code: 1, error_kind: { type: 'cancelled' } });
    expect(children.filter((c) => c.output.includes('while waiting in the query lane'))).toHaveLength(2);
    expect(children.filter((c) => c.output.includes('while waiting for the host'))).toHaveLength(1);
    expect(ofType(events, 'external_task_completed').map((e) => e.payload)).toEqual([
      { task_id: task.task_id, session_id: id, success: false },
    ]);
    t.fake.assertDone();
  });

  it('a hybrid lane runs the call here and notifies the host; the host cannot answer it', async () => {
    const t = await server();
    const id = await createSession(t, { queueConfig: { laneHandlers: { execute: { mode: 'hybrid' } } } });
    t.fake.script(
      { toolCalls: [{ id: 'h1', name: 'bash', arguments: { command: 'echo ran-here' } }] },
      { text: 'ok', expect: (req) => expect(String(toolMessage(req, 'h1')?.content)).toContain('ran-here') },
    );
    const runId = await startRun(t, id, 'go');
    expect((await finished(t, id, runId)).status).toBe('completed');
    t.fake.assertDone();
    const events = await runEvents(t, id, runId);
    const [pending] = ofType(events, 'external_task_pending').map((e) => e.payload as unknown as Task);
    expect(pending).toMatchObject({ lane: 'Execute', command_type: 'bash', payload: { command: 'echo ran-here' } });
    expect(ofType(events, 'external_task_completed').map((e) => e.payload)).toEqual([
      { task_id: pending.task_id, session_id: id, success: true },
    ]);
    expect(await tasks(t, id)).toEqual([]);
    const answer = await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${pending.task_id}`)
      .send({ success: true })
      .expect(409);
    expect(answer.body.error.details).toMatchObject({ outcome: 'internal' });
  });
});

describe('lane queue: retries and dead letters', () => {
  it('retries a host failure with the fixed delay (command_retry), and dead-letters a call that keeps timing out', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: {
        enableDlq: true,
        dlqMaxSize: 5,
        retryPolicy: { strategy: 'fixed', maxRetries: 2, fixedDelayMs: 50 },
        laneHandlers: { execute: { mode: 'external', timeoutMs: 200 } },
      },
    });
    t.fake.script(
      {
        toolCalls: [
          { id: 'flaky', name: 'bash', arguments: { command: 'flaky' } },
          { id: 'gone', name: 'bash', arguments: { command: 'gone' } },
        ],
      },
      {
        text: 'done',
        expect: (req) => {
          expect(toolMessage(req, 'flaky')?.content).toBe('worked the second time');
          expect(String(toolMessage(req, 'gone')?.content)).toMatch(
            /timed out: the host did not complete external task \S+ within 200 ms/,
          );
        },
      },
    );
    const runId = await startRun(t, id, 'go');
    const first = await taskFor(t, id, 'flaky');
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${first.task_id}`)
      .send({ success: false, error: 'host hiccup' })
      .expect(200);
    let retried: Task | undefined;
    await eventually(
      async () =>
        (retried = (await tasks(t, id)).find(
          (task) => task.task_id !== first.task_id && (task.payload as { command: string }).command === 'flaky',
        )) !== undefined,
      'the retried task',
    );
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${retried?.task_id}`)
      .send({ success: true, result: 'worked the second time' })
      .expect(200);
    expect((await finished(t, id, runId)).status).toBe('completed');
    t.fake.assertDone();

    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'command_retry').map((e) => e.payload)).toEqual([
      { command_id: 'flaky', command_type: 'bash', lane: 'execute', attempt: 2, delay_ms: 50 },
      { command_id: 'gone', command_type: 'bash', lane: 'execute', attempt: 2, delay_ms: 50 },
      { command_id: 'gone', command_type: 'bash', lane: 'execute', attempt: 3, delay_ms: 50 },
    ]);
    const dead = ofType(events, 'command_dead_lettered').map(
      (e) => e.payload as { command_id: string; lane: string; attempts: number; error: string },
    );
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ command_id: 'gone', command_type: 'bash', lane: 'execute', attempts: 3 });
    expect(dead[0].error).toContain('timed out');
    // Each attempt is its own external task; the call runs (tool_execution_start) once.
    expect(ofType(events, 'external_task_pending')).toHaveLength(5);
    expect(ofType(events, 'tool_execution_start')).toHaveLength(2);
    const letters = (await request(t.url).get(`/v1/sessions/${id}/queue/dead-letters`).expect(200)).body.deadLetters;
    expect(letters).toEqual([
      expect.objectContaining({
        command_id: 'gone',
        command_type: 'bash',
        lane: 'execute',
        attempts: 3,
        payload: { command: 'gone' },
        run_id: runId,
      }),
    ]);
  });

  it('without enableDlq nothing is dead-lettered, and retryPolicy none tries once', async () => {
    const t = await server();
    const id = await createSession(t, {
      queueConfig: {
        retryPolicy: { strategy: 'none', maxRetries: 5 },
        laneHandlers: { execute: { mode: 'external', timeoutMs: 100 } },
      },
    });
    t.fake.script({ toolCalls: [{ id: 'once', name: 'bash', arguments: { command: 'once' } }] }, { text: 'ok' });
    const runId = await startRun(t, id, 'go');
    expect((await finished(t, id, runId)).status).toBe('completed');
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'external_task_pending')).toHaveLength(1);
    expect(ofType(events, 'command_retry')).toEqual([]);
    expect(ofType(events, 'command_dead_lettered')).toEqual([]);
    await request(t.url).get(`/v1/sessions/${id}/queue/dead-letters`).expect(200, { deadLetters: [] });
    t.fake.assertDone();
  });
});

describe('lane queue: opt-in and bad input', () => {
  it('a session without queueConfig has no queue: hasQueue false, tools run as before, queue routes 409 QUEUE_NOT_CONFIGURED', async () => {
    const t = await server();
    const id = await createSession(t);
    expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.hasQueue).toBe(false);
    await request(t.url).get(`/v1/sessions/${id}/queue`).expect(200, { hasQueue: false, stats: null });
    const calls: [string, string, Record<string, unknown>?][] = [
      ['get', 'queue/stats'],
      ['get', 'queue/external-tasks'],
      ['get', 'queue/dead-letters'],
      ['put', 'queue/lanes/execute', { mode: 'external' }],
      ['post', 'queue/external-tasks/ext_1', { success: true }],
    ];
    for (const [method, path, body] of calls) {
      const res = await request(t.url)[method as 'get'](`/v1/sessions/${id}/${path}`).send(body).expect(409);
      expect(res.body.error, path).toMatchObject({ code: 'QUEUE_NOT_CONFIGURED', details: { field: 'queueConfig' } });
    }
    t.fake.script(
      { toolCalls: [{ id: 'p1', name: 'bash', arguments: { command: 'echo plain' } }] },
      { text: 'ok', expect: (req) => expect(String(toolMessage(req, 'p1')?.content)).toContain('plain') },
    );
    const runId = await startRun(t, id, 'go');
    expect((await finished(t, id, runId)).status).toBe('completed');
    expect(ofType(await runEvents(t, id, runId), 'external_task_pending')).toEqual([]);
    t.fake.assertDone();

    const queued = await createSession(t, { queueConfig: {} });
    const info = await request(t.url).get(`/v1/sessions/${queued}/queue`).expect(200);
    expect(info.body).toMatchObject({ hasQueue: true, stats: { totalPending: 0, totalActive: 0, externalPending: 0 } });
    expect(info.body.stats.lanes.map((l: Stats['lanes'][number]) => [l.lane, l.maxConcurrency, l.handlerMode])).toEqual(
      [
        ['control', 2, 'internal'],
        ['query', 4, 'internal'],
        ['execute', 2, 'internal'],
        ['generate', 1, 'internal'],
      ],
    );
  });

  it('unknown lanes, mode typos, bad bodies and unbuilt queue features are 400s naming the field', async () => {
    const t = await server();
    const bad: [Record<string, unknown>, string][] = [
      [{ laneHandlers: { bogus: { mode: 'external' } } }, 'queueConfig.laneHandlers'],
      [{ laneHandlers: { execute: { mode: 'externel' } } }, 'queueConfig.laneHandlers.execute.mode'],
      [{ executeConcurrency: 0 }, 'queueConfig.executeConcurrency'],
      [{ laneHandlers: { query: { mode: 'external', timeoutMs: -1 } } }, 'queueConfig.laneHandlers.query.timeoutMs'],
      [{ retryPolicy: { strategy: 'linear' } }, 'queueConfig.retryPolicy.strategy'],
      [{ retryPolicy: { strategy: 'fixed', maxRetries: 1000 } }, 'queueConfig.retryPolicy.maxRetries'],
    ];
    for (const [queueConfig, field] of bad) {
      const res = await request(t.url).post('/v1/sessions').send({ queueConfig }).expect(400);
      expect(res.body.error.code, field).toBe('VALIDATION_ERROR');
      expect(res.body.error.message, field).toContain(field);
      if (field === 'queueConfig.laneHandlers') expect(res.body.error.message).toContain('bogus');
    }
    // Metrics and alerts are built (test/server/queue-metrics.test.ts); a non-boolean is a 400 naming the field.
    const notBool = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ queueConfig: { enableMetrics: 'yes' } })
        .expect(400)
    ).body.error;
    expect(notBool.message).toContain('queueConfig.enableMetrics');
    await request(t.url)
      .post('/v1/sessions')
      .send({ queueConfig: { enableDlq: false, enableMetrics: false } })
      .expect(201);

    const id = await createSession(t, { queueConfig: {} });
    const lanePath = (
      await request(t.url).put(`/v1/sessions/${id}/queue/lanes/bogus`).send({ mode: 'external' }).expect(400)
    ).body.error;
    expect(lanePath).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(lanePath.message).toContain('params.lane');
    const typo = (
      await request(t.url).put(`/v1/sessions/${id}/queue/lanes/execute`).send({ mode: 'extern' }).expect(400)
    ).body.error;
    expect(typo.message).toContain('body.mode');
    const extra = (
      await request(t.url)
        .put(`/v1/sessions/${id}/queue/lanes/execute`)
        .send({ mode: 'external', timeout: 5 })
        .expect(400)
    ).body.error;
    expect(extra.message).toContain('timeout');
    const noSuccess = (
      await request(t.url).post(`/v1/sessions/${id}/queue/external-tasks/ext_1`).send({ result: 'x' }).expect(400)
    ).body.error;
    expect(noSuccess.message).toContain('body.success');
    // Nothing changed.
    expect(lane(await stats(t, id), 'execute').handlerMode).toBe('internal');
  });
});
