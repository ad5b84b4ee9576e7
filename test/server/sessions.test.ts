import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

describe('sessions: options, workspace confinement, single flight, side questions, idempotency, close', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ files: { 'sub/AGENTS.md': 'sub rules', 'a.txt': 'hello\n' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('rejects unknown and unimplemented options naming the field', async () => {
    const unknown = await request(t.url).post('/v1/sessions').send({ bogus: 1 }).expect(400);
    expect(unknown.body.error.code).toBe('VALIDATION_ERROR');
    expect(unknown.body.error.message).toContain('bogus');
    expect(unknown.body.error.message).toContain('unknown option "bogus"');
    const unsupported = await request(t.url).post('/v1/sessions').send({ outputLanguage: 'fr' }).expect(400);
    expect(unsupported.body.error).toMatchObject({
      code: 'UNSUPPORTED_OPTION',
      details: { field: 'outputLanguage', options: ['outputLanguage'] },
    });
    // Our old placeholder names are not options: the seed's names are (builtinSkills, memoryStore, queueConfig).
    for (const old of ['skills', 'memory', 'queue']) {
      expect(
        (
          await request(t.url)
            .post('/v1/sessions')
            .send({ [old]: true })
            .expect(400)
        ).body.error.code,
      ).toBe('VALIDATION_ERROR');
    }
    const badType = await request(t.url).post('/v1/sessions').send({ maxToolRounds: -1 }).expect(400);
    expect(badType.body.error.message).toContain('body.maxToolRounds');
    const badModel = await request(t.url).post('/v1/sessions').send({ model: 'nope/x' }).expect(400);
    expect(badModel.body.error).toMatchObject({ code: 'SESSION_CONFIGURATION_ERROR', details: { field: 'model' } });
    const badJson = await request(t.url)
      .post('/v1/sessions')
      .set('content-type', 'application/json')
      .send('{"a":')
      .expect(400);
    expect(badJson.body.error.code).toBe('VALIDATION_ERROR');
    const noStack = JSON.stringify(badJson.body);
    expect(noStack).not.toContain('at ');
  });

  it('confines the workspace to the configured roots and returns the canonical path', async () => {
    const sub = await request(t.url).post('/v1/sessions').send({ workspace: 'sub' }).expect(201);
    expect(sub.body.session.workspace).toBe(join(t.root, 'sub'));
    const escape = await request(t.url).post('/v1/sessions').send({ workspace: '../' }).expect(400);
    expect(escape.body.error).toMatchObject({ code: 'WORKSPACE_OUTSIDE_ROOTS', details: { field: 'workspace' } });
    const outside = tempDir('a3s-outside-');
    mkdirSync(join(t.root, 'links'), { recursive: true });
    symlinkSync(outside, join(t.root, 'links', 'out'));
    const viaLink = await request(t.url).post('/v1/sessions').send({ workspace: 'links/out' }).expect(400);
    expect(viaLink.body.error.code).toBe('WORKSPACE_OUTSIDE_ROOTS');
    const missing = await request(t.url).post('/v1/sessions').send({ workspace: 'nope' }).expect(400);
    expect(missing.body.error.details.field).toBe('workspace');
  });

  it('accepts session ids of the full 128 characters on every route', async () => {
    const id = `s${'x'.repeat(127)}`;
    await request(t.url).post('/v1/sessions').send({ sessionId: id }).expect(201);
    await request(t.url).get(`/v1/sessions/${id}`).expect(200);
    await request(t.url).get(`/v1/sessions/${id}/history`).expect(200);
    const tooLong = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: `s${'x'.repeat(128)}` })
      .expect(400);
    expect(tooLong.body.error.message).toContain('body.sessionId');
  });

  it('refuses a duplicate session id and resume of an unknown one', async () => {
    await request(t.url).post('/v1/sessions').send({ sessionId: 'dup' }).expect(201);
    const again = await request(t.url).post('/v1/sessions').send({ sessionId: 'dup' }).expect(409);
    expect(again.body.error.code).toBe('SESSION_EXISTS');
    const unknown = await request(t.url).post('/v1/sessions').send({ sessionId: 'never', resume: true }).expect(404);
    expect(unknown.body.error.code).toBe('SESSION_NOT_FOUND');
    const noId = await request(t.url).post('/v1/sessions').send({ resume: true }).expect(400);
    expect(noId.body.error.details.field).toBe('sessionId');
  });

  it('admits exactly one of 50 simultaneous runs; the others get SESSION_BUSY naming the active run', async () => {
    const created = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session;
    expect(created.lastRun).toBeNull();
    const id = created.id;
    t.fake.script({ delayMs: 300, text: 'only one' });
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        request(t.url)
          .post(`/v1/sessions/${id}/runs`)
          .send({ input: `q${i}` }),
      ),
    );
    const admitted = responses.filter((r) => r.status === 202);
    const busy = responses.filter((r) => r.status === 409);
    expect(admitted).toHaveLength(1);
    expect(busy).toHaveLength(49);
    const runId = admitted[0].body.runId;
    for (const r of busy) expect(r.body.error).toMatchObject({ code: 'SESSION_BUSY', details: { activeRunId: runId } });
    const info = (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session;
    expect(info).toMatchObject({
      busy: true,
      currentRun: { id: runId },
      lastRun: { id: runId, status: info.currentRun.status },
    });
    await waitForRun(t, id, runId);
    // The list carries the last run's outcome once idle (the console's "last run" column).
    const listed = (await request(t.url).get('/v1/sessions').expect(200)).body.sessions.find(
      (s: { id: string }) => s.id === id,
    );
    expect(listed).toMatchObject({ busy: false, currentRun: null, lastRun: { id: runId, status: 'completed' } });
    const history = (await request(t.url).get(`/v1/sessions/${id}/history`).expect(200)).body.messages;
    expect(history).toEqual([
      { role: 'user', content: expect.stringMatching(/^q\d+$/) },
      { role: 'assistant', content: 'only one' },
    ]);
    expect(t.fake.requests.at(-1)?.body.messages.filter((m: { role: string }) => m.role === 'user')).toHaveLength(1);
    t.fake.assertDone();
  });

  it('keeps the run lease until the producer ends when the waiting client disconnects', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    t.fake.script({ delayMs: 400, text: 'finished anyway' });
    const seen = t.fake.requests.length;
    const controller = new AbortController();
    const pending = fetch(`${t.url}/v1/sessions/${id}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'long task', wait: true }),
      signal: controller.signal,
    }).catch(() => undefined);
    await t.fake.waitForRequests(seen + 1, 5000);
    controller.abort();
    await pending;
    const info = (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session;
    expect(info.busy).toBe(true);
    const busy = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'again' }).expect(409);
    expect(busy.body.error.details.activeRunId).toBe(info.currentRun.id);
    await waitForRun(t, id, info.currentRun.id);
    const history = (await request(t.url).get(`/v1/sessions/${id}/history`).expect(200)).body.messages;
    expect(history.at(-1)).toEqual({ role: 'assistant', content: 'finished anyway' });
    t.fake.assertDone();
  });

  it('runs a side question on given history without changing the transcript', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    t.fake.script({ text: 'main answer' });
    await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'main', wait: true }).expect(200);
    t.fake.script({ text: 'side answer' });
    const side = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .send({
        input: 'side?',
        history: [
          { role: 'user', content: 'context' },
          { role: 'assistant', content: 'ok' },
        ],
        wait: true,
      })
      .expect(200);
    expect(side.body.result.text).toBe('side answer');
    expect(side.body.run.sideQuestion).toBe(true);
    const sent = t.fake.requests.at(-1)?.body.messages.map((m) => m.content);
    expect(sent?.slice(1)).toEqual(['context', 'ok', 'side?']);
    const history = (await request(t.url).get(`/v1/sessions/${id}/history`).expect(200)).body.messages;
    expect(history.map((m: { content: string }) => m.content)).toEqual(['main', 'main answer']);
    const badHistory = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .send({ input: 'x', history: [{ role: 'wizard', content: 'x' }] })
      .expect(400);
    expect(badHistory.body.error.message).toContain('body.history.0.role');
    t.fake.assertDone();
  });

  it('returns the existing run for a repeated Idempotency-Key', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    t.fake.script({ delayMs: 100, text: 'once' });
    const first = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set('Idempotency-Key', 'k-1')
      .send({ input: 'do it' })
      .expect(202);
    // Without wait a retry answers like the first request did: 202 with the same run.
    const again = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set('Idempotency-Key', 'k-1')
      .send({ input: 'do it' })
      .expect(202);
    expect(again.body).toMatchObject({ runId: first.body.runId, existing: true });
    const retry = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set('Idempotency-Key', 'k-1')
      .send({ input: 'do it', wait: true })
      .expect(200);
    expect(retry.body.runId).toBe(first.body.runId);
    expect(retry.body.existing).toBe(true);
    expect(retry.body.result.text).toBe('once');
    const runs = (await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs;
    expect(runs).toHaveLength(1);
    t.fake.assertDone();
  });

  it('closes idempotently; later calls get SESSION_CLOSED', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    expect((await request(t.url).delete(`/v1/sessions/${id}`).expect(200)).body).toEqual({ closed: true });
    expect((await request(t.url).delete(`/v1/sessions/${id}`).expect(200)).body).toEqual({ closed: false });
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'x' }).expect(410);
    expect(run.body.error.code).toBe('SESSION_CLOSED');
    await request(t.url).get(`/v1/sessions/${id}/history`).expect(410);
    await request(t.url).delete('/v1/sessions/never-existed').expect(404);
  });

  it('close cancels host-direct tool calls in flight', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const call = request(t.url)
      .post(`/v1/sessions/${id}/tools/bash`)
      .send({ args: { command: 'sleep 30' } });
    const pending = call.then((r) => r);
    await new Promise((r) => setTimeout(r, 300));
    await request(t.url).delete(`/v1/sessions/${id}`).expect(200);
    const result = await pending;
    expect(result.status).toBe(200);
    expect(result.body.exitCode).not.toBe(0);
    expect(result.body.output).toMatch(/cancel/i);
  });

  it('answers unknown routes, runs and tools with coded 404s', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    expect((await request(t.url).get('/v1/nothing').expect(404)).body.error.code).toBe('NOT_FOUND');
    expect((await request(t.url).get(`/v1/sessions/${id}/runs/run_x`).expect(404)).body.error.code).toBe(
      'RUN_NOT_FOUND',
    );
    expect(
      (await request(t.url).post(`/v1/sessions/${id}/tools/nope`).send({ args: {} }).expect(404)).body.error.code,
    ).toBe('TOOL_NOT_FOUND');
    const badEvents = await request(t.url).get(`/v1/sessions/${id}/runs/run_x/events?limit=abc`).expect(400);
    expect(badEvents.body.error.message).toContain('query.limit');
  });

  it('lists tools with JSON-schema definitions and runs host-direct calls', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const tools = (await request(t.url).get(`/v1/sessions/${id}/tools`).expect(200)).body.tools;
    expect(tools.map((x: { name: string }) => x.name).sort()).toEqual([
      'bash',
      'batch',
      'edit',
      'git',
      'glob',
      'grep',
      'ls',
      'parallel_task',
      'patch',
      'program',
      'read',
      'task',
      'web_fetch',
      'web_search',
      'write',
    ]);
    // A session with skills lists the seed's seventeen tools (its smoke test's toolNames()); ask_user (a later
    // seed tool) only when the session offers it (askUser).
    const inlineSkills = [
      {
        name: 'release-review',
        kind: 'instruction',
        description: 'Separate blockers from nits.',
        content: 'Separate blockers.',
      },
    ];
    const seed = (await request(t.url).post('/v1/sessions').send({ builtinSkills: true, inlineSkills }).expect(201))
      .body.session.id;
    const seedTools = (await request(t.url).get(`/v1/sessions/${seed}/tools`).expect(200)).body.tools.map(
      (x: { name: string }) => x.name,
    );
    expect([...seedTools].sort()).toEqual(
      [
        'read',
        'write',
        'edit',
        'patch',
        'grep',
        'glob',
        'ls',
        'bash',
        'task',
        'parallel_task',
        'search_skills',
        'Skill',
        'program',
        'git',
        'batch',
        'web_fetch',
        'web_search',
      ].sort(),
    );
    const read = tools.find((x: { name: string }) => x.name === 'read');
    expect(read.parameters).toMatchObject({ type: 'object', properties: { file_path: { type: 'string' } } });
    const result = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(result.body).toMatchObject({ exitCode: 0, truncated: false });
    expect(result.body.output).toContain('hello');
    const escape = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: '../../etc/passwd' } })
      .expect(200);
    expect(escape.body.exitCode).toBe(1);
    const badArgs = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { nope: 1 } })
      .expect(200);
    expect(badArgs.body.exitCode).toBe(1);
    expect(badArgs.body.output).toContain('file_path');
  });
});

async function waitForRun(t: TestServer, sessionId: string, runId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const run = (await request(t.url).get(`/v1/sessions/${sessionId}/runs/${runId}`).expect(200)).body.run;
    if (['completed', 'failed', 'cancelled'].includes(run.status)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('run did not finish');
}
