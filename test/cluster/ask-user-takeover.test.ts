import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import type { FakeProvider, RecordedRequest } from '../support/fake-provider.js';
import type { MainProcess } from '../support/main-process.js';
import { startNginx, type NginxBalancer } from '../support/nginx-balancer.js';
import { retry, startProcessCluster, type ProcessCluster } from '../support/process-cluster.js';

const TOKEN = 'tenant-q-takeover-token-0123456789ab';
const auth = { authorization: `Bearer ${TOKEN}` };
const SESSION = { autoSave: true, askUser: true, confirmationPolicy: { enabled: false, defaultTimeoutMs: 120_000 } };

interface Question {
  questionId: string;
  question: string;
  runId: string | null;
  toolCallId: string;
}

const toolContent = (req: RecordedRequest | undefined, id: string): string | undefined => {
  const found = (req?.body.messages as ChatMessage[] | undefined)?.find(
    (m) => m.role === 'tool' && m.tool_call_id === id,
  );
  return found ? String(found.content) : undefined;
};

// Two server processes on one Redis behind Debian's nginx (round robin); node A is killed while its run waits on
// a question. The session (autoSave) moves to B: the question is listed there under its id and its answer resumes
// the run; with autoResume the run resumes by itself and asks the same question again.
describe('questions and the run queue survive the loss of their node', () => {
  let cluster: ProcessCluster;
  let fake: FakeProvider;
  let a: MainProcess;
  let lb: NginxBalancer;
  beforeAll(async () => {
    cluster = await startProcessCluster({
      apiTokens: [{ token: TOKEN, principal: 'quinn', tenantId: 'tenant-q', scopes: ['sessions'] }],
      cluster: { nodeTtlMs: 1500, leaseTtlMs: 3000 },
    });
    ({ fake, a } = cluster);
    writeFileSync(join(cluster.root, 'notes.txt'), 'postgres is installed\n');
    lb = await startNginx([new URL(cluster.urlA).host, new URL(cluster.urlB).host]);
  }, 120_000);
  afterAll(async () => {
    await lb?.close();
    await cluster?.close();
  });

  const questions = async (session: string): Promise<{ status: number; list: Question[] }> => {
    const res = await request(lb.url).get(`/v1/sessions/${session}/questions`).set(auth);
    return { status: res.status, list: (res.body as { questions?: Question[] }).questions ?? [] };
  };
  const ask = (id: string, question: string) => ({
    toolCalls: [
      { id: `${id}_read`, name: 'read', arguments: { file_path: 'notes.txt' } },
      { id, name: 'ask_user', arguments: { question, options: ['postgres', 'sqlite'] } },
    ],
  });

  it('A dies while two runs wait on questions and a run is queued: B lists the questions, an answer resumes one, the other resumed by itself; the queue goes on', async () => {
    for (const [sessionId, extra] of [
      ['q-answer', {}],
      ['q-auto', { autoResume: true }],
    ] as const) {
      await request(cluster.urlA)
        .post('/v1/sessions')
        .set(auth)
        .send({ sessionId, ...SESSION, ...extra })
        .expect(201);
    }
    fake.script(ask('ask_1', 'Which database for q-answer?'));
    const first = await request(cluster.urlA)
      .post('/v1/sessions/q-answer/runs')
      .set(auth)
      .send({ input: 'set up the db' })
      .expect(202);
    const asked1 = await retry(
      () => questions('q-answer'),
      (r) => r.list.length === 1,
      20_000,
    );
    fake.script(ask('ask_2', 'Which database for q-auto?'));
    await request(cluster.urlA).post('/v1/sessions/q-auto/runs').set(auth).send({ input: 'set up too' }).expect(202);
    const asked2 = await retry(
      () => questions('q-auto'),
      (r) => r.list.length === 1,
      20_000,
    );
    // q-queue: a run the provider never answers, and one queued behind it (multitaskStrategy enqueue).
    await request(cluster.urlA)
      .post('/v1/sessions')
      .set(auth)
      .send({ sessionId: 'q-queue', autoSave: true })
      .expect(201);
    const beforeHang = fake.requests.length;
    fake.script({ hang: true });
    await request(cluster.urlA)
      .post('/v1/sessions/q-queue/runs')
      .set(auth)
      .send({ input: 'think forever' })
      .expect(202);
    await fake.waitForRequests(beforeHang + 1, 20_000);
    const queued = await request(cluster.urlA)
      .post('/v1/sessions/q-queue/runs')
      .set(auth)
      .send({ input: 'after the kill', multitaskStrategy: 'enqueue' })
      .expect(202);
    expect(queued.body.queuePosition).toBe(1);
    const q1 = asked1.list[0] as Question;
    const q2 = asked2.list[0] as Question;
    expect(q1).toMatchObject({ runId: first.body.runId, toolCallId: 'ask_1' });

    a.child.kill('SIGKILL');
    await a.exited;

    // q-answer: after the takeover B lists the same question; nothing runs until it is answered.
    const kept = await retry(
      () => questions('q-answer'),
      (r) => r.status === 200 && r.list.some((q) => q.questionId === q1.questionId),
      30_000,
    );
    expect(kept.list).toHaveLength(1);
    expect(kept.list[0]).toMatchObject({ questionId: q1.questionId, question: 'Which database for q-answer?' });

    // q-auto: autoResume resumed the lost run on B, which asks the same question (same id) again.
    const revived = await retry(
      () => questions('q-auto'),
      (r) => r.status === 200 && r.list.some((q) => q.questionId === q2.questionId && q.runId !== q2.runId),
      30_000,
    );
    expect(revived.list).toHaveLength(1);
    const requestsBefore = fake.requests.length;

    fake.script(
      {
        when: (req) => toolContent(req, 'ask_1') !== undefined,
        expect: (req) => {
          expect(toolContent(req, 'ask_1_read')).toContain('postgres is installed');
          expect(toolContent(req, 'ask_1')).toBe('The user chose: postgres');
        },
        text: 'q-answer uses postgres',
      },
      {
        when: (req) => toolContent(req, 'ask_2') !== undefined,
        expect: (req) => expect(toolContent(req, 'ask_2')).toBe('The user chose: sqlite'),
        text: 'q-auto uses sqlite',
      },
      {
        when: (req) => {
          const last = (req.body.messages as ChatMessage[]).at(-1);
          return last?.role === 'user' && last.content === 'after the kill';
        },
        text: 'the queue went on',
      },
    );
    const answered = await request(lb.url)
      .post(`/v1/sessions/q-answer/questions/${q1.questionId}`)
      .set(auth)
      .send({ option: 'postgres' })
      .expect(200);
    const resumedRunId = answered.body.resumedRunId as string;
    expect(resumedRunId).toMatch(/^run_/);
    // A live question again (its run resumed on B): answered without a resume of its own.
    const live = await request(lb.url)
      .post(`/v1/sessions/q-auto/questions/${q2.questionId}`)
      .set(auth)
      .send({ option: 'sqlite' })
      .expect(200);
    expect(live.body.resumedRunId).toBeUndefined();

    const done = await retry(
      async () => (await request(lb.url).get(`/v1/sessions/q-answer/runs/${resumedRunId}`).set(auth)).body,
      (body: { run?: { status?: string; result?: { text?: string } } }) => body.run?.status === 'completed',
      20_000,
    );
    expect(done.run?.result?.text).toBe('q-answer uses postgres');
    const autoRuns = await retry(
      async () => (await request(lb.url).get('/v1/sessions/q-auto/runs').set(auth)).body,
      (body: { runs?: Array<{ status: string }> }) => (body.runs ?? []).some((run) => run.status === 'completed'),
      20_000,
    );
    expect(JSON.stringify(autoRuns)).toContain('q-auto uses sqlite');
    // q-queue: the first request after the takeover opens it on B, where its queue resumes.
    const queueRun = await retry(
      async () =>
        (
          await request(lb.url)
            .get(`/v1/sessions/q-queue/runs/${queued.body.runId as string}`)
            .set(auth)
        ).body,
      (body: { run?: { status?: string; result?: { text?: string } } }) => body.run?.status === 'completed',
      45_000,
    );
    if (queueRun.run?.status !== 'completed')
      console.log(
        JSON.stringify((await request(lb.url).get('/v1/sessions/q-queue/runs').set(auth)).body).slice(0, 3000),
        fake.failures,
      );
    expect(queueRun.run?.result?.text).toBe('the queue went on');
    // Exactly the two continuing requests and the queued run's: no first turn was replayed.
    expect(fake.requests.length - requestsBefore).toBe(3);
    fake.assertDone();
  }, 120_000);
});
