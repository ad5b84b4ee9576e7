import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import type { PendingQuestionView } from '../../src/protocol/questions.js';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { eventually, getRun, ofType, runEvents, startRun, useTestServers } from '../support/run-helpers.js';
import { tempDir, writeFiles, type TestServer, type TestServerOptions } from '../support/test-server.js';

const SESSION = { autoSave: true, askUser: true, confirmationPolicy: { enabled: false, defaultTimeoutMs: 60_000 } };

// One round of three calls: a read, the question, a read after it (which only runs once the question is answered).
const ROUND = {
  toolCalls: [
    { id: 'r_before', name: 'read', arguments: { file_path: 'a.txt' } },
    { id: 'q_db', name: 'ask_user', arguments: { question: 'Which database?', options: ['postgres', 'sqlite'] } },
    { id: 'r_after', name: 'read', arguments: { file_path: 'b.txt' } },
  ],
};

const toolContent = (req: RecordedRequest | undefined, id: string): string | undefined => {
  const found = (req?.body.messages as ChatMessage[] | undefined)?.find(
    (m) => m.role === 'tool' && m.tool_call_id === id,
  );
  return found ? String(found.content) : undefined;
};

async function pendingQuestions(t: TestServer, session: string): Promise<PendingQuestionView[]> {
  return (await request(t.url).get(`/v1/sessions/${session}/questions`).expect(200)).body
    .questions as PendingQuestionView[];
}

async function waitQuestion(t: TestServer, session: string): Promise<PendingQuestionView> {
  let found: PendingQuestionView | undefined;
  await eventually(async () => (found = (await pendingQuestions(t, session))[0]) !== undefined, 'a pending question');
  return found as PendingQuestionView;
}

async function ended(t: TestServer, session: string, runId: string) {
  await eventually(
    async () => ['completed', 'failed', 'cancelled'].includes((await getRun(t, session, runId)).status),
    `run ${runId} to end`,
  );
  return getRun(t, session, runId);
}

/**
 * Ask ROUND's question in session `id` on a file-store server, close that server and start another on the same
 * data dir and workspace: the question is pending across the restart. Returns the second server, the asking run
 * and the question as the first server listed it.
 */
async function askThenRestart(
  start: (options?: TestServerOptions) => Promise<TestServer>,
  fake: FakeProvider,
  id: string,
): Promise<{ second: TestServer; asking: string; asked: PendingQuestionView }> {
  const dataDir = tempDir('a3s-data-');
  const root = tempDir('a3s-ws-');
  writeFiles(root, { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' });
  const first = await start({ fake, dataDir, root });
  await request(first.url)
    .post('/v1/sessions')
    .send({ sessionId: id, ...SESSION })
    .expect(201);
  fake.script(ROUND);
  const asking = await startRun(first, id, 'set up the db');
  const asked = await waitQuestion(first, id);
  await first.close();
  return { second: await start({ fake, dataDir, root }), asking, asked };
}

describe('a question kept across a restart (file store): the answer resumes the run', () => {
  const start = useTestServers();

  it('the restarted server lists the question under its id; the answer resumes the round from the asking call', async () => {
    const fake = await startFakeProvider();
    try {
      const { second, asking, asked } = await askThenRestart(start, fake, 'dq1');
      expect(asked).toMatchObject({ question: 'Which database?', runId: asking, toolCallId: 'q_db' });

      const [kept] = await pendingQuestions(second, 'dq1');
      expect(kept).toMatchObject({
        questionId: asked.questionId,
        question: 'Which database?',
        options: ['postgres', 'sqlite'],
        runId: asking,
        toolCallId: 'q_db',
      });
      expect(kept?.remainingMs).toBeGreaterThan(0);
      expect(kept?.remainingMs).toBeLessThanOrEqual(60_000);
      expect((await getRun(second, 'dq1', asking)).status).toBe('cancelled');

      // Bad answers are refused as before, and keep the question.
      const wrong = await request(second.url)
        .post(`/v1/sessions/dq1/questions/${asked.questionId}`)
        .send({ option: 'mysql' })
        .expect(400);
      expect(wrong.body.error.message).toMatch(/^body\.option/);

      // The resumed run's first request continues the round: no new first turn, the read before not run again.
      fake.script({
        expect: (req) => {
          expect(toolContent(req, 'r_before')).toContain('alpha');
          expect(toolContent(req, 'q_db')).toBe('The user chose: sqlite');
          expect(toolContent(req, 'r_after')).toContain('beta');
        },
        text: 'Using sqlite.',
      });
      const answered = await request(second.url)
        .post(`/v1/sessions/dq1/questions/${asked.questionId}`)
        .send({ option: 'sqlite' })
        .expect(200);
      expect(answered.body).toMatchObject({ question: { questionId: asked.questionId }, option: 'sqlite' });
      const resumed = answered.body.resumedRunId as string;
      expect(resumed).toMatch(/^run_/);
      expect(resumed).not.toBe(asking);
      const done = await ended(second, 'dq1', resumed);
      expect(done).toMatchObject({ status: 'completed', result: { text: 'Using sqlite.' } });
      expect(done.metadata).toMatchObject({ resumed_from_run_id: asking });
      fake.assertDone();
      expect(fake.requests).toHaveLength(2);

      const events = await runEvents(second, 'dq1', resumed);
      expect(ofType(events, 'tool_execution_start').map((e) => e.payload.id)).toEqual(['q_db', 'r_after']);
      expect(ofType(events, 'user_question')).toEqual([]);
      expect(await pendingQuestions(second, 'dq1')).toEqual([]);
      const late = await request(second.url)
        .post(`/v1/sessions/dq1/questions/${asked.questionId}`)
        .send({ option: 'postgres' })
        .expect(409);
      expect(late.body.error.code).toBe('QUESTION_SETTLED');
    } finally {
      await fake.close();
    }
  });

  it('a resume before any answer asks the same question again (same id, the rest of its time); then it is answered live', async () => {
    const fake = await startFakeProvider();
    try {
      const { second, asking, asked } = await askThenRestart(start, fake, 'dq2');
      const resume = await request(second.url).post(`/v1/sessions/dq2/runs/${asking}/resume`).send({}).expect(202);
      const resumed = resume.body.runId as string;
      await eventually(
        async () => ofType(await runEvents(second, 'dq2', resumed), 'user_question').length === 1,
        'the question asked again',
      );
      const again = ofType(await runEvents(second, 'dq2', resumed), 'user_question')[0];
      expect(again?.payload).toMatchObject({ question_id: asked.questionId, question: 'Which database?' });
      expect(again?.payload.timeout_ms).toBe(60_000);
      const [listed] = await pendingQuestions(second, 'dq2');
      expect(listed).toMatchObject({ questionId: asked.questionId, runId: resumed });
      fake.script({
        expect: (req) => expect(toolContent(req, 'q_db')).toBe('The user answered: whatever is simplest'),
        text: 'Picked.',
      });
      const answered = await request(second.url)
        .post(`/v1/sessions/dq2/questions/${asked.questionId}`)
        .send({ answer: 'whatever is simplest' })
        .expect(200);
      expect(answered.body.resumedRunId).toBeUndefined();
      expect(await ended(second, 'dq2', resumed)).toMatchObject({ status: 'completed', result: { text: 'Picked.' } });
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });

  it('an answer that cannot resume its run now (another run is active) is taken back: the question can be answered later', async () => {
    const fake = await startFakeProvider();
    try {
      const { second, asked } = await askThenRestart(start, fake, 'dq4');
      fake.script({ hang: true });
      const other = await startRun(second, 'dq4', 'something else meanwhile');
      await fake.waitForRequests(2);
      const busy = await request(second.url)
        .post(`/v1/sessions/dq4/questions/${asked.questionId}`)
        .send({ option: 'postgres' })
        .expect(409);
      expect(busy.body.error.code).toBe('SESSION_BUSY');
      expect((await pendingQuestions(second, 'dq4')).map((q) => q.questionId)).toEqual([asked.questionId]);
      await request(second.url).post(`/v1/sessions/dq4/runs/${other}/cancel`).send({}).expect(200);
      await ended(second, 'dq4', other);
      fake.script({
        expect: (req) => expect(toolContent(req, 'q_db')).toBe('The user chose: postgres'),
        text: 'Using postgres.',
      });
      // SESSION_BUSY is retryable: the cancelled run lets go of the session once its end is recorded and saved.
      let resumedRunId: string | undefined;
      await eventually(async () => {
        const res = await request(second.url)
          .post(`/v1/sessions/dq4/questions/${asked.questionId}`)
          .send({ option: 'postgres' });
        if (res.status === 409 && res.body.error.code === 'SESSION_BUSY') return false;
        expect(res.status).toBe(200);
        resumedRunId = res.body.resumedRunId as string;
        return true;
      }, 'the answer to resume the run');
      expect(await ended(second, 'dq4', resumedRunId as string)).toMatchObject({
        status: 'completed',
        result: { text: 'Using postgres.' },
      });
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });

  it('a session closed by its client does not keep its question', async () => {
    const t = await start();
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'dq3', ...SESSION })
      .expect(201);
    t.fake.script(ROUND);
    await startRun(t, 'dq3', 'go');
    const asked = await waitQuestion(t, 'dq3');
    await request(t.url).delete('/v1/sessions/dq3').expect(200);
    const reopened = await request(t.url).post('/v1/sessions').send({ sessionId: 'dq3', resume: true }).expect(201);
    expect(reopened.body.session.id).toBe('dq3');
    expect(await pendingQuestions(t, 'dq3')).toEqual([]);
    await request(t.url).post(`/v1/sessions/dq3/questions/${asked.questionId}`).send({ option: 'sqlite' }).expect(404);
  });
});
