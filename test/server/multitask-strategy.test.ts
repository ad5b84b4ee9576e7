import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import type { RunRecord } from '../../src/protocol/run-record.js';
import { startFakeProvider } from '../support/fake-provider.js';
import type { TestServer } from '../support/test-server.js';
import {
  createSession,
  eventually,
  getRun,
  history,
  ofType,
  runAndWait,
  runEvents,
  startRun,
  useTestServers,
} from '../support/run-helpers.js';

const start = useTestServers();

interface Queued {
  runId: string;
  run: RunRecord;
  existing: boolean;
  queuePosition?: number;
}

async function post(t: TestServer, id: string, body: Record<string, unknown>, status: number, key?: string) {
  const req = request(t.url).post(`/v1/sessions/${id}/runs`);
  if (key) req.set('Idempotency-Key', key);
  return req.send(body).expect(status);
}

async function enqueue(t: TestServer, id: string, input: string, strategy = 'enqueue', key?: string): Promise<Queued> {
  return (await post(t, id, { input, multitaskStrategy: strategy }, 202, key)).body as Queued;
}

async function ended(t: TestServer, id: string, runId: string): Promise<RunRecord> {
  let run: RunRecord | undefined;
  await eventually(async () => {
    run = await getRun(t, id, runId);
    return ['completed', 'failed', 'cancelled'].includes(run.status);
  }, `run ${runId} to end`);
  return run!;
}

/** The text of the last user message of a provider request. */
function lastUserInput(messages: ChatMessage[]): unknown {
  return messages.filter((m) => m.role === 'user').at(-1)?.content;
}

const seq = (e: EventEnvelope): number => (e.metadata as { session_sequence: number }).session_sequence;

describe('multitaskStrategy: a second run while the session is busy', () => {
  it('enqueue: two runs wait behind the active one and run in order, run_queued then agent_start', async () => {
    const t = await start();
    const id = await createSession(t);
    t.fake.script({ delayMs: 400, text: 'first answer' }, { text: 'second answer' }, { text: 'third answer' });
    const first = await startRun(t, id, 'first');
    // The default is still reject.
    const busy = await post(t, id, { input: 'nope' }, 409);
    expect(busy.body.error).toMatchObject({ code: 'SESSION_BUSY', details: { activeRunId: first } });
    const second = await enqueue(t, id, 'second');
    const third = await enqueue(t, id, 'third');
    expect(second).toMatchObject({ existing: false, queuePosition: 1, run: { status: 'queued', input: 'second' } });
    expect(third).toMatchObject({ queuePosition: 2, run: { status: 'queued' } });
    expect((await getRun(t, id, third.runId)).status).toBe('queued');

    const last = await ended(t, id, third.runId);
    expect(last.status).toBe('completed');
    expect(last.result?.text).toBe('third answer');
    expect((await getRun(t, id, second.runId)).result?.text).toBe('second answer');
    t.fake.assertDone();
    // Each provider request saw the earlier runs' answers: they ran one after the other, in order.
    const inputs = t.fake.requests.map((r) => lastUserInput(r.body.messages as ChatMessage[]));
    expect(inputs).toEqual(['first', 'second', 'third']);
    expect((t.fake.requests[2]!.body.messages as ChatMessage[]).map((m) => m.content)).toContain('second answer');
    expect((await history(t, id)).map((m) => m.content)).toEqual([
      'first',
      'first answer',
      'second',
      'second answer',
      'third',
      'third answer',
    ]);

    const firstEnd = ofType(await runEvents(t, id, first), 'agent_end')[0]!;
    const events = await runEvents(t, id, second.runId);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('run_queued');
    expect(events[0]!.payload).toEqual({ run_id: second.runId, queue_position: 1, strategy: 'enqueue' });
    expect(types.indexOf('agent_start')).toBeGreaterThan(0);
    expect(ofType(events, 'run_status_changed')[0]!.payload).toEqual({ from: 'queued', to: 'created' });
    // It started only after the first run ended.
    expect(seq(ofType(events, 'agent_start')[0]!)).toBeGreaterThan(seq(firstEnd));
    expect(ofType(await runEvents(t, id, third.runId), 'run_queued')[0]!.payload).toMatchObject({
      queue_position: 2,
    });
  });

  it('wait: true with enqueue answers when the queued run has ended', async () => {
    const t = await start();
    const id = await createSession(t);
    t.fake.script({ delayMs: 300, text: 'one' }, { text: 'two' });
    await startRun(t, id, 'one');
    const waited = await post(t, id, { input: 'two', multitaskStrategy: 'enqueue', wait: true }, 200);
    expect(waited.body).toMatchObject({ run: { status: 'completed', input: 'two' }, result: { text: 'two' } });
  });

  it('is bounded by limits.maxQueuedRuns (429 naming it); a queued run can be cancelled and never starts', async () => {
    const t = await start({ config: { limits: { maxQueuedRuns: 1 } } });
    const id = await createSession(t);
    t.fake.script({ delayMs: 500, text: 'only the active one reaches the provider' });
    const active = await startRun(t, id, 'active');
    const queued = await enqueue(t, id, 'waits');
    const full = await post(t, id, { input: 'one too many', multitaskStrategy: 'enqueue' }, 429);
    expect(full.body.error).toMatchObject({
      code: 'RUN_QUEUE_FULL',
      details: { limit: 'limits.maxQueuedRuns', maxQueuedRuns: 1, queued: 1 },
    });
    expect(full.body.error.message).toContain('limits.maxQueuedRuns (1)');
    // Nothing of the refused request was recorded.
    const listed = (await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs as RunRecord[];
    expect(listed.map((r) => r.input)).toEqual(['active', 'waits']);

    const cancel = await request(t.url).post(`/v1/sessions/${id}/runs/${queued.runId}/cancel`).expect(200);
    expect(cancel.body).toEqual({ cancelled: true });
    const cancelled = await getRun(t, id, queued.runId);
    expect(cancelled).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
    // Once out of the queue, there is room again; cancelling twice is false.
    expect((await request(t.url).post(`/v1/sessions/${id}/runs/${queued.runId}/cancel`).expect(200)).body).toEqual({
      cancelled: false,
    });
    expect((await ended(t, id, active)).status).toBe('completed');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The cancelled run never started: the strict fake got one request, and its events are run_queued and the cancel.
    expect(t.fake.requests).toHaveLength(1);
    expect((await runEvents(t, id, queued.runId)).map((e) => e.type)).toEqual(['run_queued', 'run_status_changed']);
    expect((await history(t, id)).map((m) => m.content)).toEqual([
      'active',
      'only the active one reaches the provider',
    ]);
  });

  it('closing the session cancels its queued runs: a waiting request answers with the cancelled run', async () => {
    const t = await start();
    const id = await createSession(t);
    t.fake.script({ hang: true });
    await startRun(t, id, 'active');
    await t.fake.waitForRequests(1);
    const waiting = post(t, id, { input: 'queued', multitaskStrategy: 'enqueue', wait: true }, 200);
    await eventually(async () => {
      const runs = (await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs as RunRecord[];
      return runs.some((r) => r.status === 'queued');
    }, 'the run to be queued');
    await request(t.url).delete(`/v1/sessions/${id}`).expect(200);
    const answered = (await waiting).body;
    expect(answered).toMatchObject({ run: { status: 'cancelled', input: 'queued' }, result: null });
    expect(answered.run.error.message).toContain('the session closed');
    expect(t.fake.requests).toHaveLength(1);
  });

  it('an Idempotency-Key answers the same queued run', async () => {
    const t = await start();
    const id = await createSession(t);
    t.fake.script({ delayMs: 400, text: 'a' }, { text: 'b' });
    const active = await startRun(t, id, 'a');
    const queued = await enqueue(t, id, 'b', 'enqueue', 'key-b');
    const again = await enqueue(t, id, 'b', 'enqueue', 'key-b');
    expect(again).toMatchObject({ runId: queued.runId, existing: true, queuePosition: 1, run: { status: 'queued' } });
    expect((await ended(t, id, queued.runId)).result?.text).toBe('b');
    const after = await post(t, id, { input: 'b', multitaskStrategy: 'enqueue' }, 202, 'key-b');
    expect(after.body).toMatchObject({ runId: queued.runId, existing: true, run: { status: 'completed' } });
    expect(after.body.queuePosition).toBeUndefined();
    expect((await getRun(t, id, active)).status).toBe('completed');
    t.fake.assertDone();
  });

  it('interrupt: the active run stops after its tool round, keeps what it did, then the new run starts', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const id = await createSession(t);
    t.fake.script(
      { delayMs: 400, toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { text: 'the new run answers' },
    );
    const active = await startRun(t, id, 'read a.txt');
    await t.fake.waitForRequests(1);
    const next = await enqueue(t, id, 'something else', 'interrupt');
    expect(next).toMatchObject({ queuePosition: 1, run: { status: 'queued' } });
    const stopped = await ended(t, id, active);
    expect(stopped.status).toBe('cancelled');
    expect(stopped.error?.message).toContain(`interrupted by run ${next.runId}`);
    expect((await ended(t, id, next.runId)).result?.text).toBe('the new run answers');
    t.fake.assertDone();
    const events = await runEvents(t, id, active);
    expect(ofType(events, 'tool_end')).toHaveLength(1);
    // The interrupted run's tool round stays in the transcript and the new run's request.
    const sent = t.fake.requests[1]!.body.messages as ChatMessage[];
    expect(sent.some((m) => m.role === 'tool' && m.tool_call_id === 'r1' && String(m.content).includes('alpha'))).toBe(
      true,
    );
    const roles = (await history(t, id)).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
  });

  it('rollback: the active run is cancelled, the transcript is as before it, and the new run does not see it', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const id = await createSession(t);
    t.fake.script({ text: 'zero answer' });
    await runAndWait(t, id, 'zero');
    t.fake.script(
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { hang: true },
      { text: 'fresh answer' },
    );
    const doomed = await startRun(t, id, 'doomed question');
    await t.fake.waitForRequests(3);
    const next = await enqueue(t, id, 'fresh question', 'rollback');
    const rolled = await ended(t, id, doomed);
    expect(rolled).toMatchObject({ status: 'cancelled', metadata: { rolled_back_by: next.runId } });
    expect((await ended(t, id, next.runId)).result?.text).toBe('fresh answer');
    t.fake.assertDone();
    const sent = t.fake.requests[3]!.body.messages as ChatMessage[];
    expect(sent.map((m) => m.content).filter((c) => c !== null && !String(c).startsWith('You are'))).toEqual([
      'zero',
      'zero answer',
      'fresh question',
    ]);
    expect(sent.some((m) => m.role === 'tool')).toBe(false);
    expect((await history(t, id)).map((m) => m.content)).toEqual([
      'zero',
      'zero answer',
      'fresh question',
      'fresh answer',
    ]);
    // Its events stay in the log, marked rolled back.
    const events = await runEvents(t, id, doomed);
    expect(ofType(events, 'tool_end')).toHaveLength(1);
    expect(ofType(events, 'run_rolled_back')[0]!.payload).toEqual({ by_run_id: next.runId });
  });

  it("counts a queued run toward the tenant's runs per minute at enqueue; it starts in its session's slot", async () => {
    const t = await start({ config: { defaultTenantQuota: { maxRunsPerMinute: 2, maxConcurrentRuns: 1 } } });
    const id = await createSession(t);
    t.fake.script({ delayMs: 300, text: 'a' }, { text: 'b' });
    await startRun(t, id, 'a');
    const queued = await enqueue(t, id, 'b');
    const over = await post(t, id, { input: 'c', multitaskStrategy: 'enqueue' }, 429);
    expect(over.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'maxRunsPerMinute', limit: 2 } });
    // maxConcurrentRuns 1 does not keep it waiting: it takes the slot the first run released.
    expect((await ended(t, id, queued.runId)).result?.text).toBe('b');
    t.fake.assertDone();
  });

  it('a durable session keeps its queue over a restart: the queued run starts when the session is opened again', async () => {
    const fake = await startFakeProvider();
    try {
      const t = await start({ fake });
      const id = await createSession(t, { autoSave: true });
      fake.script({ hang: true });
      const active = await startRun(t, id, 'never answered');
      await fake.waitForRequests(1);
      const queued = await enqueue(t, id, 'after the restart');
      await t.close();
      const again = await start({ fake, dataDir: t.dataDir, root: t.root });
      fake.script({ text: 'answered after the restart' });
      expect((await getRun(again, id, queued.runId)).input).toBe('after the restart');
      const done = await ended(again, id, queued.runId);
      expect(done).toMatchObject({ status: 'completed', result: { text: 'answered after the restart' } });
      expect((await getRun(again, id, active)).status).toBe('cancelled');
      expect(lastUserInput(fake.requests[1]!.body.messages as ChatMessage[])).toBe('after the restart');
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });

  it('refuses an unknown strategy and a strategy on a side question, naming the field', async () => {
    const t = await start();
    const id = await createSession(t);
    const unknown = await post(t, id, { input: 'x', multitaskStrategy: 'later' }, 400);
    expect(unknown.body.error.code).toBe('VALIDATION_ERROR');
    expect(unknown.body.error.message).toContain('body.multitaskStrategy');
    const side = await post(t, id, { input: 'x', history: [], multitaskStrategy: 'enqueue' }, 400);
    expect(side.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'multitaskStrategy' } });
    expect(side.body.error.message).toContain('body.multitaskStrategy');
    // On an idle session every strategy just runs.
    t.fake.script({ text: 'ran' });
    const ran = await post(t, id, { input: 'go', multitaskStrategy: 'rollback', wait: true }, 200);
    expect(ran.body).toMatchObject({ result: { text: 'ran' } });
    expect(ran.body.queuePosition).toBeUndefined();
  });
});
