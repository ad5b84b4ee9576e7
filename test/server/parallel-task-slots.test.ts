import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeStep, type RecordedRequest } from '../support/fake-provider.js';
import { tempDir, type TestServer } from '../support/test-server.js';
import { createSession, eventually, startRun, toolMessage, useTestServers } from '../support/run-helpers.js';

type Msg = { role: string; content?: unknown };

const messagesOf = (r: RecordedRequest) => r.body.messages as Msg[];
const runPrompt = (r: RecordedRequest) => String(messagesOf(r).findLast((m) => m.role === 'user')?.content ?? '');
const childStart = (prompt: string) => (r: RecordedRequest) =>
  runPrompt(r).startsWith(prompt) && messagesOf(r).at(-1)?.role === 'user';
const afterTool = (prompt: string) => (r: RecordedRequest) =>
  runPrompt(r).startsWith(prompt) && messagesOf(r).at(-1)?.role === 'tool';

const OPEN_POLICY = { allow: ['task', 'parallel_task'], defaultDecision: 'deny' };
const CHILD_MS = 500;

/** A parent that fans out `count` children (`<name> 1`..), each answering after CHILD_MS; arrivals are recorded. */
function fanOut(name: string, count: number, arrivals: number[]): FakeStep[] {
  const tasks = Array.from({ length: count }, (_, i) => ({
    agent: 'general',
    description: `kid ${i + 1}`,
    prompt: `${name} ${i + 1}`,
  }));
  return [
    { when: childStart(`go ${name}`), toolCalls: [{ id: `pt_${name}`, name: 'parallel_task', arguments: { tasks } }] },
    ...tasks.map((task): FakeStep => ({
      when: childStart(task.prompt),
      delayMs: CHILD_MS,
      expect: () => void arrivals.push(Date.now()),
      text: `done ${task.prompt}`,
    })),
    { when: afterTool(`go ${name}`), text: 'all done' },
  ];
}

const statuses = async (t: TestServer, id: string) =>
  ((await request(t.url).get(`/v1/sessions/${id}/tasks`).expect(200)).body.tasks as { status: string }[]).map(
    (task) => task.status,
  );

const childRequests = (t: TestServer, name: string) =>
  t.fake.requests.filter((r) => runPrompt(r).startsWith(`${name} `)).length;

async function waitRun(t: TestServer, id: string, runId: string, status: string): Promise<void> {
  await eventually(
    async () => (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}`)).body.run.status === status,
    `run ${status}`,
    10_000,
  );
}

describe('maxParallelTasks bounds the parallel_task children of a session running at once', () => {
  const start = useTestServers();

  it('with maxParallelTasks 2 (kept across a restart) 5 children run 2 at a time, the rest queued, and all finish', async () => {
    const dataDir = tempDir('a3s-slots-');
    const fake = await startFakeProvider();
    try {
      const first = await start({ dataDir, fake, config: { defaultPermissionPolicy: OPEN_POLICY } });
      const id = await createSession(first, { autoSave: true, maxParallelTasks: 2 });
      await first.close();
      // The session is hydrated from its snapshot on the second server: the option came with it.
      const t = await start({ dataDir, fake, root: first.root, config: { defaultPermissionPolicy: OPEN_POLICY } });
      const arrivals: number[] = [];
      fake.script(...fanOut('slot', 5, arrivals));
      const runId = await startRun(t, id, 'go slot');
      await eventually(() => childRequests(t, 'slot') === 2, 'two children asked');
      await eventually(async () => {
        const now = await statuses(t, id);
        return now.filter((s) => s === 'running').length === 2 && now.filter((s) => s === 'queued').length === 3;
      }, '2 running, 3 queued');
      // Half a child's time later the queued ones still wait: no third provider request.
      await new Promise((resolve) => setTimeout(resolve, CHILD_MS / 2));
      expect(childRequests(t, 'slot')).toBe(2);
      await waitRun(t, id, runId, 'completed');
      expect(toolMessage(t, 'pt_slot')).toContain('5 of 5 tasks succeeded');
      expect(await statuses(t, id)).toEqual(Array(5).fill('completed'));
      // Each child's request came only after the one two before it had been answered.
      expect(arrivals).toHaveLength(5);
      for (let i = 2; i < arrivals.length; i += 1)
        expect(arrivals[i]! - arrivals[i - 2]!).toBeGreaterThanOrEqual(CHILD_MS - 20);
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });

  it('with the default (8) the 5 children run at once', async () => {
    const t = await start({ config: { defaultPermissionPolicy: OPEN_POLICY } });
    const id = await createSession(t);
    const arrivals: number[] = [];
    t.fake.script(...fanOut('wide', 5, arrivals));
    const runId = await startRun(t, id, 'go wide');
    await eventually(() => childRequests(t, 'wide') === 5, 'five children asked', 5_000);
    expect(Math.max(...arrivals) - Math.min(...arrivals)).toBeLessThan(CHILD_MS);
    expect(await statuses(t, id)).not.toContain('queued');
    await waitRun(t, id, runId, 'completed');
    expect(toolMessage(t, 'pt_wide')).toContain('5 of 5 tasks succeeded');
    t.fake.assertDone();
  });

  it("the slots are the session's: a host tasks request waits behind the model's parallel_task", async () => {
    const t = await start({ config: { defaultPermissionPolicy: OPEN_POLICY } });
    const id = await createSession(t, { maxParallelTasks: 2 });
    const modelArrivals: number[] = [];
    const hostArrivals: number[] = [];
    t.fake.script(
      ...fanOut('share', 2, modelArrivals),
      ...[1, 2].map((n): FakeStep => ({
        when: childStart(`host ${n}`),
        expect: () => void hostArrivals.push(Date.now()),
        text: `host done ${n}`,
      })),
    );
    const runId = await startRun(t, id, 'go share');
    await eventually(() => childRequests(t, 'share') === 2, 'the model children asked');
    const host = request(t.url)
      .post(`/v1/sessions/${id}/tasks`)
      .send({
        tasks: [1, 2].map((n) => ({ agent: 'general', description: `host ${n}`, prompt: `host ${n}` })),
      })
      .then((res) => res);
    await eventually(async () => (await statuses(t, id)).join() === 'running,running,queued,queued', 'host queued');
    const answered = await host;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ name: 'parallel_task', exitCode: 0, metadata: { succeeded: 2, total: 2 } });
    // The host's children asked only once the model's had been answered.
    expect(Math.min(...hostArrivals)).toBeGreaterThanOrEqual(Math.min(...modelArrivals) + CHILD_MS - 20);
    await waitRun(t, id, runId, 'completed');
    expect(await statuses(t, id)).toEqual(Array(4).fill('completed'));
    t.fake.assertDone();
  });

  it('cancelling the run releases queued children at once: they end cancelled without a provider request', async () => {
    const t = await start({ config: { defaultPermissionPolicy: OPEN_POLICY } });
    const id = await createSession(t, { maxParallelTasks: 1 });
    const tasks = [1, 2, 3].map((n) => ({ agent: 'general', description: `hang ${n}`, prompt: `hang ${n}` }));
    t.fake.script(
      { when: childStart('go hang'), toolCalls: [{ id: 'ph', name: 'parallel_task', arguments: { tasks } }] },
      { when: childStart('hang 1'), hang: true },
    );
    const runId = await startRun(t, id, 'go hang');
    await eventually(async () => (await statuses(t, id)).join() === 'running,queued,queued', '1 running, 2 queued');
    const cancelledAt = Date.now();
    await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).expect(200);
    await eventually(async () => (await statuses(t, id)).every((s) => s === 'cancelled'), 'every task cancelled', 1000);
    expect(Date.now() - cancelledAt).toBeLessThan(1000);
    const listed = (await request(t.url).get(`/v1/sessions/${id}/tasks`).expect(200)).body.tasks as {
      run_id: string | null;
      error: { code: string } | null;
    }[];
    expect(listed.slice(1)).toEqual(
      [1, 2].map(() =>
        expect.objectContaining({ run_id: null, error: expect.objectContaining({ code: 'CANCELLED' }) }),
      ),
    );
    expect(childRequests(t, 'hang')).toBe(1);
    await waitRun(t, id, runId, 'cancelled');
    t.fake.assertDone();
  });

  it('maxParallelTasks must be a whole number from 1 to 64: otherwise 400 naming the field', async () => {
    const t = await start();
    for (const value of [0, 65, 1.5, '2']) {
      const res = await request(t.url).post('/v1/sessions').send({ maxParallelTasks: value }).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toContain('body.maxParallelTasks');
    }
    await request(t.url).post('/v1/sessions').send({ maxParallelTasks: 64 }).expect(201);
  });
});
