import { join } from 'node:path';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/file-session-store.js';
import { startFakeProvider, type FakeProvider, type FakeStep, type RecordedRequest } from '../support/fake-provider.js';
import { listening, startMain, type MainProcess } from '../support/main-process.js';
import { createSession, history, ofType, runAndWait, runEvents, startRun, eventually } from '../support/run-helpers.js';
import { startTestServer, tempDir, writeFiles, type TestServer } from '../support/test-server.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';
import { sessionKey } from '../../src/stores/session-key.js';

type Msg = { role: string; content?: unknown; tool_call_id?: string; tool_calls?: { id: string }[] };

// About 1,000 estimated tokens of file content: under the 1,600-token watermark of a 2,000-token window alone.
const BIG = `${'big-line '.repeat(9)}\n`.repeat(44);
const FILES = { 'big.txt': BIG, 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'c.txt': 'gamma\n' };
const SMALL_WINDOW = { autoCompact: true, maxContextTokens: 2000 };

const read = (id: string, file: string) => ({ id, name: 'read', arguments: { file_path: file } });

/** Every tool message of a provider request has its assistant tool call earlier in the same request. */
function assertPairsIntact(req: RecordedRequest): void {
  const messages = req.body.messages as Msg[];
  const called = new Set<string>();
  for (const m of messages) {
    for (const call of m.tool_calls ?? []) called.add(call.id);
    if (m.role === 'tool')
      expect(called.has(String(m.tool_call_id)), `tool result ${String(m.tool_call_id)} without its call`).toBe(true);
  }
  const roles = messages.map((m) => m.role);
  expect(roles[0]).toBe('system');
  expect(roles[1]).not.toBe('tool');
}

const isSummaryRequest = (req: RecordedRequest) =>
  String((req.body.messages[0] as Msg | undefined)?.content).includes('context-compaction engine');

/**
 * The script of a run that compacts before its third turn: read big.txt (turn 1), read a, b and c in one
 * turn that reports 1,720 tokens (turn 2), then the summary call, then `after`.
 */
function compactingScript(summary: string, ...after: FakeStep[]): FakeStep[] {
  return [
    { toolCalls: [read('c_big', 'big.txt')], usage: { prompt_tokens: 100, completion_tokens: 10 } },
    {
      toolCalls: [read('c_a', 'a.txt'), read('c_b', 'b.txt'), read('c_c', 'c.txt')],
      usage: { prompt_tokens: 1700, completion_tokens: 20 },
    },
    {
      text: summary,
      expect: (req) => {
        expect(req.body.tools ?? []).toEqual([]);
        expect(isSummaryRequest(req)).toBe(true);
        const system = String((req.body.messages[0] as Msg).content);
        expect(system).toContain('untrusted');
        const transcript = String((req.body.messages[1] as Msg).content);
        // The older part (the prompt, the big read) is summarised; the kept part (a, b, c) is not sent.
        expect(transcript).toContain('big-line');
        expect(transcript).not.toContain('alpha');
      },
    },
    ...after,
  ];
}

describe('auto-compaction over HTTP', () => {
  let fake: FakeProvider;
  let t: TestServer;
  let hooks: WebhookServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    hooks = await startWebhookServer({ '/block': { body: { action: 'block', reason: 'keep everything' } } });
    t = await startTestServer({ fake, files: FILES });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await hooks.close();
  });
  afterEach(() => {
    expect(fake.failures).toEqual([]);
  });

  it('compacts before a turn past the threshold, keeping tool pairs whole; the next request, history and snapshot hold the compacted transcript', async () => {
    const id = await createSession(t, { ...SMALL_WINDOW, autoSave: true });
    const base = fake.requests.length;
    fake.script(
      ...compactingScript('SUMMARY: the user asked to read big.txt; it holds big lines.', { text: 'all read' }),
    );
    const done = await runAndWait(t, id, 'read the files');
    expect(done.run.status).toBe('completed');
    expect(done.result.text).toBe('all read');
    fake.assertDone();
    // The run's usage counts its three turns and the summary call (the fake reports 15 when the script gives none).
    expect(done.result.totalTokens).toBe(110 + 1720 + 15 + 15);
    const [turn1, turn2, summaryCall, turn3] = fake.requests.slice(base);
    expect(summaryCall && isSummaryRequest(summaryCall)).toBe(true);
    for (const req of [turn1!, turn2!, turn3!]) assertPairsIntact(req);
    // Seven messages (prompt, big read pair, a/b/c round) became the summary plus the a/b/c round: the cut of
    // the last 3 messages fell on tool results and was moved back to their assistant message.
    const sent = turn3!.body.messages as Msg[];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'tool']);
    expect(String(sent[1]!.content)).toMatch(/^\[Context summary\][\s\S]*SUMMARY: the user asked to read big\.txt/);
    expect(sent.map((m) => m.tool_call_id).filter(Boolean)).toEqual(['c_a', 'c_b', 'c_c']);
    expect(JSON.stringify(sent)).not.toContain('big-line');

    const events = await runEvents(t, id, done.runId);
    const compacted = ofType(events, 'context_compacted');
    expect(compacted).toHaveLength(1);
    expect(compacted[0]!.payload).toMatchObject({
      session_id: id,
      before_messages: 7,
      after_messages: 5,
      summary: 'SUMMARY: the user asked to read big.txt; it holds big lines.',
    });
    const percent = compacted[0]!.payload.percent_before as number;
    expect(percent).toBeGreaterThanOrEqual(0.8);
    expect(percent).toBeLessThan(1);
    // It happens between turn 2 and turn 3.
    const types = events.map((e) => e.type);
    expect(types.indexOf('context_compacted')).toBeGreaterThan(types.lastIndexOf('checkpoint_saved'));
    expect(types.indexOf('context_compacted')).toBeLessThan(types.lastIndexOf('turn_start'));

    const messages = await history(t, id);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
    expect(String(messages[0]!.content)).toContain('SUMMARY: the user asked');
    const snapshot = await new FileSessionStore({ dir: join(t.dataDir, 'sessions') }).load(sessionKey('default', id));
    expect(snapshot?.session.messages).toEqual(messages);

    // The next run starts from the compacted transcript (and does not compact it again).
    fake.script({
      text: 'next',
      expect: (req) =>
        expect((req.body.messages as Msg[]).map((m) => m.role)).toEqual([
          'system',
          'user',
          'assistant',
          'tool',
          'tool',
          'tool',
          'assistant',
          'user',
        ]),
    });
    await runAndWait(t, id, 'anything else?');
    fake.assertDone();
  });

  it('a blocking pre_compact webhook hook stops the compaction, not the run', async () => {
    const id = await createSession(t, SMALL_WINDOW);
    const hook = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'pre_compact', endpoint: { type: 'webhook', url: hooks.url('/block') } })
      .expect(201);
    // Past the 1,600-token threshold, under the 2,000-token window: blocked, the run goes on uncompacted.
    fake.script(
      { toolCalls: [read('h_a', 'a.txt')], usage: { prompt_tokens: 1700, completion_tokens: 10 } },
      { text: 'done without compaction', expect: (req) => expect(isSummaryRequest(req)).toBe(false) },
    );
    const done = await runAndWait(t, id, 'read big');
    expect(done.run.status).toBe('completed');
    expect(done.result.text).toBe('done without compaction');
    fake.assertDone();
    const events = await runEvents(t, id, done.runId);
    expect(ofType(events, 'context_compacted')).toHaveLength(0);
    expect(ofType(events, 'run_warning')[0]?.payload).toMatchObject({
      source: 'compaction',
      message: expect.stringContaining('hook_blocked'),
    });
    const asked = hooks.on('/block').at(-1)?.body;
    expect(asked).toMatchObject({
      kind: 'pre_compact',
      hook_id: hook.body.hook.id,
      session_id: id,
      message_count: 3,
      max_tokens: 2000,
      trigger: 'auto',
    });
    expect(asked?.used_tokens as number).toBeGreaterThanOrEqual(1600);
    expect((await history(t, id)).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('a model that answers an empty summary, or a failing summary call, leaves the transcript as it is and the run completes', async () => {
    for (const summaryStep of [{ text: '' }, { error: { status: 400, message: 'context too long' } }] as FakeStep[]) {
      const id = await createSession(t, SMALL_WINDOW);
      fake.script(
        { toolCalls: [read('e_a', 'a.txt')], usage: { prompt_tokens: 1700, completion_tokens: 10 } },
        { ...summaryStep, expect: (req) => expect(isSummaryRequest(req)).toBe(true) },
        { text: 'finished anyway' },
      );
      const done = await runAndWait(t, id, 'read big');
      expect(done.run.status).toBe('completed');
      expect(done.result.text).toBe('finished anyway');
      fake.assertDone();
      const events = await runEvents(t, id, done.runId);
      expect(ofType(events, 'context_compacted')).toHaveLength(0);
      expect(ofType(events, 'run_warning')[0]?.payload).toMatchObject({
        source: 'compaction',
        message: expect.stringMatching(summaryStep.error ? /provider_error/ : /empty_summary/),
      });
      expect((await history(t, id)).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    }
  });

  it('without autoCompact nothing is compacted; past the window the next request is not sent (CONTEXT_LIMIT_EXCEEDED)', async () => {
    const id = await createSession(t, { maxContextTokens: 2000 });
    fake.script(
      { toolCalls: [read('n_a', 'a.txt')], usage: { prompt_tokens: 1900, completion_tokens: 10 } },
      { text: 'plain', expect: (req) => expect(isSummaryRequest(req)).toBe(false) },
    );
    const done = await runAndWait(t, id, 'read a');
    expect(done.result.text).toBe('plain');
    const calls = fake.requests.length;
    fake.script({ toolCalls: [read('n_big', 'big.txt')], usage: { prompt_tokens: 1900, completion_tokens: 10 } });
    const over = await runAndWait(t, id, 'read big');
    expect(over.run.error?.code).toBe('CONTEXT_LIMIT_EXCEEDED');
    expect(fake.requests.length).toBe(calls + 1);
    fake.assertDone();
  });
});

describe('/compact and POST /v1/sessions/:id/compact', () => {
  let fake: FakeProvider;
  let t: TestServer;
  let hooks: WebhookServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    hooks = await startWebhookServer({ '/block': { body: { action: 'block', reason: 'not now' } } });
    t = await startTestServer({ fake, files: FILES });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await hooks.close();
  });
  afterEach(() => {
    expect(fake.failures).toEqual([]);
  });

  async function conversation(id: string, turns: number): Promise<void> {
    for (let i = 1; i <= turns; i++) {
      fake.script({ text: `answer ${i}` });
      await runAndWait(t, id, `question ${i}`);
    }
  }

  it('on an empty session: "Nothing to compact yet.", no provider call, the transcript stays empty', async () => {
    const id = await createSession(t);
    const base = fake.requests.length;
    const res = await request(t.url).post(`/v1/sessions/${id}/compact`).send().expect(200);
    expect(res.body).toMatchObject({
      beforeMessages: 0,
      afterMessages: 0,
      compacted: false,
      text: 'Nothing to compact yet.',
      error: null,
    });
    const cmd = await runAndWait(t, id, '/compact');
    expect(cmd.run.status).toBe('completed');
    expect(cmd.result.text).toBe('Nothing to compact yet.');
    expect(await history(t, id)).toEqual([]);
    expect(fake.requests.length).toBe(base);
  });

  it('POST .../compact summarises the older messages now, whatever the threshold; /compact does it again; both are saved', async () => {
    const id = await createSession(t, { autoSave: true });
    await conversation(id, 3);
    fake.script({
      text: 'They asked questions 1 and 2.',
      expect: (req) => {
        const transcript = String((req.body.messages[1] as Msg).content);
        expect(transcript).toMatch(/question 1[\s\S]*answer 1[\s\S]*question 2/);
        expect(transcript).not.toContain('answer 2');
      },
    });
    const res = await request(t.url).post(`/v1/sessions/${id}/compact`).send().expect(200);
    // The last 3 of 6 messages stay; the summary replaces the first 3; the command leaves no echo.
    expect(res.body).toMatchObject({
      beforeMessages: 6,
      afterMessages: 4,
      compacted: true,
      summary: 'They asked questions 1 and 2.',
      error: null,
    });
    expect(res.body.text).toContain('6 messages into 4');
    let messages = await history(t, id);
    expect(messages).toHaveLength(4);
    expect(String(messages[0]!.content)).toContain('They asked questions 1 and 2.');
    expect(messages.slice(1)).toEqual([
      { role: 'assistant', content: 'answer 2' },
      { role: 'user', content: 'question 3' },
      { role: 'assistant', content: 'answer 3' },
    ]);
    const events = await runEvents(t, id, res.body.runId);
    expect(ofType(events, 'context_compacted')[0]?.payload).toMatchObject({
      session_id: id,
      before_messages: 6,
      after_messages: 4,
      summary: 'They asked questions 1 and 2.',
    });

    fake.script({ text: 'Questions 1 to 3 were asked.' });
    const again = await runAndWait(t, id, '/compact');
    expect(again.run.status).toBe('completed');
    expect(again.result.text).toContain('Compacted the conversation');
    // The summary call's usage is the command run's (the fake reports 15 tokens).
    expect(again.result.totalTokens).toBe(15);
    messages = await history(t, id);
    expect(messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant']);
    expect(String(messages[0]!.content)).toContain('Questions 1 to 3 were asked.');
    const snapshot = await new FileSessionStore({ dir: join(t.dataDir, 'sessions') }).load(sessionKey('default', id));
    expect(snapshot?.session.messages).toEqual(messages);
    fake.assertDone();
  });

  it('a busy session answers 409 SESSION_BUSY; a blocking pre_compact hook fails the compaction and keeps the transcript', async () => {
    const id = await createSession(t);
    await conversation(id, 2);
    fake.script({ hang: true });
    const runId = await startRun(t, id, 'hang please');
    await eventually(
      async () => (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.busy === true,
      'the run to start',
    );
    const busy = await request(t.url).post(`/v1/sessions/${id}/compact`).send().expect(409);
    expect(busy.body.error.code).toBe('SESSION_BUSY');
    await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).send().expect(200);
    await eventually(
      async () => (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.busy === false,
      'the run to end',
    );

    const before = await history(t, id);
    await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'pre_compact', endpoint: { type: 'webhook', url: hooks.url('/block') } })
      .expect(201);
    const blocked = await request(t.url).post(`/v1/sessions/${id}/compact`).send().expect(200);
    expect(blocked.body).toMatchObject({
      compacted: false,
      beforeMessages: before.length,
      afterMessages: before.length,
      error: { code: 'BLOCKED_BY_HOOK' },
    });
    expect(blocked.body.error.message).toContain('not now');
    expect(await history(t, id)).toEqual(before);
    expect(hooks.on('/block').at(-1)?.body).toMatchObject({
      kind: 'pre_compact',
      trigger: 'manual',
      message_count: before.length,
    });
  });

  it('the summary call goes through the budget guard: its usage counts, and an exhausted budget refuses it', async () => {
    const id = await createSession(t, { budget: { maxTokens: 50_000 } });
    await conversation(id, 2);
    const calls = async () =>
      (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.llmCalls as number;
    expect(await calls()).toBe(2);
    fake.script({ text: 'a summary that cost a lot', usage: { prompt_tokens: 49_960, completion_tokens: 20 } });
    const res = await request(t.url).post(`/v1/sessions/${id}/compact`).send().expect(200);
    expect(res.body.compacted).toBe(true);
    expect(await calls()).toBe(3);
    // 15 + 15 + 49,980 tokens used: the next provider call (a turn or another summary) is refused before it is made.
    const refused = await runAndWait(t, id, 'one more');
    expect(refused.run.error).toMatchObject({ code: 'BUDGET_EXHAUSTED' });
    const again = await request(t.url).post(`/v1/sessions/${id}/compact`).send().expect(200);
    expect(again.body).toMatchObject({ compacted: false, error: { code: 'BUDGET_EXHAUSTED' } });
    expect(await calls()).toBe(3);
    fake.assertDone();
  });
});

/** The environment of a server process talking to the fake provider. */
function nodeEnv(fake: FakeProvider, extra: Record<string, string>): Record<string, string> {
  return {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: fake.baseUrl,
    A3S_MODEL: 'openai/test-model',
    A3S_PORT: '0',
    ...extra,
  };
}

describe('a compacted run resumed on another server process', () => {
  const procs: MainProcess[] = [];
  let fake: FakeProvider | undefined;
  afterEach(async () => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await fake?.close();
  });

  it('the checkpoint written after the compaction holds the compacted transcript; the resumed request starts from it', async () => {
    fake = await startFakeProvider();
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    writeFiles(root, FILES);
    const env = nodeEnv(fake, { A3S_DATA_DIR: dataDir, A3S_WORKSPACE_ROOTS: root });
    const first = startMain(env);
    procs.push(first);
    const url = await listening(first);
    await request(url)
      .post('/v1/sessions')
      .send({ sessionId: 'compacty', autoSave: true, permissionPolicy: { enabled: false }, ...SMALL_WINDOW })
      .expect(201);
    fake.script(
      ...compactingScript('SUMMARY before the crash.', { toolCalls: [read('c_after', 'a.txt')] }, { hang: true }),
    );
    const started = await request(url).post('/v1/sessions/compacty/runs').send({ input: 'read the files' }).expect(202);
    // Request 5 starts after the checkpoint of the round that followed the compaction.
    await fake.waitForRequests(5, 20_000);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = startMain(env);
    procs.push(second);
    const url2 = await listening(second);
    fake.script({ text: 'resumed after compaction' });
    const resumed = await request(url2)
      .post(`/v1/sessions/compacty/runs/${started.body.runId}/resume`)
      .send({ wait: true })
      .expect(200);
    expect(resumed.body.result.text).toBe('resumed after compaction');
    const req = fake.requests.at(-1)!;
    assertPairsIntact(req);
    const sent = req.body.messages as Msg[];
    expect(sent.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(String(sent[1]!.content)).toContain('SUMMARY before the crash.');
    expect(JSON.stringify(sent)).not.toContain('big-line');
    const messages = (await request(url2).get('/v1/sessions/compacty/history').expect(200)).body.messages as Msg[];
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    fake.assertDone();
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 60_000);
});
