import request from 'supertest';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A3sClient } from '../../src/client/index.js';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import { createSession, eventually, getRun, ofType, runEvents, startRun } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

const ALLOW_BASH = { permissionPolicy: { allow: ['bash'], defaultDecision: 'allow' as const } };

describe('steering and interrupts of a run in flight', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  const finished = async (session: string, runId: string) => {
    await eventually(
      async () => ['completed', 'failed', 'cancelled'].includes((await getRun(t, session, runId)).status),
      'the run to end',
    );
    return getRun(t, session, runId);
  };
  const slowTool = (id: string, seconds = 1) => ({
    toolCalls: [{ id, name: 'bash', arguments: { command: `sleep ${seconds}; echo slept` } }],
  });
  const steer = (session: string, runId: string, body: Record<string, unknown>) =>
    request(t.url).post(`/v1/sessions/${session}/runs/${runId}/steer`).send(body);

  it('a steer during a tool round is a user message of the next provider request, once, with run_control_applied', async () => {
    const session = await createSession(t, ALLOW_BASH);
    const ws = await subscribe(t.url, session, { after: 0 });
    t.fake.script(slowTool('c_s1'), { text: 'using tabs' });
    const runId = await startRun(t, session, 'reformat');
    await ws.waitFor((e) => e.type === 'tool_start');
    const control = (await request(t.url).get(`/v1/sessions/${session}/runs/${runId}/control`).expect(200)).body;
    expect(control).toEqual({ runId, active: true, turnId: `${runId}:2`, turnRevision: 0, pending: [] });
    const accepted = await steer(session, runId, {
      input: 'use tabs, not spaces',
      requestId: 'r1',
      expectedTurnId: `${runId}:2`,
      expectedTurnRevision: 0,
    }).expect(202);
    expect(accepted.body.receipt).toMatchObject({
      requestId: 'r1',
      operation: 'steer',
      status: 'accepted',
      turnRevision: 1,
    });
    // The same requestId again: the same receipt, nothing queued twice.
    expect(
      (await steer(session, runId, { input: 'use tabs, not spaces', requestId: 'r1' }).expect(202)).body.receipt,
    ).toMatchObject({ requestId: 'r1', status: 'accepted' });
    // Another client that saw revision 0 does not pile on.
    const stale = await steer(session, runId, { input: 'spaces!', requestId: 'r2', expectedTurnRevision: 0 }).expect(
      202,
    );
    expect(stale.body.receipt).toMatchObject({ status: 'rejected' });
    expect(stale.body.receipt.reason).toContain('expectedTurnRevision 0');
    expect((await finished(session, runId)).status).toBe('completed');
    ws.close();
    t.fake.assertDone();
    const second = t.fake.requests[t.fake.requests.length - 1]?.body.messages as ChatMessage[];
    expect(second.slice(-2).map((m) => [m.role, m.content])).toEqual([
      ['tool', expect.stringContaining('slept') as unknown],
      ['user', 'use tabs, not spaces'],
    ]);
    expect(second.filter((m) => m.content === 'use tabs, not spaces')).toHaveLength(1);
    const events = await runEvents(t, session, runId);
    expect(ofType(events, 'run_control_applied').map((e) => e.payload)).toEqual([
      { request_id: 'r1', operation: 'steer', turn_id: `${runId}:2`, turn_revision: 1, input: 'use tabs, not spaces' },
    ]);
    expect((await steer(session, runId, { input: 'x', requestId: 'r1' }).expect(409)).body.error).toMatchObject({
      code: 'RUN_NOT_ACTIVE',
      details: { field: 'runId' },
    });
    const history = (await request(t.url).get(`/v1/sessions/${session}/history`).expect(200)).body
      .messages as ChatMessage[];
    expect(history.some((m) => m.role === 'user' && m.content === 'use tabs, not spaces')).toBe(true);
  });

  it('an interrupt stops the run at its next safe point, keeping its tool round; force stops it now', async () => {
    const session = await createSession(t, ALLOW_BASH);
    const ws = await subscribe(t.url, session, { after: 0 });
    t.fake.script(slowTool('c_i1'));
    const runId = await startRun(t, session, 'long job');
    await ws.waitFor((e) => e.type === 'tool_start');
    const receipt = (
      await request(t.url)
        .post(`/v1/sessions/${session}/runs/${runId}/interrupt`)
        .send({ reason: 'the user stopped it', requestId: 'i1' })
        .expect(202)
    ).body.receipt;
    expect(receipt).toMatchObject({ requestId: 'i1', operation: 'interrupt', status: 'accepted' });
    const run = await finished(session, runId);
    expect(run.status).toBe('cancelled');
    expect(run.error).toMatchObject({ code: 'CANCELLED', message: 'the user stopped it' });
    t.fake.assertDone();
    const events = await runEvents(t, session, runId);
    expect(ofType(events, 'tool_end')).toHaveLength(1);
    expect(ofType(events, 'run_control_applied').map((e) => e.payload)).toEqual([
      {
        request_id: 'i1',
        operation: 'interrupt',
        turn_id: `${runId}:2`,
        turn_revision: 0,
        reason: 'the user stopped it',
      },
    ]);
    const history = (await request(t.url).get(`/v1/sessions/${session}/history`).expect(200)).body
      .messages as ChatMessage[];
    expect(history.some((m) => m.role === 'tool')).toBe(true);

    t.fake.script(slowTool('c_i2', 5));
    const forced = await startRun(t, session, 'another long job');
    await ws.waitFor((e) => e.type === 'tool_start' && e.payload.id === 'c_i2');
    const started = Date.now();
    await request(t.url).post(`/v1/sessions/${session}/runs/${forced}/interrupt`).send({ force: true }).expect(202);
    expect((await finished(session, forced)).status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(4000);
    ws.close();
    t.fake.assertDone();
  });

  it('bad input: unknown run 404, a steer over limits.max_input_bytes 413, a missing requestId 400', async () => {
    const session = await createSession(t);
    await request(t.url)
      .post(`/v1/sessions/${session}/runs/run_nope/steer`)
      .send({ input: 'x', requestId: 'a' })
      .expect(404);
    const missing = await request(t.url)
      .post(`/v1/sessions/${session}/runs/run_nope/steer`)
      .send({ input: 'x' })
      .expect(400);
    expect(missing.body.error.message).toContain('body.requestId');
    await request(t.url).get(`/v1/sessions/${session}/runs/run_nope/control`).expect(404);
    const huge = await request(t.url)
      .post(`/v1/sessions/${session}/runs/run_nope/steer`)
      .send({ input: 'x'.repeat(300_000), requestId: 'big' })
      .expect(413);
    expect(huge.body.error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: { field: 'input', limit: 'limits.maxInputBytes' },
    });
  });

  it('over the WebSocket and through the typed client', async () => {
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root, ALLOW_BASH);
    const ws = await subscribe(t.url, session.sessionId, { after: 0 });
    t.fake.script(slowTool('c_w1'), slowTool('c_w2'), { text: 'done' });
    const runId = await startRun(t, session.sessionId, 'go');
    await ws.waitFor((e) => e.type === 'tool_start' && e.payload.id === 'c_w1');
    ws.send({ type: 'steer', runId, input: 'also run the linter', requestId: 'w1' });
    const answer = await ws.waitFor((e) => e.type === 'run_control_result');
    expect(answer.payload).toMatchObject({ request_id: 'w1', status: 'accepted' });
    await ws.waitFor((e) => e.type === 'tool_start' && e.payload.id === 'c_w2');
    const snapshot = await session.runControlSnapshot();
    expect(snapshot).toMatchObject({ runId, active: true, turnId: `${runId}:3` });
    const receipt = await session.steer('and the type checker', { requestId: 'w2', runId });
    expect(receipt.status).toBe('accepted');
    expect((await finished(session.sessionId, runId)).status).toBe('completed');
    ws.close();
    t.fake.assertDone();
    const users = (t.fake.requests.at(-1)?.body.messages as ChatMessage[]).filter((m) => m.role === 'user');
    expect(users.map((m) => m.content)).toEqual(['go', 'also run the linter', 'and the type checker']);

    // interrupt() without a runId stops the session's active run.
    const ws2 = await subscribe(t.url, session.sessionId, { after: 0 });
    t.fake.script(slowTool('c_w3'));
    const third = await startRun(t, session.sessionId, 'one more');
    await ws2.waitFor((e) => e.type === 'tool_start' && e.payload.id === 'c_w3');
    const stop = await session.interrupt({ reason: 'enough' });
    expect(stop).toMatchObject({ operation: 'interrupt', status: 'accepted', reason: 'enough' });
    const ended = await finished(session.sessionId, third);
    expect(ended).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED', message: 'enough' } });
    ws2.close();
    t.fake.assertDone();
  });
});
