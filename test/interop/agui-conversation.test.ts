import { HttpAgent } from '@ag-ui/client';
import type { BaseEvent, Interrupt } from '@ag-ui/core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider, type FakeStep, type RecordedRequest } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { toolMessage } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
).toString('base64');

function userContent(req: RecordedRequest): unknown {
  return req.body.messages.filter((m) => m.role === 'user').at(-1)?.content;
}

async function run(agent: HttpAgent, params: Parameters<HttpAgent['runAgent']>[0] = {}) {
  const events: BaseEvent[] = [];
  let interrupts: Interrupt[] = [];
  await agent.runAgent(params, {
    onEvent: ({ event }) => {
      events.push(event);
    },
    onRunFinishedEvent: (p) => {
      if (p.outcome === 'interrupt') interrupts = p.interrupts;
    },
  });
  return { events, interrupts };
}

function sseEvents(text: string): BaseEvent[] {
  return text
    .split('\n\n')
    .map((f) =>
      f
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n'),
    )
    .filter((d) => d !== '')
    .map((d) => JSON.parse(d) as BaseEvent);
}

describe('AG-UI: attachments, questions and busy sessions', () => {
  let fake: FakeProvider;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: {
        providers: imageModelProviders(fake, { textModel: true }),
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  const session = async (options: Record<string, unknown> = {}) =>
    (await request(t.url).post('/v1/sessions').send(options).expect(201)).body.session.id as string;

  it('image and text document parts become the content parts the provider gets', async () => {
    const id = await session();
    fake.script({ text: 'a pixel and notes' });
    const agent = new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });
    agent.addMessage({
      id: 'u1',
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', source: { type: 'data', value: PNG, mimeType: 'image/png' } },
        {
          type: 'document',
          source: { type: 'data', value: Buffer.from('# hi\n').toString('base64'), mimeType: 'text/markdown' },
          metadata: { name: 'notes.md' },
        },
      ],
    });
    const { events } = await run(agent, { runId: 'img-1' });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(userContent(fake.requests.at(-1)!)).toEqual([
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'text', text: 'notes.md:\n# hi\n' },
    ]);
    const listed = (await request(t.url).get(`/v1/sessions/${id}/attachments`).expect(200)).body.attachments;
    expect(listed.map((a: { type: string }) => a.type)).toEqual(['image', 'file']);
    fake.assertDone();
  });

  it('unsupported parts are 400 naming the part, before any provider call', async () => {
    const id = await session();
    const textOnly = await session({ model: 'openai/text-model' });
    const post = (sid: string, part: unknown) =>
      request(t.url)
        .post(`/v1/agui/${sid}`)
        .send({
          threadId: sid,
          runId: `bad-${Math.random()}`,
          messages: [{ id: 'u', role: 'user', content: [{ type: 'text', text: 'look' }, part] }],
        });
    const before = fake.requests.length;
    const url = await post(id, { type: 'image', source: { type: 'url', value: 'https://example.com/a.png' } });
    expect(url.status).toBe(400);
    expect(url.body.error.details.field).toBe('body.messages.0.content.1.source');
    const audio = await post(id, { type: 'audio', source: { type: 'data', value: 'AAAA', mimeType: 'audio/wav' } });
    expect(audio.body.error.details.field).toBe('body.messages.0.content.1.type');
    const pdf = await post(id, {
      type: 'document',
      source: { type: 'data', value: 'AAAA', mimeType: 'application/pdf' },
    });
    expect(pdf.body.error.details.field).toBe('body.messages.0.content.1.source.mimeType');
    const lying = await post(id, { type: 'image', source: { type: 'data', value: PNG, mimeType: 'image/gif' } });
    expect(lying.status).toBe(400);
    expect(lying.body.error.message).toContain('body.messages.0.content.1.mediaType: declared image/gif');
    const noImages = await post(textOnly, {
      type: 'image',
      source: { type: 'data', value: PNG, mimeType: 'image/png' },
    });
    expect(noImages.status).toBe(400);
    expect(noImages.body.error.message).toContain(
      'body.messages.0.content.1: model "openai/text-model" does not accept images',
    );
    expect(fake.requests.length).toBe(before);
    expect((await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs).toEqual([]);
  });

  it('an ask_user question is an interrupt; resume with payload.option answers it', async () => {
    const id = await session({ askUser: true });
    fake.script(
      {
        toolCalls: [
          { id: 'c_ask', name: 'ask_user', arguments: { question: 'Which database?', options: ['sqlite', 'pg'] } },
        ],
      },
      { text: 'sqlite it is' },
    );
    const agent = new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });
    agent.addMessage({ id: 'u1', role: 'user', content: 'set up a db' });
    const first = await run(agent, { runId: 'q-1' });
    expect(first.interrupts).toHaveLength(1);
    const interrupt = first.interrupts[0]!;
    expect(interrupt).toMatchObject({
      reason: 'user_question',
      message: 'Which database?',
      toolCallId: 'c_ask',
      metadata: { options: ['sqlite', 'pg'], allowFreeText: true },
    });
    const pending = (await request(t.url).get(`/v1/sessions/${id}/questions`).expect(200)).body.questions;
    expect(pending.map((q: { questionId: string }) => q.questionId)).toEqual([interrupt.id]);
    // An option not offered, or a confirmation's payload, is refused as RUN_ERROR naming the payload.
    const wrong = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({
        threadId: id,
        runId: 'q-x',
        messages: [],
        resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { option: 'mysql' } }],
      })
      .expect(200);
    expect(sseEvents(wrong.text)).toEqual([expect.objectContaining({ type: 'RUN_ERROR', code: 'VALIDATION_ERROR' })]);
    expect(String(sseEvents(wrong.text)[0]?.message)).toContain('body.resume.0.payload.option');
    const approvedInstead = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({
        threadId: id,
        runId: 'q-y',
        messages: [],
        resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
      })
      .expect(200);
    expect(String(sseEvents(approvedInstead.text)[0]?.message)).toContain('is a question');
    const second = await run(agent, {
      runId: 'q-2',
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { option: 'sqlite' } }],
    });
    expect(second.events.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: 'c_ask' });
    expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(toolMessage(t, 'c_ask')).toContain('The user chose: sqlite');
    const stale = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send({
        threadId: id,
        runId: 'q-z',
        messages: [],
        resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { answer: 'postgres' } }],
      })
      .expect(200);
    expect(sseEvents(stale.text)).toEqual([expect.objectContaining({ type: 'RUN_ERROR', code: 'QUESTION_SETTLED' })]);
    fake.assertDone();
  });

  it('a free-text question: connect reports it, resume with payload.answer answers it', async () => {
    const id = await session({ askUser: true });
    fake.script(
      { toolCalls: [{ id: 'c_free', name: 'ask_user', arguments: { question: 'Name the project?' } }] },
      { text: 'named' },
    );
    const agent = new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });
    agent.addMessage({ id: 'u1', role: 'user', content: 'start a project' });
    const first = await run(agent, { runId: 'f-1' });
    const interrupt = first.interrupts[0]!;
    expect(interrupt).toMatchObject({ reason: 'user_question', metadata: { options: [], allowFreeText: true } });
    expect(interrupt.responseSchema?.properties).toEqual({
      answer: { type: 'string', minLength: 1 },
      declined: { type: 'boolean', const: true },
    });
    const connected = sseEvents((await request(t.url).post(`/v1/agui/${id}/connect`).send({}).expect(200)).text);
    expect(connected.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      outcome: { type: 'interrupt', interrupts: [{ id: interrupt.id, reason: 'user_question' }] },
    });
    const second = await run(agent, {
      runId: 'f-2',
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { answer: 'zephyr' } }],
    });
    expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(toolMessage(t, 'c_free')).toContain('The user answered: zephyr');
    fake.assertDone();
  });

  it('a question is declined by payload {declined: true} or by status "cancelled"', async () => {
    const ask = (id: string) => ({ toolCalls: [{ id, name: 'ask_user', arguments: { question: 'Which port?' } }] });
    for (const [n, entry] of [
      ['1', { status: 'resolved', payload: { declined: true } }],
      ['2', { status: 'cancelled' }],
    ] as const) {
      const id = await session({ askUser: true });
      fake.script(ask(`c_dec${n}`), { text: 'going on without it' });
      const agent = new HttpAgent({ url: `${t.url}/v1/agui/${id}`, threadId: id });
      agent.addMessage({ id: 'u1', role: 'user', content: 'serve it' });
      const interrupt = (await run(agent, { runId: `d${n}-1` })).interrupts[0]!;
      if (n === '1') {
        const wrong = await request(t.url)
          .post(`/v1/agui/${id}`)
          .send({
            threadId: id,
            runId: 'd-x',
            messages: [],
            resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { declined: false } }],
          })
          .expect(400);
        expect(wrong.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          details: { field: 'body.resume.0.payload.declined' },
        });
      }
      const second = await run(agent, { runId: `d${n}-2`, resume: [{ interruptId: interrupt.id, ...entry }] });
      expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      expect(toolMessage(t, `c_dec${n}`)).toContain('The user declined to answer');
      expect((await request(t.url).get(`/v1/sessions/${id}/questions`).expect(200)).body.questions).toEqual([]);
    }
    fake.assertDone();
  });

  const strategyBody = (id: string, runId: string, text: string, forwardedProps?: unknown) => ({
    threadId: id,
    runId,
    messages: [{ id: runId, role: 'user', content: text }],
    ...(forwardedProps !== undefined ? { forwardedProps } : {}),
  });
  const userTexts = (index: number) =>
    (fake.requests[index]?.body.messages ?? [])
      .filter((m) => m.role === 'user')
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));

  it('forwardedProps.multitaskStrategy: unknown values are refused by name', async () => {
    const id = await session();
    const bad = await request(t.url)
      .post(`/v1/agui/${id}`)
      .send(strategyBody(id, 'm-0', 'x', { multitaskStrategy: 'later' }))
      .expect(400);
    expect(bad.body.error.details.field).toBe('body.forwardedProps.multitaskStrategy');
  });

  it.each([
    {
      // enqueue: the run waits and starts once the busy run completes.
      strategy: 'enqueue',
      busy: { text: 'first', delayMs: 400 } as FakeStep,
      next: { text: 'second' } as FakeStep,
      busyText: 'one',
      text: 'three',
      busyStatus: 'completed',
      busyTurnKept: true,
    },
    {
      // interrupt: the busy run's tool round finishes (its result kept), then it stops before its next provider call.
      strategy: 'interrupt',
      busy: { toolCalls: [{ id: 'i_read', name: 'ls', arguments: {} }], delayMs: 400 } as FakeStep,
      next: { text: 'after the interrupt' } as FakeStep,
      busyText: 'list the files',
      text: 'do this instead',
      busyStatus: 'cancelled',
      busyTurnKept: true,
    },
    {
      // rollback: the busy run is cancelled at once and its turn is not in the next run's request.
      strategy: 'rollback',
      busy: { hang: true } as FakeStep,
      next: { text: 'rolled back' } as FakeStep,
      busyText: 'forget me',
      text: 'keep me',
      busyStatus: 'cancelled',
      busyTurnKept: false,
    },
  ])(
    'forwardedProps.multitaskStrategy $strategy: a run posted while another is busy ($busyStatus) runs',
    async ({ strategy, busy, next, busyText, text, busyStatus, busyTurnKept }) => {
      const id = await session();
      fake.script(busy, next);
      const before = fake.requests.length;
      const first = request(t.url)
        .post(`/v1/agui/${id}`)
        .send(strategyBody(id, 'b-1', busyText))
        .then((r) => r);
      await fake.waitForRequests(before + 1);
      const refused = await request(t.url)
        .post(`/v1/agui/${id}`)
        .send(strategyBody(id, 'b-2', 'no strategy'));
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('SESSION_BUSY');
      const second = await request(t.url)
        .post(`/v1/agui/${id}`)
        .send(strategyBody(id, 'b-3', text, { multitaskStrategy: strategy }))
        .expect(200);
      const events = sseEvents(second.text);
      // Every strategy queues the run (interrupt and rollback first in line) until the busy run ends.
      expect(events[0]?.metadata?.queuePosition).toBe(1);
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      expect(
        events
          .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
          .map((e) => e.delta)
          .join(''),
      ).toBe(next.text);
      expect(sseEvents((await first).text).at(-1)).toMatchObject({
        type: 'RUN_FINISHED',
        outcome: { type: busyStatus === 'completed' ? 'success' : 'cancelled' },
      });
      expect(userTexts(before + 1).at(-1)).toBe(text);
      expect(userTexts(before + 1).includes(busyText)).toBe(busyTurnKept);
      const runs = (await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs;
      expect(runs.map((r: { input: string; status: string }) => [r.input, r.status])).toEqual([
        [busyText, busyStatus],
        [text, 'completed'],
      ]);
      fake.assertDone();
    },
  );
});
