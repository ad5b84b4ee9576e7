import request from 'supertest';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A3sClient } from '../../src/client/index.js';
import { createSession, eventually, getRun, ofType, runEvents, startRun, toolMessage } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

interface Question {
  questionId: string;
  question: string;
  options: string[];
  allowFreeText: boolean;
  runId: string | null;
  toolCallId: string;
}

describe('ask_user: the agent asks its user and waits for the answer', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  const pending = async (session: string): Promise<Question[]> =>
    (await request(t.url).get(`/v1/sessions/${session}/questions`).expect(200)).body.questions as Question[];
  const waitQuestion = async (session: string): Promise<Question> => {
    let found: Question | undefined;
    await eventually(async () => {
      found = (await pending(session))[0];
      return found !== undefined;
    }, 'a pending question');
    return found as Question;
  };
  const finished = async (session: string, runId: string) => {
    await eventually(
      async () => ['completed', 'failed', 'cancelled'].includes((await getRun(t, session, runId)).status),
      'the run to end',
    );
    return getRun(t, session, runId);
  };
  const ask = (id: string, args: Record<string, unknown>) => ({
    toolCalls: [{ id, name: 'ask_user', arguments: args }],
  });

  it('is offered only to a session that says a surface can answer (askUser): elsewhere the model cannot call it', async () => {
    const plain = await createSession(t);
    const listed = (await request(t.url).get(`/v1/sessions/${plain}/tools`).expect(200)).body.tools as Array<{
      name: string;
    }>;
    expect(listed.map((tool) => tool.name)).not.toContain('ask_user');
    expect(listed.map((tool) => tool.name)).toContain('read');
    t.fake.script(ask('c_q0', { question: 'Which database?' }), { text: 'I will pick myself.' });
    const runId = await startRun(t, plain, 'set up the db');
    const run = await finished(plain, runId);
    expect(run.status).toBe('completed');
    // The provider saw no ask_user tool, and the call the model made anyway was answered as an unknown tool.
    const [first, second] = t.fake.requests.slice(-2).map((r) => r.body);
    expect((first?.tools ?? []).map((tool) => (tool.function as { name: string }).name)).not.toContain('ask_user');
    const toolMessage = second?.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c_q0');
    expect(String(toolMessage?.content)).toMatch(/ask_user/);
    expect(await pending(plain)).toEqual([]);
    expect((await request(t.url).get(`/v1/sessions/${plain}`).expect(200)).body.session.askUser).toBe(false);
  });

  it('is offered with askUser and allowed by the built-in policy; an option answered over REST reaches the model', async () => {
    const session = await createSession(t, { askUser: true });
    const tools = (await request(t.url).get(`/v1/sessions/${session}/tools`).expect(200)).body.tools as Array<{
      name: string;
    }>;
    expect(tools.map((tool) => tool.name)).toContain('ask_user');
    expect((await request(t.url).get(`/v1/sessions/${session}`).expect(200)).body.session.askUser).toBe(true);
    t.fake.script(ask('c_q1', { question: 'Which database?', options: ['postgres', 'sqlite'] }), {
      text: 'Using sqlite.',
    });
    const runId = await startRun(t, session, 'set up the db');
    const asked = await waitQuestion(session);
    expect(asked).toMatchObject({
      question: 'Which database?',
      options: ['postgres', 'sqlite'],
      allowFreeText: true,
      runId,
      toolCallId: 'c_q1',
    });
    // Not an option it offered: 400 naming body.option, and the question stays pending.
    const wrong = await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ option: 'mysql' })
      .expect(400);
    expect(wrong.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'option' } });
    expect(wrong.body.error.message).toMatch(/^body\.option: "mysql" is not one of the options/);
    const both = await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ option: 'sqlite', answer: 'sqlite' })
      .expect(400);
    expect(both.body.error.code).toBe('VALIDATION_ERROR');
    expect(await pending(session)).toHaveLength(1);

    const answered = await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ option: 'sqlite' })
      .expect(200);
    expect(answered.body).toMatchObject({ question: { questionId: asked.questionId }, option: 'sqlite' });
    const run = await finished(session, runId);
    expect(run.status).toBe('completed');
    t.fake.assertDone();
    expect(toolMessage(t, 'c_q1')).toBe('The user chose: sqlite');
    const events = await runEvents(t, session, runId);
    expect(ofType(events, 'user_question').map((e) => e.payload)).toEqual([
      {
        question_id: asked.questionId,
        question: 'Which database?',
        options: ['postgres', 'sqlite'],
        allow_free_text: true,
        tool_call_id: 'c_q1',
        timeout_ms: expect.any(Number) as unknown,
      },
    ]);
    // Settled: answering again is 409, an unknown id 404, and the id means nothing in another session.
    const again = await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ option: 'postgres' })
      .expect(409);
    expect(again.body.error.code).toBe('QUESTION_SETTLED');
    await request(t.url).post(`/v1/sessions/${session}/questions/q_nope`).send({ answer: 'x' }).expect(404);
    const other = await createSession(t, { askUser: true });
    const foreign = await request(t.url)
      .post(`/v1/sessions/${other}/questions/${asked.questionId}`)
      .send({ option: 'sqlite' })
      .expect(404);
    expect(foreign.body.error.code).toBe('QUESTION_NOT_FOUND');
  });

  it('free text over the WebSocket answer message; a question that takes only options refuses free text', async () => {
    const session = await createSession(t, { askUser: true });
    const ws = await subscribe(t.url, session, { after: 0 });
    t.fake.script(
      ask('c_q2', { question: 'Proceed?', options: ['yes', 'no'], allow_free_text: false }),
      ask('c_q3', { question: 'Name the branch' }),
      { text: 'done' },
    );
    const runId = await startRun(t, session, 'go');
    const first = await ws.waitFor((e) => e.type === 'user_question');
    expect(first.payload).toMatchObject({ question: 'Proceed?', options: ['yes', 'no'], allow_free_text: false });
    const questionId = first.payload.question_id as string;
    ws.send({ type: 'answer', questionId, answer: 'maybe' });
    const refused = await ws.waitFor((e) => e.type === 'error');
    expect(refused.payload).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(refused.payload.message).toContain('takes one of its options, not free text');
    ws.send({ type: 'answer', questionId, option: 'yes' });
    await ws.waitFor((e) => e.type === 'answer_result' && e.payload.question_id === questionId);
    const second = await ws.waitFor((e) => e.type === 'user_question' && e.payload.question !== 'Proceed?');
    ws.send({ type: 'answer', questionId: second.payload.question_id as string, answer: 'feature/db' });
    expect((await finished(session, runId)).status).toBe('completed');
    ws.close();
    t.fake.assertDone();
    expect(toolMessage(t, 'c_q2')).toBe('The user chose: yes');
    expect(toolMessage(t, 'c_q3')).toBe('The user answered: feature/db');
  });

  it('a question can be declined (REST and WebSocket): the model is told, and declined goes alone', async () => {
    const session = await createSession(t, { askUser: true });
    const ws = await subscribe(t.url, session, { after: 0 });
    t.fake.script(
      ask('c_qd1', { question: 'Deploy now?', options: ['yes', 'no'], allow_free_text: false }),
      ask('c_qd2', { question: 'Why?' }),
      { text: 'going on without it' },
    );
    const runId = await startRun(t, session, 'go');
    const asked = await waitQuestion(session);
    const both = await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ option: 'yes', declined: true })
      .expect(400);
    expect(both.body.error.message).toContain('give exactly one of answer (free text), option');
    await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ declined: false })
      .expect(400);
    const declined = await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ declined: true })
      .expect(200);
    expect(declined.body).toMatchObject({ question: { questionId: asked.questionId }, declined: true });
    const second = await ws.waitFor((e) => e.type === 'user_question' && e.payload.question === 'Why?');
    ws.send({ type: 'answer', questionId: second.payload.question_id as string, declined: true, answer: 'x' });
    const refused = await ws.waitFor((e) => e.type === 'error');
    expect(refused.payload).toMatchObject({ code: 'VALIDATION_ERROR' });
    ws.send({ type: 'answer', questionId: second.payload.question_id as string, declined: true });
    await ws.waitFor((e) => e.type === 'answer_result' && e.payload.question_id === second.payload.question_id);
    expect((await finished(session, runId)).status).toBe('completed');
    ws.close();
    t.fake.assertDone();
    const told = 'The user declined to answer. Go on without the answer, or say what you need and stop.';
    expect(toolMessage(t, 'c_qd1')).toBe(told);
    expect(toolMessage(t, 'c_qd2')).toBe(told);
    await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ declined: true })
      .expect(409);
  });

  it('waits at most the confirmation policy timeout; then nobody answered for the user', async () => {
    const session = await createSession(t, {
      askUser: true,
      confirmationPolicy: { enabled: false, defaultTimeoutMs: 300 },
    });
    t.fake.script(ask('c_q4', { question: 'Still there?' }), { text: 'ok, deciding myself' });
    const runId = await startRun(t, session, 'x');
    expect((await finished(session, runId)).status).toBe('completed');
    t.fake.assertDone();
    expect(toolMessage(t, 'c_q4')).toBe('no answer within 300 ms; nobody answered for the user');
    expect(await pending(session)).toEqual([]);
  });

  it('a cancelled run settles its question; bad model arguments are a tool error', async () => {
    const session = await createSession(t, { askUser: true });
    t.fake.script(ask('c_q5', { question: 'Wait for me' }));
    const runId = await startRun(t, session, 'x');
    const asked = await waitQuestion(session);
    await request(t.url).post(`/v1/sessions/${session}/runs/${runId}/cancel`).expect(200);
    expect((await finished(session, runId)).status).toBe('cancelled');
    expect(await pending(session)).toEqual([]);
    const late = await request(t.url)
      .post(`/v1/sessions/${session}/questions/${asked.questionId}`)
      .send({ answer: 'too late' })
      .expect(409);
    expect(late.body.error.code).toBe('QUESTION_SETTLED');
    t.fake.assertDone();

    t.fake.script(ask('c_q6', { question: 'Pick', allow_free_text: false }), { text: 'fine' });
    const bad = await startRun(t, session, 'y');
    expect((await finished(session, bad)).status).toBe('completed');
    t.fake.assertDone();
    expect(toolMessage(t, 'c_q6')).toContain('allow_free_text: false needs options to choose from');
  });

  it('through the typed client: pendingQuestions and answerQuestion', async () => {
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root, { askUser: true });
    t.fake.script(ask('c_q7', { question: 'Which?', options: ['a', 'b'] }), { text: 'ok' });
    const runId = await startRun(t, session.sessionId, 'z');
    await waitQuestion(session.sessionId);
    const [question] = await session.pendingQuestions();
    expect(question).toMatchObject({ question: 'Which?', options: ['a', 'b'] });
    const settled = await session.answerQuestion(question?.questionId ?? '', { option: 'b' });
    expect(settled.questionId).toBe(question?.questionId);
    expect((await finished(session.sessionId, runId)).status).toBe('completed');
    t.fake.assertDone();
    expect(toolMessage(t, 'c_q7')).toBe('The user chose: b');
  });
});
