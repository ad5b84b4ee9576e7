import request from 'supertest';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A3sClient } from '../../src/client/a3s-client.js';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import type { FakeProvider, RecordedRequest } from '../support/fake-provider.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { startNginx, type NginxBalancer } from '../support/nginx-balancer.js';
import { startRedisNodes } from '../support/redis-target.js';
import { eventually } from '../support/run-helpers.js';
import { tempDir, writeFiles, type TestServer } from '../support/test-server.js';

const TOKEN = 'tenant-c-conversation-token-01234567';
const auth = { authorization: `Bearer ${TOKEN}` };
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** Every answer a test got through the balancer, to check none is a 421 or names a node's own URL. */
const answers: { status: number; text: string }[] = [];
function seen<T extends { status: number; text: string }>(res: T): T {
  answers.push({ status: res.status, text: res.text });
  return res;
}

const messagesOf = (req: RecordedRequest | undefined) => (req?.body.messages ?? []) as ChatMessage[];
const userTexts = (req: RecordedRequest | undefined) =>
  messagesOf(req)
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));

// Two nodes on one Redis behind Debian's nginx (plain round robin: consecutive requests alternate nodes), with
// default sessions (no autoSave): attachments, steering, interrupts, the run queue and questions all work on
// whichever node a request reaches (the other node forwards to the session's owner).
describe('the conversation through a plain round-robin balancer, default sessions', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  let lb: NginxBalancer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    const root = tempDir('a3s-conv-ws-');
    writeFiles(root, { 'a.txt': 'alpha\n' });
    [a, b] = await startRedisNodes(fake, 'a3s-conv', {
      apiTokens: [{ token: TOKEN, principal: 'carol', tenantId: 'tenant-c', scopes: ['sessions'] }],
      workspaceRoots: [root],
      providers: imageModelProviders(fake),
    });
    lb = await startNginx([new URL(a.url).host, new URL(b.url).host]);
  }, 120_000);
  afterAll(async () => {
    await lb?.close();
    await b?.close();
    await a?.close();
    await fake?.close();
    expect(answers.filter((r) => r.status === 421)).toEqual([]);
    expect(answers.filter((r) => (r.text ?? '').includes(a.url) || (r.text ?? '').includes(b.url))).toEqual([]);
  });

  const create = async (sessionId: string, extra: Record<string, unknown> = {}) =>
    seen(
      await request(lb.url)
        .post('/v1/sessions')
        .set(auth)
        .send({ sessionId, ...extra }),
    );
  const runOf = async (session: string, runId: string) =>
    seen(await request(lb.url).get(`/v1/sessions/${session}/runs/${runId}`).set(auth)).body.run as {
      status: string;
      result?: { text?: string };
      error?: { code: string; message: string };
    };
  const ended = async (session: string, runId: string) => {
    await eventually(
      async () => ['completed', 'failed', 'cancelled'].includes((await runOf(session, runId)).status),
      `run ${runId} to end`,
      20_000,
    );
    return runOf(session, runId);
  };

  it('attachments: uploaded, listed, downloaded and sent, each request on either node', async () => {
    expect((await create('conv-att')).status).toBe(201);
    const refs: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const up = seen(
        await request(lb.url)
          .post('/v1/sessions/conv-att/attachments')
          .set(auth)
          .set('content-type', 'image/png')
          .send(PNG),
      );
      expect(up.status).toBe(201);
      expect(up.body).toMatchObject({ type: 'image', mediaType: 'image/png', bytes: PNG.length });
      refs.push(up.body.attachmentId as string);
    }
    for (let i = 0; i < 2; i += 1) {
      const listed = seen(await request(lb.url).get('/v1/sessions/conv-att/attachments').set(auth));
      expect(listed.body.attachments.map((r: { attachmentId: string }) => r.attachmentId)).toEqual(refs);
      const down = seen(
        await request(lb.url)
          .get(`/v1/sessions/conv-att/attachments/${refs[i]}`)
          .set(auth)
          .buffer(true)
          .parse((res, done) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => done(null, Buffer.concat(chunks)));
          }),
      );
      expect(down.status).toBe(200);
      expect(Buffer.compare(down.body as Buffer, PNG)).toBe(0);
      expect(down.headers['content-disposition']).toMatch(/^attachment/);
      expect(down.headers['x-content-type-options']).toBe('nosniff');
      expect(down.headers['content-security-policy']).toBe('sandbox');
    }
    fake.script({
      expect: (req) => {
        const last = messagesOf(req).at(-1);
        expect(last?.content).toEqual([
          { type: 'text', text: 'what is in these?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
        ]);
      },
      text: 'two dots',
    });
    const run = seen(
      await request(lb.url)
        .post('/v1/sessions/conv-att/runs')
        .set(auth)
        .send({
          input: 'what is in these?',
          attachments: refs.map((attachmentId) => ({ type: 'image', mediaType: 'image/png', attachmentId })),
          wait: true,
        }),
    );
    expect(run.status).toBe(200);
    expect(run.body.result.text).toBe('two dots');
    fake.assertDone();
  });

  it('steer and interrupt: accepted on either node, applied at the safe point on the owner', async () => {
    expect((await create('conv-steer')).status).toBe(201);
    fake.script(
      { toolCalls: [{ id: 'st_read', name: 'read', arguments: { file_path: 'a.txt' } }], delayMs: 1500 },
      { expect: (req) => expect(userTexts(req)).toContain('use British spelling'), text: 'Colour noted.' },
    );
    const started = seen(
      await request(lb.url).post('/v1/sessions/conv-steer/runs').set(auth).send({ input: 'describe the file' }),
    );
    const runId = started.body.runId as string;
    const receipts = [];
    for (let i = 0; i < 2; i += 1) {
      const res = seen(
        await request(lb.url)
          .post(`/v1/sessions/conv-steer/runs/${runId}/steer`)
          .set(auth)
          .send({ input: 'use British spelling', requestId: 'steer-once' }),
      );
      expect(res.status).toBe(202);
      receipts.push(res.body.receipt as { status: string; requestId: string });
    }
    expect(receipts.map((r) => r.requestId)).toEqual(['steer-once', 'steer-once']);
    expect(receipts[0]?.status).toBe('accepted');
    const done = await ended('conv-steer', runId);
    expect(done).toMatchObject({ status: 'completed', result: { text: 'Colour noted.' } });
    // Applied once: the steer is in the transcript one time.
    expect(userTexts(fake.requests.at(-1)).filter((t) => t === 'use British spelling')).toHaveLength(1);
    const control = seen(await request(lb.url).get(`/v1/sessions/conv-steer/runs/${runId}/control`).set(auth));
    expect(control.body).toMatchObject({ runId, active: false });

    fake.script({
      toolCalls: [{ id: 'in_read', name: 'read', arguments: { file_path: 'a.txt' } }],
      delayMs: 1500,
    });
    const second = seen(
      await request(lb.url).post('/v1/sessions/conv-steer/runs').set(auth).send({ input: 'read it again' }),
    ).body.runId as string;
    const interrupt = seen(
      await request(lb.url)
        .post(`/v1/sessions/conv-steer/runs/${second}/interrupt`)
        .set(auth)
        .send({ reason: 'enough for now' }),
    );
    expect(interrupt.status).toBe(202);
    const stopped = await ended('conv-steer', second);
    expect(stopped).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED', message: 'enough for now' } });
    fake.assertDone();
  });

  it('the run queue: runs enqueued on either node start in order on the owner', async () => {
    expect((await create('conv-queue')).status).toBe(201);
    fake.script({ hang: true });
    const before = fake.requests.length;
    const active = seen(await request(lb.url).post('/v1/sessions/conv-queue/runs').set(auth).send({ input: 'long' }))
      .body.runId as string;
    await fake.waitForRequests(before + 1);
    const queued: string[] = [];
    for (const input of ['first after', 'second after']) {
      const res = seen(
        await request(lb.url)
          .post('/v1/sessions/conv-queue/runs')
          .set(auth)
          .send({ input, multitaskStrategy: 'enqueue' }),
      );
      expect(res.status).toBe(202);
      expect(res.body.queuePosition).toBe(queued.length + 1);
      queued.push(res.body.runId as string);
    }
    fake.script(
      { expect: (req) => expect(userTexts(req).at(-1)).toBe('first after'), text: 'one' },
      { expect: (req) => expect(userTexts(req).at(-1)).toBe('second after'), text: 'two' },
    );
    seen(await request(lb.url).post(`/v1/sessions/conv-queue/runs/${active}/cancel`).set(auth).send({}));
    expect((await ended('conv-queue', queued[1] as string)).result?.text).toBe('two');
    expect((await runOf('conv-queue', queued[0] as string)).result?.text).toBe('one');
    fake.assertDone();
  });

  it('questions: listed and answered on either node; the typed client through the balancer too', async () => {
    expect((await create('conv-ask', { askUser: true })).status).toBe(201);
    fake.script(
      {
        toolCalls: [
          { id: 'ask_lb', name: 'ask_user', arguments: { question: 'Tabs or spaces?', options: ['tabs', 'spaces'] } },
        ],
      },
      { text: 'Spaces it is.' },
    );
    const runId = seen(await request(lb.url).post('/v1/sessions/conv-ask/runs').set(auth).send({ input: 'format' }))
      .body.runId as string;
    let questionId = '';
    await eventually(async () => {
      const listed = seen(await request(lb.url).get('/v1/sessions/conv-ask/questions').set(auth));
      questionId = (listed.body.questions as Array<{ questionId: string }>)[0]?.questionId ?? '';
      return questionId !== '';
    }, 'the question');
    // Both nodes list it.
    for (let i = 0; i < 2; i += 1) {
      const listed = seen(await request(lb.url).get('/v1/sessions/conv-ask/questions').set(auth));
      expect(listed.body.questions).toHaveLength(1);
    }
    const answered = seen(
      await request(lb.url).post(`/v1/sessions/conv-ask/questions/${questionId}`).set(auth).send({ option: 'spaces' }),
    );
    expect(answered.status).toBe(200);
    expect(await ended('conv-ask', runId)).toMatchObject({ status: 'completed', result: { text: 'Spaces it is.' } });

    const client = new A3sClient({ baseUrl: lb.url, token: TOKEN, WebSocket });
    const session = await client.session(undefined, { askUser: true });
    const ref = await session.uploadAttachment(PNG, { mediaType: 'image/png' });
    expect((await session.listAttachments()).map((r) => r.attachmentId)).toEqual([ref.attachmentId]);
    fake.script(
      {
        toolCalls: [{ id: 'ask_cl', name: 'ask_user', arguments: { question: 'Ship it?', options: ['yes', 'no'] } }],
      },
      { text: 'Shipped.' },
    );
    const started = await session.startRun('go');
    let pending: Awaited<ReturnType<typeof session.pendingQuestions>> = [];
    await eventually(async () => (pending = await session.pendingQuestions()).length === 1, 'the client question');
    await session.answerQuestion(pending[0]?.questionId ?? '', { option: 'yes' });
    await eventually(
      async () => (await runOf(session.sessionId, started.runId)).status === 'completed',
      'the client run to end',
    );
    fake.assertDone();
  });
});
