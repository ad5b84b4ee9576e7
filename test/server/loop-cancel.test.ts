import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { hostProcessesWith } from '../sandbox/sandbox-helpers.js';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/protocol/run-record.js';
import {
  createSession,
  eventually,
  getRun,
  history,
  runEvents,
  startRun,
  useTestServers,
  type FinishedRun,
} from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';

const server = useTestServers();

async function cancel(t: TestServer, sessionId: string, runId: string): Promise<boolean> {
  const res = await request(t.url).post(`/v1/sessions/${sessionId}/runs/${runId}/cancel`).expect(200);
  return (res.body as { cancelled: boolean }).cancelled;
}

/** Waits until the run is terminal and the session has released its lease. */
async function settled(t: TestServer, sessionId: string, runId: string): Promise<RunRecord> {
  let run: RunRecord | undefined;
  await eventually(async () => {
    run = await getRun(t, sessionId, runId);
    if (!['completed', 'failed', 'cancelled'].includes(run.status)) return false;
    const info = await request(t.url).get(`/v1/sessions/${sessionId}`).expect(200);
    return (info.body as { session: { busy: boolean } }).session.busy === false;
  }, `run ${runId} to end`);
  if (!run) throw new Error('unreachable');
  return run;
}

// A marker the host's process table is scanned for: inside the sandbox $! is a pid of its own PID namespace.
const SLEEPER = 'sleep 30.417 & echo $! > sleep.pid; wait';
const sleeperAlive = (): boolean => hostProcessesWith('sleep 30.417').length > 0;

describe('cancellation over HTTP', () => {
  it('cancels a run whose provider call hangs; a later cancel returns false and the session takes new runs', async () => {
    const t = await server();
    const id = await createSession(t);
    t.fake.script({ hang: true });
    const runId = await startRun(t, id, 'hello');
    await t.fake.waitForRequests(1);
    const started = Date.now();
    expect(await cancel(t, id, runId)).toBe(true);
    const run = await settled(t, id, runId);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.status).toBe('cancelled');
    expect(run.error?.code).toBe('CANCELLED');
    expect(await cancel(t, id, runId)).toBe(false);
    // An unknown run is not active either (seed cancelRun: false).
    await request(t.url).post(`/v1/sessions/${id}/runs/run_unknown/cancel`).expect(200, { cancelled: false });

    const events = await runEvents(t, id, runId);
    const end = events.find((e) => e.type === 'agent_end');
    expect(end?.payload).toMatchObject({ status: 'cancelled' });
    // A cancelled run is not an error.
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    expect(await history(t, id)).toEqual([{ role: 'user', content: 'hello' }]);

    t.fake.script({ text: 'Back again.' });
    const next = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'again', wait: true }).expect(200);
    expect((next.body as FinishedRun).result.text).toBe('Back again.');
    t.fake.assertDone();
  });

  it('cancels a run mid-stream (between chunks)', async () => {
    const t = await server();
    const id = await createSession(t);
    t.fake.script({ text: 'a slow and steady answer', chunks: 6, chunkDelayMs: 600 });
    const runId = await startRun(t, id, 'hello');
    await eventually(
      async () => (await runEvents(t, id, runId)).some((e) => e.type === 'text_delta'),
      'the first text delta',
    );
    expect(await cancel(t, id, runId)).toBe(true);
    const run = await settled(t, id, runId);
    expect(run.status).toBe('cancelled');
    expect(await history(t, id)).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('cancelling during a bash call kills its process group and answers the call', async () => {
    const t = await server();
    const id = await createSession(t);
    t.fake.script({
      toolCalls: [
        { id: 'sleeper', name: 'bash', arguments: { command: SLEEPER } },
        { id: 'never', name: 'ls', arguments: {} },
      ],
    });
    const runId = await startRun(t, id, 'sleep');
    const pidFile = join(t.root, 'sleep.pid');
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the sleeper to start');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(sleeperAlive()).toBe(true);

    expect(await cancel(t, id, runId)).toBe(true);
    const run = await settled(t, id, runId);
    expect(run.status).toBe('cancelled');
    await eventually(() => !sleeperAlive(), `sleep (pid ${pid}) to be killed`);
    // The same signal reached the tool and the loop: no further provider call was made.
    expect(t.fake.requests).toHaveLength(1);
    t.fake.assertDone();

    const messages = await history(t, id);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(messages[2]).toMatchObject({ tool_call_id: 'sleeper' });
    expect(messages[2].content).toContain('cancelled');
    expect(messages[3]).toMatchObject({ tool_call_id: 'never' });
    expect(messages[3].content).toContain('Not run');

    const events = await runEvents(t, id, runId);
    expect(events.filter((e) => e.type === 'tool_execution_start').map((e) => e.payload.id)).toEqual(['sleeper']);
    expect(events.filter((e) => e.type === 'tool_end').map((e) => e.payload.id)).toEqual(['sleeper', 'never']);
  });
});

describe('closing a session over HTTP', () => {
  it('DELETE during a hanging run cancels it; later calls get 410 SESSION_CLOSED; DELETE again is idempotent', async () => {
    const t = await server();
    const id = await createSession(t);
    t.fake.script({ hang: true });
    const waiting = request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .send({ input: 'hello', wait: true })
      .then((res) => res);
    await t.fake.waitForRequests(1);

    const closed = await request(t.url).delete(`/v1/sessions/${id}`).expect(200);
    expect(closed.body).toEqual({ closed: true });
    const finished = await waiting;
    expect(finished.status).toBe(200);
    expect((finished.body as FinishedRun).run.status).toBe('cancelled');

    for (const call of [
      request(t.url).get(`/v1/sessions/${id}`),
      request(t.url).get(`/v1/sessions/${id}/history`),
      request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'again' }),
      request(t.url).get(`/v1/sessions/${id}/runs/${(finished.body as FinishedRun).runId}`),
    ]) {
      const res = await call;
      expect(res.status).toBe(410);
      expect(res.body.error.code).toBe('SESSION_CLOSED');
    }
    await request(t.url).delete(`/v1/sessions/${id}`).expect(200);
    t.fake.assertDone();
  });

  it('DELETE during a bash call kills its process group', async () => {
    const t = await server();
    const id = await createSession(t);
    t.fake.script({ toolCalls: [{ id: 'sleeper', name: 'bash', arguments: { command: SLEEPER } }] });
    const waiting = request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .send({ input: 'sleep', wait: true })
      .then((res) => res);
    const pidFile = join(t.root, 'sleep.pid');
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the sleeper to start');
    const pid = Number(readFileSync(pidFile, 'utf8'));

    await request(t.url).delete(`/v1/sessions/${id}`).expect(200);
    const finished = await waiting;
    expect((finished.body as FinishedRun).run.status).toBe('cancelled');
    await eventually(() => !sleeperAlive(), `sleep (pid ${pid}) to be killed`);
    expect(t.fake.requests).toHaveLength(1);
    t.fake.assertDone();
  });
});
