import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

describe('end to end over HTTP and WebSocket', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  it('creates a session, runs read then answers, replays events after reconnect, saves, and resumes in a fresh server', async () => {
    const dataDir = tempDir('a3s-data-');
    const t = await startTestServer({
      dataDir,
      files: { 'notes.txt': 'alpha\nbeta\n', 'AGENTS.md': 'Always answer in haiku.' },
    });
    servers.push(t);

    const created = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 's-e2e', role: 'You are a careful reviewer.' })
      .expect(201);
    expect(created.body.session).toMatchObject({
      id: 's-e2e',
      workspace: t.root,
      model: 'openai/test-model',
      busy: false,
      closed: false,
    });

    const live = await subscribe(t.url, 's-e2e', { after: 0 });
    t.fake.script(
      { toolCalls: [{ id: 'call_read', name: 'read', arguments: { file_path: 'notes.txt' } }] },
      { text: 'The file says alpha and beta.', chunks: 3 },
    );
    const run = await request(t.url)
      .post('/v1/sessions/s-e2e/runs')
      .send({ input: 'What is in notes.txt?', wait: true })
      .expect(200);
    expect(run.body.result).toMatchObject({
      text: 'The file says alpha and beta.',
      toolCallsCount: 1,
      promptTokens: 20,
      completionTokens: 10,
      totalTokens: 30,
      verificationStatus: 'skipped',
    });
    expect(run.body.run.status).toBe('completed');
    t.fake.assertDone();

    // The provider got the bare model name, the system prompt with AGENTS.md and role, and the tool result.
    const [first, second] = t.fake.requests;
    expect(first.body.model).toBe('test-model');
    const system = first.body.messages[0];
    expect(system.role).toBe('system');
    expect(String(system.content)).toContain('Always answer in haiku.');
    expect(String(system.content)).toContain('You are a careful reviewer.');
    const toolMessage = second.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(String(toolMessage?.content)).toContain('alpha');

    const end = await live.waitFor((e) => e.type === 'agent_end');
    const types = live.frames.map((f) => f.type);
    for (const type of [
      'agent_start',
      'turn_start',
      'tool_start',
      'tool_input_delta',
      'tool_execution_start',
      'tool_end',
      'turn_end',
      'text_delta',
      'agent_end',
    ])
      expect(types).toContain(type);
    const seqs = live.frames.map((f) => f.metadata.session_sequence);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(end.metadata.run_id).toBe(run.body.runId);
    live.close();

    // Reconnect from a cursor: exactly the events after it, no gaps or duplicates.
    const cursor = 4;
    const replay = await subscribe(t.url, 's-e2e', { after: cursor });
    await replay.waitFor((e) => e.type === 'agent_end');
    expect(replay.frames.map((f) => f.metadata.session_sequence)).toEqual(seqs.slice(cursor));
    replay.close();

    const page = await request(t.url)
      .get(`/v1/sessions/s-e2e/runs/${run.body.runId}/events?after=-1&limit=5`)
      .expect(200);
    expect(page.body.events.map((e: { metadata: { sequence: number } }) => e.metadata.sequence)).toEqual([
      0, 1, 2, 3, 4,
    ]);
    expect(page.body.nextAfter).toBe(4);

    const saved = await request(t.url).post('/v1/sessions/s-e2e/save').expect(200);
    expect(saved.body.generation).toBe(1);
    const history = (await request(t.url).get('/v1/sessions/s-e2e/history').expect(200)).body.messages;
    expect(history.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    await t.close();
    servers.splice(0);

    // A fresh server on the same data dir resumes the session with its history and labels.
    const t2 = await startTestServer({ dataDir, root: t.root });
    servers.push(t2);
    const resumed = await request(t2.url).post('/v1/sessions').send({ sessionId: 's-e2e', resume: true }).expect(201);
    expect(resumed.body.resumed).toBe(true);
    expect(resumed.body.session.labels).toMatchObject({ tenantId: 'default', principal: 'anonymous' });
    const history2 = (await request(t2.url).get('/v1/sessions/s-e2e/history').expect(200)).body.messages;
    expect(history2).toEqual(history);
    const runs = (await request(t2.url).get('/v1/sessions/s-e2e/runs').expect(200)).body.runs;
    expect(runs).toHaveLength(1);

    // The next run continues the transcript: the provider sees the earlier turns.
    t2.fake.script({ text: 'Still here.' });
    await request(t2.url).post('/v1/sessions/s-e2e/runs').send({ input: 'Again?', wait: true }).expect(200);
    const msgs = t2.fake.requests[0].body.messages;
    expect(msgs.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['What is in notes.txt?', 'Again?']);
    t2.fake.assertDone();
  });

  it('a closed session stays closed across a restart until resume: true reopens it', async () => {
    const dataDir = tempDir('a3s-data-');
    const t = await startTestServer({ dataDir });
    servers.push(t);
    await request(t.url).post('/v1/sessions').send({ sessionId: 'closing', autoSave: true }).expect(201);
    await request(t.url).delete('/v1/sessions/closing').expect(200);
    await t.close();
    servers.splice(0);
    const t2 = await startTestServer({ dataDir, root: t.root });
    servers.push(t2);
    const closed = await request(t2.url).get('/v1/sessions/closing').expect(410);
    expect(closed.body.error.code).toBe('SESSION_CLOSED');
    // Closing stays idempotent after the restart (closed: false, it already was), and resuming a run does not reopen the session.
    await request(t2.url).delete('/v1/sessions/closing').expect(200, { closed: false });
    const resumeRun = await request(t2.url).post('/v1/sessions/closing/runs/run_x/resume').send({}).expect(410);
    expect(resumeRun.body.error.code).toBe('SESSION_CLOSED');
    await request(t2.url).get('/v1/sessions/closing').expect(410);
    await request(t2.url).post('/v1/sessions').send({ sessionId: 'closing', resume: true }).expect(201);
    await request(t2.url).get('/v1/sessions/closing').expect(200);
  });
});
