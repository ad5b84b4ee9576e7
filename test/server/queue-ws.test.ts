import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { startFakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { eventually, ofType, useTestServers } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { subscribe, type EventSubscriber } from '../support/ws-client.js';

const server = useTestServers();

const HOST = 'token-queue-ws-host-000001';
const OTHER = 'token-queue-ws-other-00001';
const ADMIN = 'token-queue-ws-admin-00001';
const tokens = [
  { token: HOST, principal: 'host', tenantId: 't1', scopes: ['sessions'] },
  { token: OTHER, principal: 'other', tenantId: 't2', scopes: ['sessions'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const EXTERNAL = { queueConfig: { laneHandlers: { execute: { mode: 'external' } } } };

const toolMessage = (req: RecordedRequest, callId: string) =>
  req.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === callId);
const isType = (type: string) => (f: EventEnvelope) => f.type === type;

async function createSession(t: TestServer, token: string, options: Record<string, unknown>): Promise<string> {
  return (await request(t.url).post('/v1/sessions').set(auth(token)).send(options).expect(201)).body.session
    .id as string;
}

async function startRun(t: TestServer, token: string, id: string, input: string): Promise<string> {
  return (await request(t.url).post(`/v1/sessions/${id}/runs`).set(auth(token)).send({ input }).expect(202)).body
    .runId as string;
}

async function runStatus(t: TestServer, token: string, id: string, runId: string): Promise<string> {
  return (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}`).set(auth(token)).expect(200)).body.run
    .status as string;
}

/** Send a message and wait for the next control frame answering it (error or the expected type). */
async function answer(sub: EventSubscriber, message: unknown, type: string): Promise<EventEnvelope> {
  const before = sub.frames.length;
  sub.send(message);
  await eventually(
    () => sub.frames.slice(before).some((f) => f.type === type || f.type === 'error'),
    `a ${type} or error frame`,
  );
  return sub.frames.slice(before).find((f) => f.type === type || f.type === 'error')!;
}

/** Subscribe and register as a host; returns the subscriber. */
async function host(
  t: TestServer,
  id: string,
  token: string,
  from: 'start' | 'live' = 'start',
  tenantId?: string,
): Promise<EventSubscriber> {
  const sub = await subscribe(t.url, id, {
    ...(from === 'start' ? { after: 0 } : {}),
    token,
    ...(tenantId !== undefined ? { tenantId } : {}),
  });
  const registered = await answer(sub, { type: 'host_register' }, 'host_registered');
  expect(registered.type).toBe('host_registered');
  return sub;
}

describe('lane queue over the events WebSocket: a registered host takes external tasks without polling', () => {
  it('a bash call on an external lane is completed over the socket; the model sees the result; 404/409 come back as error frames', async () => {
    const t = await server({ config: { apiTokens: tokens } });
    const id = await createSession(t, HOST, EXTERNAL);
    const sub = await subscribe(t.url, id, { after: 0, token: HOST });
    t.fake.script(
      { toolCalls: [{ id: 'w1', name: 'bash', arguments: { command: 'make deploy' } }] },
      { text: 'deployed', expect: (req) => expect(toolMessage(req, 'w1')?.content).toBe('{"deployed":"v7"}') },
    );
    const runId = await startRun(t, HOST, id, 'ship it');
    // The event frame of the stream is the task: no polling, no extra control frame.
    const pending = await sub.waitFor(isType('external_task_pending'));
    const task = pending.payload as {
      task_id: string;
      lane: string;
      command_type: string;
      payload: unknown;
      timeout_ms: number;
    };
    expect(task).toMatchObject({
      session_id: id,
      lane: 'Execute',
      command_type: 'bash',
      payload: { command: 'make deploy' },
      timeout_ms: 60_000,
    });

    // Not registered yet: refused, and the task stays pending.
    const unregistered = await answer(
      sub,
      { type: 'external_task_complete', task_id: task.task_id, success: true, result: 'x' },
      'external_task_complete_result',
    );
    expect(unregistered.payload).toMatchObject({ code: 'VALIDATION_ERROR', field: 'message.type' });
    expect((await answer(sub, { type: 'host_register' }, 'host_registered')).type).toBe('host_registered');

    const unknown = await answer(
      sub,
      { type: 'external_task_complete', task_id: 'ext_never', success: true },
      'external_task_complete_result',
    );
    expect(unknown.payload).toMatchObject({
      code: 'EXTERNAL_TASK_NOT_FOUND',
      field: 'task_id',
      details: { taskId: 'ext_never' },
    });
    const bad = await answer(
      sub,
      { type: 'external_task_complete', task_id: task.task_id, success: 'yes' },
      'external_task_complete_result',
    );
    expect(bad.payload).toMatchObject({ code: 'VALIDATION_ERROR', field: 'message.success' });
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/queue/external-tasks`).set(auth(HOST)).expect(200)).body.tasks.map(
        (x: { task_id: string }) => x.task_id,
      ),
    ).toEqual([task.task_id]);

    const done = await answer(
      sub,
      { type: 'external_task_complete', task_id: task.task_id, success: true, result: { deployed: 'v7' } },
      'external_task_complete_result',
    );
    expect(done.payload).toEqual({ task_id: task.task_id, completed: true });
    await sub.waitFor(
      (f) =>
        f.type === 'run_status_changed' &&
        f.metadata.run_id === runId &&
        (f.payload as { to: string }).to === 'completed',
    );
    expect(await runStatus(t, HOST, id, runId)).toBe('completed');
    t.fake.assertDone();

    // A late answer, over the socket or REST, gets the recorded outcome.
    const again = await answer(
      sub,
      { type: 'external_task_complete', task_id: task.task_id, success: false, error: 'late' },
      'external_task_complete_result',
    );
    expect(again.payload).toMatchObject({
      code: 'EXTERNAL_TASK_SETTLED',
      field: 'task_id',
      details: { taskId: task.task_id, outcome: 'completed', success: true },
    });
    await request(t.url)
      .post(`/v1/sessions/${id}/queue/external-tasks/${task.task_id}`)
      .set(auth(HOST))
      .send({ success: true })
      .expect(409);
    const events = sub.events.filter((e) => e.metadata.run_id === runId);
    expect(ofType(events, 'external_task_completed').map((e) => e.payload)).toEqual([
      { task_id: task.task_id, session_id: id, success: true },
    ]);
    expect(ofType(events, 'tool_end').map((e) => (e.payload as { output: string }).output)).toEqual([
      '{"deployed":"v7"}',
    ]);
    sub.close();
  });

  it("only the session's tenant may complete its tasks: an admin of another tenant is refused, another tenant cannot attach", async () => {
    const t = await server({ config: { apiTokens: tokens } });
    const id = await createSession(t, HOST, EXTERNAL);
    const noQueue = await createSession(t, HOST, {});
    const admin = await host(t, id, ADMIN, 'start', 't1');
    const owner = await host(t, id, HOST);
    t.fake.script(
      { toolCalls: [{ id: 'w2', name: 'bash', arguments: { command: 'fail please' } }] },
      { text: 'noted', expect: (req) => expect(toolMessage(req, 'w2')?.content).toBe('host refused') },
    );
    const runId = await startRun(t, HOST, id, 'try');
    const task = (await admin.waitFor(isType('external_task_pending'))).payload as { task_id: string };
    const refused = await answer(
      admin,
      { type: 'external_task_complete', task_id: task.task_id, success: true, result: 'admin' },
      'external_task_complete_result',
    );
    expect(refused.payload).toMatchObject({ code: 'FORBIDDEN', field: 'task_id' });
    // Another tenant's socket never attaches (4004), so it cannot even register.
    const other = await subscribe(t.url, id, { after: 0, token: OTHER });
    expect((await other.waitClosed()).code).toBe(4004);

    const done = await answer(
      owner,
      { type: 'external_task_complete', task_id: task.task_id, success: false, error: 'host refused' },
      'external_task_complete_result',
    );
    expect(done.payload).toEqual({ task_id: task.task_id, completed: true });
    await eventually(async () => (await runStatus(t, HOST, id, runId)) === 'completed', 'the run to complete');
    t.fake.assertDone();

    // A session without a queue has no external tasks to complete.
    const plain = await host(t, noQueue, HOST);
    const none = await answer(
      plain,
      { type: 'external_task_complete', task_id: task.task_id, success: true },
      'external_task_complete_result',
    );
    expect(none.payload).toMatchObject({ code: 'QUEUE_NOT_CONFIGURED' });
    for (const s of [admin, owner, plain]) s.close();
  });
});

describe('pending external tasks across a restart', () => {
  it('are in the snapshot; the restored session settles them as failed (run_lost); a late answer gets 409 with that outcome', async () => {
    const dataDir = tempDir('a3s-queue-ws-');
    const fake = await startFakeProvider();
    const config = { apiTokens: tokens };
    try {
      const first = await startTestServer({ dataDir, fake, config });
      const id = await createSession(first, HOST, { ...EXTERNAL, autoSave: true });
      const sub = await host(first, id, HOST);
      fake.script({ toolCalls: [{ id: 'r1', name: 'bash', arguments: { command: 'long job' } }] });
      const runId = await startRun(first, HOST, id, 'start the long job');
      const task = (await sub.waitFor(isType('external_task_pending'))).payload as { task_id: string };
      await first.close();
      // The final generation keeps the task the shutdown interrupted.
      const snapshot = JSON.parse(readFileSync(join(dataDir, 'sessions', 't1', `${id}.json`), 'utf8')) as {
        external_tasks?: { task_id: string; run_id?: string; command_type: string }[];
      };
      expect(snapshot.external_tasks).toEqual([
        expect.objectContaining({
          task_id: task.task_id,
          run_id: runId,
          command_type: 'bash',
          payload: { command: 'long job' },
        }),
      ]);

      const second = await startTestServer({ dataDir, fake, root: first.root, config });
      try {
        // Nothing hangs: the task is no longer pending, and its run is not in flight.
        expect(
          (await request(second.url).get(`/v1/sessions/${id}/queue/external-tasks`).set(auth(HOST)).expect(200)).body
            .tasks,
        ).toEqual([]);
        const status = await runStatus(second, HOST, id, runId);
        // A graceful shutdown stops the run (cancelled, its checkpoint kept for a resume).
        expect(status).toBe('cancelled');
        const late = await request(second.url)
          .post(`/v1/sessions/${id}/queue/external-tasks/${task.task_id}`)
          .set(auth(HOST))
          .send({ success: true, result: 'finally' })
          .expect(409);
        expect(late.body.error).toMatchObject({
          code: 'EXTERNAL_TASK_SETTLED',
          details: { taskId: task.task_id, outcome: 'failed', success: false, reason: 'run_lost' },
        });
        expect(late.body.error.message).toMatch(/run_lost/);
        // The same over the restored session's socket.
        // (Live only: a replay from 0 would end at the first node's session_closed event.)
        const again = await host(second, id, HOST, 'live');
        const refused = await answer(
          again,
          { type: 'external_task_complete', task_id: task.task_id, success: true },
          'external_task_complete_result',
        );
        expect(refused.payload).toMatchObject({
          code: 'EXTERNAL_TASK_SETTLED',
          details: { outcome: 'failed', reason: 'run_lost' },
        });
        again.close();
        fake.assertDone();
      } finally {
        await second.close();
      }
    } finally {
      await fake.close();
    }
  });
});

describe('pending external tasks when the node dies', () => {
  it('a snapshot taken while the task waited restores with the run lost (NODE_LOST) and the task failed (run_lost)', async () => {
    const dataDir = tempDir('a3s-queue-ws-');
    const copy = tempDir('a3s-queue-ws-crash-');
    const fake = await startFakeProvider();
    const config = { apiTokens: tokens };
    try {
      const first = await startTestServer({ dataDir, fake, config });
      const id = await createSession(first, HOST, { ...EXTERNAL, autoSave: true });
      const sub = await host(first, id, HOST);
      fake.script(
        { toolCalls: [{ id: 'k1', name: 'bash', arguments: { command: 'crash job' } }] },
        { text: 'finished on the first node' },
      );
      const runId = await startRun(first, HOST, id, 'start the crash job');
      const task = (await sub.waitFor(isType('external_task_pending'))).payload as { task_id: string };
      await request(first.url).post(`/v1/sessions/${id}/save`).set(auth(HOST)).expect(200);
      // The node "dies" here: a second node starts from what the store held at that moment.
      cpSync(dataDir, copy, { recursive: true });
      const second = await startTestServer({ dataDir: copy, fake, root: first.root, config });
      try {
        const run = (await request(second.url).get(`/v1/sessions/${id}/runs/${runId}`).set(auth(HOST)).expect(200)).body
          .run as { status: string; error?: { code: string } };
        expect(run).toMatchObject({ status: 'failed', error: { code: 'NODE_LOST' } });
        expect(
          (await request(second.url).get(`/v1/sessions/${id}/queue/external-tasks`).set(auth(HOST)).expect(200)).body
            .tasks,
        ).toEqual([]);
        const late = await request(second.url)
          .post(`/v1/sessions/${id}/queue/external-tasks/${task.task_id}`)
          .set(auth(HOST))
          .send({ success: true, result: 'finally' })
          .expect(409);
        expect(late.body.error).toMatchObject({
          code: 'EXTERNAL_TASK_SETTLED',
          details: { taskId: task.task_id, outcome: 'failed', success: false, reason: 'run_lost' },
        });
      } finally {
        await second.close();
      }
      // The first node still has the task: completing it there ends its run normally.
      const done = await answer(
        sub,
        { type: 'external_task_complete', task_id: task.task_id, success: true, result: 'ok' },
        'external_task_complete_result',
      );
      expect(done.payload).toEqual({ task_id: task.task_id, completed: true });
      await eventually(
        async () => (await runStatus(first, HOST, id, runId)) === 'completed',
        "the first node's run to complete",
      );
      sub.close();
      await first.close();
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });
  it('resuming the lost run from its checkpoint re-issues the call as a new external task', async () => {
    const dataDir = tempDir('a3s-queue-resume-');
    const copy = tempDir('a3s-queue-resume-crash-');
    const fake = await startFakeProvider();
    const config = { apiTokens: tokens };
    try {
      const first = await startTestServer({ dataDir, fake, files: { 't1/a.txt': 'alpha\n' }, config });
      const id = await createSession(first, HOST, {
        ...EXTERNAL,
        autoSave: true,
        permissionPolicy: { allow: ['read', 'bash'] },
      });
      // (With tokens of several tenants the session's workspace is the tenant's space: t1/.)
      // Round 1 (read, run here) completes and is checkpointed; round 2's bash waits for the host.
      fake.script(
        { toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] },
        { toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: 'make release' } }] },
        { toolCalls: [{ id: 'b2', name: 'bash', arguments: { command: 'make release' } }] },
        { text: 'released on the second node' },
      );
      const runId = await startRun(first, HOST, id, 'release it');
      await eventually(
        async () =>
          (
            (await request(first.url).get(`/v1/sessions/${id}/queue/external-tasks`).set(auth(HOST))).body
              .tasks as unknown[]
          ).length === 1,
        'the first task',
      );
      const firstTask = (
        (await request(first.url).get(`/v1/sessions/${id}/queue/external-tasks`).set(auth(HOST))).body.tasks as {
          task_id: string;
        }[]
      )[0]!;
      await request(first.url).post(`/v1/sessions/${id}/save`).set(auth(HOST)).expect(200);
      cpSync(dataDir, copy, { recursive: true });
      const second = await startTestServer({ dataDir: copy, fake, root: first.root, config });
      try {
        expect(
          (await request(second.url).get(`/v1/sessions/${id}/runs/${runId}`).set(auth(HOST)).expect(200)).body.run
            .status,
        ).toBe('failed');
        const resumed = await request(second.url)
          .post(`/v1/sessions/${id}/runs/${runId}/resume`)
          .set(auth(HOST))
          .send({})
          .expect(202);
        let tasks: { task_id: string; payload: unknown }[] = [];
        await eventually(async () => {
          tasks = (await request(second.url).get(`/v1/sessions/${id}/queue/external-tasks`).set(auth(HOST))).body.tasks;
          return tasks.length === 1;
        }, 'the re-issued task');
        expect(tasks[0]!.task_id).not.toBe(firstTask.task_id);
        expect(tasks[0]!.payload).toEqual({ command: 'make release' });
        await request(second.url)
          .post(`/v1/sessions/${id}/queue/external-tasks/${tasks[0]!.task_id}`)
          .set(auth(HOST))
          .send({ success: true, result: 'v7 tagged' })
          .expect(200);
        const newRunId = resumed.body.runId as string;
        await eventually(async () => (await runStatus(second, HOST, id, newRunId)) === 'completed', 'the resumed run');
        const last = fake.requests.at(-1)!;
        expect(toolMessage(last, 'b2')?.content).toBe('v7 tagged');
        // The resumed run started from the checkpoint: round 1's read result is in its transcript.
        expect(toolMessage(last, 'r1')?.content).toContain('alpha');
      } finally {
        await second.close();
      }
      await first.close();
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });
});
