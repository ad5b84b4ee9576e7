import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import { eventually, toolMessage } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe, type EventSubscriber } from '../support/ws-client.js';

// Red team of questions, run control and the run queue (2026-12-07), as authenticated, unprivileged tenants with
// the same session id, over REST and the events WebSocket: another tenant's ids, races (many answers to one
// question, one requestId steered many times at once, a queue flooded at once), floods and malformed frames.
const A = 'token-ctl-red-tenant-a-001';
const B = 'token-ctl-red-tenant-b-001';
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
];
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const MAX_INPUT = 2048;
const MAX_QUEUED = 4;
const ALLOW_BASH = { permissionPolicy: { allow: ['bash'], defaultDecision: 'allow' as const } };

describe('questions, run control and the run queue under attack', () => {
  let t: TestServer;
  const sockets: EventSubscriber[] = [];

  const open = async (token: string, session: string) => {
    const ws = await subscribe(t.url, session, { token, after: 0 });
    sockets.push(ws);
    return ws;
  };
  const session = async (token: string, sessionId: string, options: Record<string, unknown> = {}) =>
    request(t.url)
      .post('/v1/sessions')
      .set(auth(token))
      .send({ sessionId, ...options })
      .expect(201);
  const start = async (token: string, sessionId: string, input: string) =>
    (await request(t.url).post(`/v1/sessions/${sessionId}/runs`).set(auth(token)).send({ input }).expect(202)).body
      .runId as string;
  const ended = async (token: string, sessionId: string, runId: string) => {
    let status = '';
    await eventually(async () => {
      status = (await request(t.url).get(`/v1/sessions/${sessionId}/runs/${runId}`).set(auth(token))).body.run.status;
      return ['completed', 'failed', 'cancelled'].includes(status);
    }, `run ${runId} to end`);
    return status;
  };
  const lastUsers = (): string[] =>
    (t.fake.requests.at(-1)?.body.messages as ChatMessage[])
      .filter((m) => m.role === 'user')
      .map((m) => String(m.content));

  beforeAll(async () => {
    t = await startTestServer({
      config: { apiTokens: TOKENS, limits: { maxInputBytes: MAX_INPUT, maxQueuedRuns: MAX_QUEUED } },
    });
  });
  afterAll(async () => {
    for (const ws of sockets) ws.close();
    await t?.close();
  });

  it('one question answered by 40 racing answers over REST and the WebSocket: exactly one wins, once', async () => {
    await session(A, 'ask', { askUser: true });
    await session(B, 'ask', { askUser: true });
    const wsA = await open(A, 'ask');
    const wsB = await open(B, 'ask');
    t.fake.script(
      { toolCalls: [{ id: 'c_race', name: 'ask_user', arguments: { question: 'Which?', options: ['x', 'y'] } }] },
      { text: 'done' },
    );
    const runId = await start(A, 'ask', 'ask me');
    const asked = await wsA.waitFor((e) => e.type === 'user_question');
    const questionId = asked.payload.question_id as string;
    // B, with the same session id, and any id shaped like a path: unknown, and the question stays pending.
    const foreign = await request(t.url)
      .post(`/v1/sessions/ask/questions/${questionId}`)
      .set(auth(B))
      .send({ option: 'x' });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('QUESTION_NOT_FOUND');
    wsB.send({ type: 'answer', questionId, option: 'y' });
    const wsRefused = await wsB.waitFor((e) => e.type === 'error');
    expect(wsRefused.payload).toMatchObject({ code: 'QUESTION_NOT_FOUND', field: 'questionId' });
    for (const id of [`..%2F${questionId}`, `${questionId}%00`, questionId.toUpperCase(), 'q'.repeat(201)]) {
      const res = await request(t.url).post(`/v1/sessions/ask/questions/${id}`).set(auth(A)).send({ option: 'x' });
      expect([400, 404], id).toContain(res.status);
    }
    expect(
      (
        await request(t.url)
          .post(`/v1/sessions/ask/questions/${questionId}?tenantId=tenant-a`)
          .set(auth(B))
          .send({ option: 'x' })
      ).status,
    ).toBeGreaterThanOrEqual(400);
    expect((await request(t.url).get('/v1/sessions/ask/questions').set(auth(A))).body.questions).toHaveLength(1);
    expect((await request(t.url).get('/v1/sessions/ask/questions').set(auth(B))).body.questions).toEqual([]);

    for (let i = 0; i < 10; i++) wsA.send({ type: 'answer', questionId, option: i % 2 === 0 ? 'x' : 'y' });
    const rest = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(t.url)
          .post(`/v1/sessions/ask/questions/${questionId}`)
          .set(auth(A))
          .send(i % 3 === 0 ? { answer: `free ${i}` } : { option: i % 2 === 0 ? 'x' : 'y' }),
      ),
    );
    await eventually(
      async () => wsA.controls.filter((c) => c.type === 'answer_result' || c.type === 'error').length === 10,
      'ten answers over the socket to be answered',
    );
    const wsWins = wsA.controls.filter((c) => c.type === 'answer_result');
    const restWins = rest.filter((r) => r.status === 200);
    expect(wsWins.length + restWins.length).toBe(1);
    const losers = [
      ...rest.filter((r) => r.status !== 200).map((r) => r.body.error.code as string),
      ...wsA.controls.filter((c) => c.type === 'error').map((c) => c.payload.code as string),
    ];
    expect(losers).toHaveLength(39);
    expect(new Set(losers)).toEqual(new Set(['QUESTION_SETTLED']));
    expect(await ended(A, 'ask', runId)).toBe('completed');
    expect(toolMessage(t, 'c_race')).toMatch(/^The user (chose: [xy]|answered: free \d+)$/);
    t.fake.assertDone();
  });

  it('steers: one requestId sent 40 times at once applies once; a flood stops at 100 waiting; B reaches nothing', async () => {
    await session(A, 'steer', ALLOW_BASH);
    await session(B, 'steer', ALLOW_BASH);
    const wsA = await open(A, 'steer');
    const wsB = await open(B, 'steer');
    t.fake.script(
      { toolCalls: [{ id: 'c_slow', name: 'bash', arguments: { command: 'sleep 3; echo slept' } }] },
      { text: 'steered' },
    );
    const runId = await start(A, 'steer', 'work');
    await wsA.waitFor((e) => e.type === 'tool_start');
    const steer = (token: string, body: Record<string, unknown>, run = runId) =>
      request(t.url).post(`/v1/sessions/steer/runs/${run}/steer`).set(auth(token)).send(body);
    const same = await Promise.all(
      Array.from({ length: 40 }, () => steer(A, { input: 'ONE STEER', requestId: 'same-id' })),
    );
    expect(new Set(same.map((r) => r.status))).toEqual(new Set([202]));
    expect(new Set(same.map((r) => JSON.stringify(r.body.receipt)))).toHaveProperty('size', 1);
    // The same requestId over the WebSocket too: the same receipt, nothing queued again.
    wsA.send({ type: 'steer', runId, input: 'ONE STEER (ws)', requestId: 'same-id' });
    const wsSame = await wsA.waitFor((e) => e.type === 'run_control_result');
    expect(wsSame.payload).toMatchObject({ request_id: 'same-id', status: 'accepted' });

    // Over the input bound: 413 over REST, an error frame over the socket; nothing queued.
    const big = 'b'.repeat(MAX_INPUT + 1);
    const tooBig = await steer(A, { input: big, requestId: 'too-big' });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.details).toMatchObject({ limit: 'limits.maxInputBytes' });
    wsA.send({ type: 'steer', runId, input: big, requestId: 'too-big-ws' });
    const wsBig = await wsA.waitFor((e) => e.type === 'error');
    expect(wsBig.payload.code).toBe('PAYLOAD_TOO_LARGE');

    // B, with the same session id, addresses A's run: unknown to B's session, over REST and the socket.
    const foreign = await steer(B, { input: 'from b', requestId: 'b1' });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('RUN_NOT_FOUND');
    const foreignInterrupt = await request(t.url)
      .post(`/v1/sessions/steer/runs/${runId}/interrupt`)
      .set(auth(B))
      .send({ force: true });
    expect(foreignInterrupt.status).toBe(404);
    wsB.send({ type: 'interrupt', runId, force: true });
    wsB.send({ type: 'steer', runId, input: 'from b', requestId: 'b2' });
    await eventually(async () => wsB.controls.filter((c) => c.type === 'error').length === 2, 'two refusals to B');
    expect(wsB.controls.filter((c) => c.type === 'error').map((c) => c.payload.code)).toEqual([
      'RUN_NOT_FOUND',
      'RUN_NOT_FOUND',
    ]);

    // Run ids shaped like paths, NUL, case tricks and very long: unknown runs or 400, never A's run.
    for (const id of [`..%2F${runId}`, `${runId}%00`, runId.toUpperCase(), '..', 'r'.repeat(129)]) {
      const res = await request(t.url)
        .post(`/v1/sessions/steer/runs/${id}/steer`)
        .set(auth(A))
        .send({ input: 'p', requestId: `p-${id}` });
      expect([400, 404], id).toContain(res.status);
    }
    // B following A's session by naming A's tenant: refused before the socket opens.
    const named = await subscribe(t.url, 'steer', { token: B, tenantId: 'tenant-a' });
    expect((await named.waitClosed()).code).not.toBe(1000);
    // A flood of new request ids: 100 wait at most (the one above and 99 more); the rest are rejected at once.
    const flood = await Promise.all(
      Array.from({ length: 150 }, (_, i) => steer(A, { input: `flood ${i}`, requestId: `flood-${i}` })),
    );
    const receipts = flood.map((r) => r.body.receipt as { status: string; reason?: string });
    expect(receipts.filter((r) => r.status === 'accepted')).toHaveLength(99);
    const rejected = receipts.filter((r) => r.status === 'rejected');
    expect(rejected).toHaveLength(51);
    expect(rejected[0]?.reason).toBe("100 requests already wait for the run's next safe point");
    const interrupts = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        request(t.url)
          .post(`/v1/sessions/steer/runs/${runId}/interrupt`)
          .set(auth(A))
          .send({ requestId: `i-${i}` }),
      ),
    );
    expect(interrupts.map((r) => r.body.receipt.status)).toEqual(Array(5).fill('rejected'));
    const snapshot = (await request(t.url).get(`/v1/sessions/steer/runs/${runId}/control`).set(auth(A))).body;
    expect(snapshot.pending).toHaveLength(100);

    expect(await ended(A, 'steer', runId)).toBe('completed');
    t.fake.assertDone();
    const users = lastUsers();
    expect(users.filter((u) => u === 'ONE STEER')).toHaveLength(1);
    expect(users.filter((u) => u.startsWith('ONE STEER (ws)') || u.startsWith('from b') || u === big)).toEqual([]);
    expect(users.filter((u) => u.startsWith('flood '))).toHaveLength(99);
    // B's own session never saw any of it.
    const bHistory = (await request(t.url).get('/v1/sessions/steer/history').set(auth(B)).expect(200)).body.messages;
    expect(bHistory).toEqual([]);
  });

  it('30 forced interrupts at once, over REST and the socket: one stops the run, told once', async () => {
    await session(A, 'force', ALLOW_BASH);
    const ws = await open(A, 'force');
    t.fake.script({ toolCalls: [{ id: 'c_force', name: 'bash', arguments: { command: 'sleep 5' } }] });
    const runId = await start(A, 'force', 'work');
    await ws.waitFor((e) => e.type === 'tool_start');
    for (let i = 0; i < 10; i++) ws.send({ type: 'interrupt', runId, force: true, requestId: `ws-${i}` });
    const rest = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(t.url)
          .post(`/v1/sessions/force/runs/${runId}/interrupt`)
          .set(auth(A))
          .send({ force: true, requestId: `rest-${i}`, reason: `stop ${i}` }),
      ),
    );
    expect(await ended(A, 'force', runId)).toBe('cancelled');
    await eventually(
      async () => ws.controls.filter((c) => c.type === 'run_control_result' || c.type === 'error').length === 10,
      'ten answers on the socket',
    );
    const statuses = [
      ...rest.map((r) => (r.status === 202 ? (r.body.receipt.status as string) : String(r.body.error.code))),
      ...ws.controls
        .filter((c) => c.type === 'run_control_result' || c.type === 'error')
        .map((c) => String(c.type === 'error' ? c.payload.code : c.payload.status)),
    ];
    expect(statuses.filter((s) => s === 'applied')).toHaveLength(1);
    expect(new Set(statuses.filter((s) => s !== 'applied'))).toSatisfy((left: Set<string>) =>
      [...left].every((s) => s === 'settled' || s === 'RUN_NOT_ACTIVE'),
    );
    await eventually(async () => ws.events.some((e) => e.type === 'agent_end'), 'agent_end');
    expect(ws.events.filter((e) => e.type === 'run_control_applied')).toHaveLength(1);
    t.fake.assertDone();
  });

  it('malformed and huge frames for answer, steer and interrupt are refused by name; a huge frame closes the socket', async () => {
    await session(A, 'frames');
    const ws = await open(A, 'frames');
    const bad: unknown[] = [
      { type: 'steer', runId: 5, input: 'x', requestId: 'r' },
      { type: 'steer', runId: 'run_x', input: ['x'], requestId: 'r' },
      { type: 'steer', runId: 'run_x', input: 'x' },
      { type: 'steer', runId: 'run_x', input: 'x', requestId: 'r', deadlineMs: -1 },
      { type: 'steer', runId: 'run_x', input: 'x', requestId: 'r', __proto__: { polluted: true }, extra: 1 },
      { type: 'interrupt', runId: 'run_x', force: 'yes' },
      { type: 'interrupt', runId: 'r'.repeat(129) },
      { type: 'answer', questionId: ['q'], answer: 'x' },
      { type: 'answer', questionId: 'q_x', answer: 'x', option: 'y' },
      { type: 'answer', questionId: 'q_x' },
      { type: 'answer', questionId: 'q_x', answer: 'a'.repeat(4001) },
    ];
    for (const frame of bad) ws.sendRaw(JSON.stringify(frame));
    ws.sendRaw('{"type":"steer",');
    await eventually(async () => ws.controls.filter((c) => c.type === 'error').length === bad.length + 1, 'refusals');
    const codes = ws.controls.filter((c) => c.type === 'error').map((c) => c.payload.code);
    expect(new Set(codes)).toEqual(new Set(['VALIDATION_ERROR']));
    // Well-formed, but for runs and questions this session does not have.
    ws.send({ type: 'steer', runId: 'run_nope', input: 'x', requestId: 'r' });
    ws.send({ type: 'answer', questionId: 'q_nope', answer: 'x' });
    await eventually(async () => ws.controls.filter((c) => c.type === 'error').length === bad.length + 3, 'unknowns');
    expect(
      ws.controls
        .filter((c) => c.type === 'error')
        .slice(-2)
        .map((c) => c.payload.code),
    ).toEqual(['RUN_NOT_FOUND', 'QUESTION_NOT_FOUND']);
    ws.sendRaw(JSON.stringify({ type: 'steer', runId: 'run_x', input: 'h'.repeat(200_000), requestId: 'huge' }));
    expect((await ws.waitClosed()).code).toBe(1009);
    // The server goes on: a new socket on the same session works.
    const again = await open(A, 'frames');
    again.send({ type: 'ping' });
    await again.waitFor((e) => e.type === 'pong');
  });

  it('a queue flooded at once holds limits.maxQueuedRuns; the rest are 429 and never recorded; B cannot cancel them', async () => {
    await session(A, 'queue');
    await session(B, 'queue');
    t.fake.script({ text: 'slow', delayMs: 2500 });
    const active = await start(A, 'queue', 'first');
    const flood = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        request(t.url)
          .post('/v1/sessions/queue/runs')
          .set(auth(A))
          .send({ input: `queued ${i}`, multitaskStrategy: 'enqueue' }),
      ),
    );
    const queued = flood.filter((r) => r.status === 202);
    expect(queued).toHaveLength(MAX_QUEUED);
    const full = flood.filter((r) => r.status === 429);
    expect(full).toHaveLength(25 - MAX_QUEUED);
    expect(full[0]?.body.error).toMatchObject({
      code: 'RUN_QUEUE_FULL',
      details: { limit: 'limits.maxQueuedRuns', maxQueuedRuns: MAX_QUEUED },
    });
    const runs = (await request(t.url).get('/v1/sessions/queue/runs').set(auth(A)).expect(200)).body.runs as Array<{
      runId: string;
      status: string;
    }>;
    expect(runs.filter((r) => r.status === 'queued')).toHaveLength(MAX_QUEUED);
    expect(runs).toHaveLength(MAX_QUEUED + 1);
    // B's queue is its own; B cannot cancel, steer or read A's queued runs.
    for (const r of queued) {
      const id = r.body.runId as string;
      // The seed's cancelRun: false for a run the session does not have (never another tenant's).
      const cancel = await request(t.url).post(`/v1/sessions/queue/runs/${id}/cancel`).set(auth(B)).expect(200);
      expect(cancel.body).toEqual({ cancelled: false });
      expect((await request(t.url).get(`/v1/sessions/queue/runs/${id}`).set(auth(B))).status).toBe(404);
    }
    const stillQueued = (await request(t.url).get('/v1/sessions/queue/runs').set(auth(A))).body.runs as typeof runs;
    expect(stillQueued.filter((r) => r.status === 'queued')).toHaveLength(MAX_QUEUED);
    // Steering a queued run: it is not running.
    const steerQueued = await request(t.url)
      .post(`/v1/sessions/queue/runs/${queued[0]?.body.runId as string}/steer`)
      .set(auth(A))
      .send({ input: 'x', requestId: 'q1' });
    expect(steerQueued.status).toBe(409);
    for (const r of queued)
      await request(t.url)
        .post(`/v1/sessions/queue/runs/${r.body.runId as string}/cancel`)
        .set(auth(A))
        .expect(200);
    expect(await ended(A, 'queue', active)).toBe('completed');
    t.fake.assertDone();
  });
});
