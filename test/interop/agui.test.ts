import { HttpAgent, verifyEvents } from '@ag-ui/client';
import type { BaseEvent, Interrupt, RunFinishedEvent, RunStartedEvent } from '@ag-ui/core';
import { from, lastValueFrom, toArray } from 'rxjs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually, toolMessage } from '../support/run-helpers.js';

type Msg = { role: string; content?: unknown; tool_call_id?: string };

/** Run the HttpAgent once, collecting every event it accepted (after its own verifyEvents). */
async function run(agent: HttpAgent, params: Parameters<HttpAgent['runAgent']>[0] = {}) {
  const events: BaseEvent[] = [];
  let interrupts: Interrupt[] = [];
  const result = await agent.runAgent(params, {
    onEvent: ({ event }) => {
      events.push(event);
    },
    onRunFinishedEvent: (p) => {
      if (p.outcome === 'interrupt') interrupts = p.interrupts;
    },
  });
  return { events, result, interrupts, types: events.map((e): string => e.type) };
}

/** The raw SSE events of a POST (no client-side processing), parsed from `data:` frames. */
function sseEvents(text: string): BaseEvent[] {
  return text
    .split('\n\n')
    .map((frame) =>
      frame
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n'),
    )
    .filter((data) => data !== '')
    .map((data) => JSON.parse(data) as BaseEvent);
}

async function runCount(t: TestServer, id: string): Promise<number> {
  return (await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs.length;
}

describe('AG-UI: HttpAgent against the server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ files: { 'a.txt': 'hello from a\n' } });
  });
  afterAll(async () => {
    await t.close();
  });

  const agentFor = (id: string) => new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });

  it('runs a prompt with a tool round; the client verifies the event order and gets our run id', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    t.fake.script(
      { text: 'Let me read it.', toolCalls: [{ id: 'c_read', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { text: 'It says hello.', chunks: 3 },
    );
    const agent = agentFor(id);
    agent.addMessage({ id: 'u1', role: 'user', content: 'What is in a.txt?' });
    const { events, types, result } = await run(agent, { runId: 'client-run-1' });

    expect(types[0]).toBe('RUN_STARTED');
    expect(types.at(-1)).toBe('RUN_FINISHED');
    for (const kind of [
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
    ])
      expect(types).toContain(kind);
    expect(types.indexOf('TOOL_CALL_END')).toBeLessThan(types.indexOf('TOOL_CALL_RESULT'));
    // Every event echoes the client's run id; RUN_STARTED names ours.
    for (const e of events) expect(e.metadata?.runId).toBe('client-run-1');
    const started = events[0] as RunStartedEvent;
    expect(started).toMatchObject({ threadId: id, runId: 'client-run-1' });
    const ours = String(started.metadata?.a3sRunId);
    const record = (await request(t.url).get(`/v1/sessions/${id}/runs/${ours}`).expect(200)).body.run;
    expect(record).toMatchObject({ status: 'completed', idempotencyKey: 'client-run-1', input: 'What is in a.txt?' });

    const start = events.find((e) => e.type === 'TOOL_CALL_START');
    expect(start).toMatchObject({ toolCallId: 'c_read', toolCallName: 'read' });
    const args = events
      .filter((e) => e.type === 'TOOL_CALL_ARGS')
      .map((e) => e.delta)
      .join('');
    expect(JSON.parse(args)).toEqual({ file_path: 'a.txt' });
    expect(events.find((e) => e.type === 'TOOL_CALL_RESULT')?.content).toContain('hello from a');
    const finished = events.at(-1) as RunFinishedEvent;
    expect(finished.outcome).toEqual({ type: 'success' });
    expect(finished.usage?.[0]).toMatchObject({ inputTokens: 20, outputTokens: 10, totalTokens: 30 });
    expect(result.result).toMatchObject({ text: 'It says hello.' });

    // The client's own messages: the assistant's text and tool call, the tool result, the final answer.
    const roles = agent.messages.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(agent.messages[1]).toMatchObject({
      role: 'assistant',
      content: 'Let me read it.',
      toolCalls: [{ id: 'c_read', function: { name: 'read' } }],
    });
    expect(agent.messages[3]).toMatchObject({ content: 'It says hello.' });
    t.fake.assertDone();

    // The same events pass the client's verifier again when fed raw (a second, independent check).
    const raw = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({
        threadId: id,
        runId: 'client-run-1',
        messages: [{ id: 'u1', role: 'user', content: 'What is in a.txt?' }],
      })
      .expect(200);
    expect(raw.headers['content-type']).toContain('text/event-stream');
    const replayed = await lastValueFrom(from(sseEvents(raw.text)).pipe(verifyEvents(false), toArray()));
    expect(replayed.map((e) => e.type)).toEqual(types);
    expect(replayed[0]?.metadata).toMatchObject({ a3sRunId: ours, existing: true });
  });

  it('streams reasoning as a REASONING_* span before the answer text', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    t.fake.script({ reasoning: 'Thinking it over.', text: 'Answer.' });
    const agent = agentFor(id);
    agent.addMessage({ id: 'u1', role: 'user', content: 'think' });
    const { events, types } = await run(agent, { runId: 'reason-1' });
    expect(types).toEqual([
      'RUN_STARTED',
      'REASONING_START',
      'REASONING_MESSAGE_START',
      'REASONING_MESSAGE_CONTENT',
      'REASONING_MESSAGE_END',
      'REASONING_END',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'RUN_FINISHED',
    ]);
    expect(events.find((e) => e.type === 'REASONING_MESSAGE_CONTENT')?.delta).toBe('Thinking it over.');
    t.fake.assertDone();
  });

  it('a retried POST with the same runId does not start a second run', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    t.fake.script({ text: 'once', delayMs: 200 });
    const body = { threadId: id, runId: 'retry-me', messages: [{ id: 'u1', role: 'user', content: 'hi' }] };
    const [a, b] = await Promise.all([
      request(t.url).post(`/v1/agui/${id}`).send(body).expect(200),
      request(t.url).post(`/v1/agui/${id}`).send(body).expect(200),
    ]);
    const ea = sseEvents(a.text);
    const eb = sseEvents(b.text);
    expect(ea[0]?.metadata?.a3sRunId).toBe(eb[0]?.metadata?.a3sRunId);
    for (const events of [ea, eb]) {
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'retry-me', outcome: { type: 'success' } });
      expect(
        events
          .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
          .map((e) => e.delta)
          .join(''),
      ).toBe('once');
    }
    expect(await runCount(t, id)).toBe(1);
    expect(t.fake.requests.filter((r) => (r.body.messages as Msg[]).some((m) => m.content === 'hi'))).toHaveLength(1);
    t.fake.assertDone();
  });

  it('rejects bad input in the error shape naming the field, before anything runs', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const noMessages = await request(t.url).post(`/v1/agui/${id}`).send({ threadId: id, runId: 'r1' }).expect(400);
    expect(noMessages.body.error).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(noMessages.body.error.message).toContain('body.messages');
    const mismatch = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({ threadId: 'other', runId: 'r1', messages: [{ id: 'u', role: 'user', content: 'x' }] })
      .expect(400);
    expect(mismatch.body.error.details.field).toBe('body.threadId');
    const notUser = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({ threadId: id, runId: 'r1', messages: [{ id: 'a', role: 'assistant', content: 'x' }] })
      .expect(400);
    expect(notUser.body.error.details.field).toBe('body.messages.0.role');
    const badRunId = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({ threadId: id, runId: 'has space', messages: [{ id: 'u', role: 'user', content: 'x' }] })
      .expect(400);
    expect(badRunId.body.error.details.field).toBe('body.runId');
    const badResume = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({
        threadId: id,
        runId: 'r2',
        messages: [],
        resume: [{ interruptId: 'x', status: 'resolved', payload: { approved: 'yes' } }],
      })
      .expect(400);
    expect(badResume.body.error.details.field).toBe('body.resume.0.payload.approved');
    await request(t.url)
      .post('/v1/agui/no-such-session')
      .send({ threadId: 'no-such-session', runId: 'r1', messages: [{ id: 'u', role: 'user', content: 'x' }] })
      .expect(404);
    expect(await runCount(t, id)).toBe(0);
  });

  it('capabilities describe interrupts, streaming and server-side tools', async () => {
    const caps = (await request(t.url).get('/v1/agui/capabilities').expect(200)).body;
    expect(caps).toMatchObject({
      transport: { streaming: true },
      humanInTheLoop: { interrupts: true, approvals: true },
      tools: { supported: true, clientProvided: false },
      reasoning: { supported: true },
    });
  });
});

describe('AG-UI: interrupts from human confirmations', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  const askingSession = async () =>
    (
      await request(t.url)
        .post('/v1/sessions')
        .send({ permissionPolicy: { allow: ['read'], defaultDecision: 'ask' }, confirmationPolicy: { enabled: true } })
        .expect(201)
    ).body.session.id as string;

  it('resume with payload.always is "allow always": the same write later in the run does not ask again', async () => {
    const id = await askingSession();
    const write = { file_path: 'same.txt', content: 'x' };
    t.fake.script(
      { toolCalls: [{ id: 'c_a1', name: 'write', arguments: write }] },
      { toolCalls: [{ id: 'c_a2', name: 'write', arguments: write }] },
      { text: 'Wrote twice.' },
    );
    const agent = new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });
    agent.addMessage({ id: 'u1', role: 'user', content: 'write same.txt twice' });
    const first = await run(agent, { runId: 'always-1' });
    expect(first.events.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      outcome: { type: 'interrupt', interrupts: [{ id: 'c_a1' }] },
    });
    const badAlways = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({
        threadId: id,
        runId: 'always-x',
        messages: [],
        resume: [{ interruptId: 'c_a1', status: 'resolved', payload: { approved: true, always: 'yes' } }],
      })
      .expect(400);
    expect(badAlways.body.error.details.field).toBe('body.resume.0.payload.always');
    const second = await run(agent, {
      runId: 'always-2',
      resume: [{ interruptId: 'c_a1', status: 'resolved', payload: { approved: true, always: true } }],
    });
    // Both calls ran; the second passed by the session grant, so the stream ends in success, not in a new interrupt.
    expect(second.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => e.toolCallId)).toEqual([
      'c_a1',
      'c_a2',
    ]);
    expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect((await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations).toEqual([]);
    t.fake.assertDone();
  });

  it('a confirmation ends the stream with an interrupt; resume with approval continues the same run', async () => {
    const id = await askingSession();
    t.fake.script(
      {
        text: 'Writing.',
        toolCalls: [{ id: 'c_w', name: 'write', arguments: { file_path: 'out.txt', content: 'approved' } }],
      },
      { text: 'Done writing.' },
    );
    const agent = new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });
    agent.addMessage({ id: 'u1', role: 'user', content: 'write out.txt' });
    const first = await run(agent, { runId: 'run-a' });
    const finished = first.events.at(-1) as RunFinishedEvent;
    expect(finished.type).toBe('RUN_FINISHED');
    expect(finished.outcome).toMatchObject({
      type: 'interrupt',
      interrupts: [{ id: 'c_w', reason: 'tool_call', toolCallId: 'c_w' }],
    });
    expect(first.interrupts[0]?.metadata).toMatchObject({
      toolName: 'write',
      args: { file_path: 'out.txt', content: 'approved' },
    });
    expect(first.types).toContain('TOOL_CALL_END');
    expect(first.types).not.toContain('TOOL_CALL_RESULT');
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual(['c_w']);
    const ours = String(first.events[0]?.metadata?.a3sRunId);
    // The run still waits on the server.
    expect((await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations).toHaveLength(
      1,
    );

    const second = await run(agent, {
      runId: 'run-b',
      resume: [{ interruptId: 'c_w', status: 'resolved', payload: { approved: true } }],
    });
    expect(second.types[0]).toBe('RUN_STARTED');
    expect(second.events[0]?.metadata).toMatchObject({ runId: 'run-b', a3sRunId: ours });
    expect(second.events.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: 'c_w' });
    expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-b', outcome: { type: 'success' } });
    expect(
      second.events
        .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
        .map((e) => e.delta)
        .join(''),
    ).toBe('Done writing.');
    expect(toolMessage(t, 'c_w')).toContain('Wrote');
    expect((await request(t.url).get(`/v1/sessions/${id}/runs/${ours}`).expect(200)).body.run.status).toBe('completed');
    expect(agent.pendingInterrupts).toEqual([]);

    // Answering again the same way is idempotent (the stream replays the rest of the run); another answer is stale.
    const again = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({
        threadId: id,
        runId: 'run-b',
        messages: [],
        resume: [{ interruptId: 'c_w', status: 'resolved', payload: { approved: true } }],
      })
      .expect(200);
    expect(sseEvents(again.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    const stale = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({ threadId: id, runId: 'run-c', messages: [], resume: [{ interruptId: 'c_w', status: 'cancelled' }] })
      .expect(200);
    expect(sseEvents(stale.text)).toEqual([
      expect.objectContaining({ type: 'RUN_ERROR', code: 'CONFIRMATION_SETTLED' }),
    ]);
    const unknown = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({
        threadId: id,
        runId: 'run-d',
        messages: [],
        resume: [{ interruptId: 'nope', status: 'resolved', payload: { approved: true } }],
      })
      .expect(200);
    expect(sseEvents(unknown.text)).toEqual([
      expect.objectContaining({ type: 'RUN_ERROR', code: 'CONFIRMATION_NOT_FOUND' }),
    ]);
    t.fake.assertDone();
  });

  it('a rejection (payload.approved false) reaches the model as a rejected call', async () => {
    const id = await askingSession();
    t.fake.script(
      { toolCalls: [{ id: 'c_no', name: 'bash', arguments: { command: 'echo no' } }] },
      { text: 'Understood.' },
    );
    const agent = new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });
    agent.addMessage({ id: 'u1', role: 'user', content: 'run echo' });
    const first = await run(agent, { runId: 'rej-1' });
    expect(first.interrupts.map((i) => i.id)).toEqual(['c_no']);
    const second = await run(agent, {
      runId: 'rej-2',
      resume: [{ interruptId: 'c_no', status: 'resolved', payload: { approved: false, reason: 'not on my machine' } }],
    });
    expect(second.events.find((e) => e.type === 'TOOL_CALL_RESULT')?.content).toContain('not on my machine');
    expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(toolMessage(t, 'c_no')).toContain('rejected: not on my machine');
    t.fake.assertDone();
  });

  it('connect replays the messages and reports a pending interrupt', async () => {
    const id = await askingSession();
    t.fake.script({ text: 'first answer' });
    const agent = new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });
    agent.addMessage({ id: 'u1', role: 'user', content: 'hello' });
    await run(agent, { runId: 'c-1' });
    t.fake.script({ toolCalls: [{ id: 'c_pend', name: 'bash', arguments: { command: 'echo later' } }] });
    agent.addMessage({ id: 'u2', role: 'user', content: 'now run echo' });
    const pendingRun = await run(agent, { runId: 'c-2' });
    expect(pendingRun.interrupts.map((i) => i.id)).toEqual(['c_pend']);

    const connected = await request(t.url).post(`/v1/agui/${id}/connect`).send({}).expect(200);
    const events = sseEvents(connected.text);
    expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    expect(events[1]?.messages).toEqual([
      { id: 'm0', role: 'user', content: 'hello' },
      { id: 'm1', role: 'assistant', content: 'first answer' },
    ]);
    expect(events[2]).toMatchObject({
      outcome: { type: 'interrupt', interrupts: [{ id: 'c_pend', reason: 'tool_call' }] },
    });
    await lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));
    // Cancelling the interrupt rejects the call and ends the run.
    t.fake.script({ text: 'ok, not running it' });
    const cancelled = await run(agent, { runId: 'c-3', resume: [{ interruptId: 'c_pend', status: 'cancelled' }] });
    expect(cancelled.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(toolMessage(t, 'c_pend')).toContain('rejected');
    t.fake.assertDone();
  });
});

describe('AG-UI: auth and tenancy', () => {
  const A = 'token-agui-tenant-a-000001';
  const B = 'token-agui-tenant-b-000001';
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: {
        apiTokens: [
          { token: A, principal: 'alice', tenantId: 'team-a', scopes: ['sessions'] },
          { token: B, principal: 'bob', tenantId: 'team-b', scopes: ['sessions'] },
        ],
        sandbox: { mode: 'auto' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it("another tenant's HttpAgent gets 404 and nothing runs; no token is 401", async () => {
    const id = (await request(t.url).post('/v1/sessions').set('authorization', `Bearer ${A}`).send({}).expect(201)).body
      .session.id as string;
    const intruder = new HttpAgent({
      url: `${t.url}/v1/agui/${id}`,
      threadId: id,
      headers: { authorization: `Bearer ${B}` },
    });
    intruder.addMessage({ id: 'u1', role: 'user', content: 'hi' });
    const failure = await intruder.runAgent({ runId: 'x-1' }, { onRunFailed: () => ({}) }).then(
      () => undefined,
      (error: unknown) => error as { status?: number; payload?: { error?: { code?: string } } },
    );
    expect(failure?.status).toBe(404);
    expect(failure?.payload?.error?.code).toBe('SESSION_NOT_FOUND');
    await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({ threadId: id, runId: 'x-2', messages: [{ id: 'u', role: 'user', content: 'x' }] })
      .expect(401);
    await request(t.url).post(`/v1/agui/${id}/connect`).set('authorization', `Bearer ${B}`).send({}).expect(404);

    // The owner's agent runs.
    t.fake.script({ text: 'yours' });
    const owner = new HttpAgent({
      url: `${t.url}/v1/agui/${id}`,
      threadId: id,
      headers: { authorization: `Bearer ${A}` },
    });
    owner.addMessage({ id: 'u1', role: 'user', content: 'hi' });
    const { types } = await run(owner, { runId: 'a-1' });
    expect(types.at(-1)).toBe('RUN_FINISHED');
    await eventually(
      async () =>
        (await request(t.url).get(`/v1/sessions/${id}/runs`).set('authorization', `Bearer ${A}`).expect(200)).body.runs
          .length === 1,
      'one run',
    );
    t.fake.assertDone();
  });
});
