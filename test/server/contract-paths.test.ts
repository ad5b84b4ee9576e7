import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, inject, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { eventually, runEvents, useTestServers } from '../support/run-helpers.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import type { TestServer } from '../support/test-server.js';
import { sessionKey } from '../../src/stores/session-key.js';

// Contract paths of API.md that no other test covers: resume without a durable checkpoint store,
// readiness and admission while draining or with the store down, the host_direct scope of programs,
// and the request body limit.

const SESSIONS = 'token-contract-sessions-0001';
const HOST = 'token-contract-hostdirect-01';
const TOKENS = [
  { token: SESSIONS, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: HOST, principal: 'alice-ci', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
];

interface ErrorEnvelope {
  error: { code: string; message: string; details: Record<string, unknown> };
}

/** The body is exactly the error envelope with this code (and a non-empty message). */
function expectError(body: unknown, code: string, details: Record<string, unknown> = {}): void {
  expect(Object.keys(body as object)).toEqual(['error']);
  const { error } = body as ErrorEnvelope;
  expect(error).toEqual({ code, message: expect.any(String), details: expect.objectContaining(details) });
  expect(error.message.length).toBeGreaterThan(0);
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('POST /v1/sessions/:id/runs/:runId/resume without a durable checkpoint store', () => {
  const start = useTestServers();

  /** A session whose one run did a tool round (a checkpoint was saved) and then completed. */
  async function ranWithToolRound(
    t: TestServer,
    sessionId: string,
  ): Promise<{ runId: string; events: EventEnvelope[] }> {
    await request(t.url).post('/v1/sessions').send({ sessionId }).expect(201);
    t.fake.script({ toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] }, { text: 'done' });
    const run = await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .send({ input: 'read it', wait: true })
      .expect(200);
    const runId = run.body.runId as string;
    return { runId, events: await runEvents(t, sessionId, runId) };
  }

  it('answers 409 SESSION_STORE_REQUIRED when the server keeps checkpoints in memory, and starts no run', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' }, config: { storageBackend: 'memory' } });
    const { runId, events } = await ranWithToolRound(t, 'mem');
    // The checkpoint went to the memory store: there is nothing another process could resume from.
    expect(events.find((e) => e.type === 'checkpoint_saved')?.payload).toMatchObject({ store: 'memory' });
    const requestsBefore = t.fake.requests.length;

    for (const id of [runId, 'run_unknown']) {
      const res = await request(t.url).post(`/v1/sessions/mem/runs/${id}/resume`).send({}).expect(409);
      expectError(res.body, 'SESSION_STORE_REQUIRED', { storageBackend: 'memory' });
      // The seed's message, which hosts branch on ("fall back to a new session").
      expect(res.body.error.message).toMatch(/^resume_run requires a session_store/);
      const waited = await request(t.url).post(`/v1/sessions/mem/runs/${id}/resume`).send({ wait: true }).expect(409);
      expectError(waited.body, 'SESSION_STORE_REQUIRED', { storageBackend: 'memory' });
    }
    const runs = (await request(t.url).get('/v1/sessions/mem/runs').expect(200)).body.runs as { runId: string }[];
    expect(runs.map((r) => r.runId)).toEqual([runId]);
    expect((await request(t.url).get('/v1/sessions/mem').expect(200)).body.session.busy).toBe(false);
    expect(t.fake.requests).toHaveLength(requestsBefore);
    t.fake.assertDone();
  });

  it('the same request on a file-backed server is not refused for the store (404 CHECKPOINT_NOT_FOUND for a finished run)', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const { runId, events } = await ranWithToolRound(t, 'file');
    expect(events.find((e) => e.type === 'checkpoint_saved')?.payload).toMatchObject({ store: 'file' });
    const res = await request(t.url).post(`/v1/sessions/file/runs/${runId}/resume`).send({}).expect(404);
    expectError(res.body, 'CHECKPOINT_NOT_FOUND', { runId });
    // The seed's message, which hosts branch on ("retry later, or treat the run as lost").
    expect(res.body.error.message).toContain(`no loop checkpoint found for run '${runId}'`);
    t.fake.assertDone();
  });
});

describe('readiness and admission while draining', () => {
  const start = useTestServers();

  it('GET /readyz answers 200 until shutdown begins, then 503; both probes need no token; new sessions, runs and resumes get 503 SHUTTING_DOWN', async () => {
    const t = await start({ config: { apiTokens: TOKENS } });
    const ready = await request(t.url).get('/readyz').expect(200);
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { store: true, admitting: true },
      sandbox: expect.any(String),
    });
    await request(t.url).get('/healthz').expect(200);
    await request(t.url).post('/v1/sessions').set(bearer(SESSIONS)).send({ sessionId: 'before' }).expect(201);

    t.server.ctx.agent.beginShutdown();

    const draining = await request(t.url).get('/readyz').expect(503);
    expect(draining.body).toEqual({
      status: 'not_ready',
      checks: { store: true, admitting: false },
      sandbox: expect.any(String),
    });
    // Liveness is not readiness: the process is alive while it drains.
    expect((await request(t.url).get('/healthz').expect(200)).body).toEqual({ status: 'ok' });

    const session = await request(t.url)
      .post('/v1/sessions')
      .set(bearer(SESSIONS))
      .send({ sessionId: 'during' })
      .expect(503);
    expectError(session.body, 'SHUTTING_DOWN');
    const anonymous = await request(t.url).post('/v1/sessions').set(bearer(SESSIONS)).send({}).expect(503);
    expectError(anonymous.body, 'SHUTTING_DOWN');
    const run = await request(t.url)
      .post('/v1/sessions/before/runs')
      .set(bearer(SESSIONS))
      .send({ input: 'hello' })
      .expect(503);
    expectError(run.body, 'SHUTTING_DOWN');
    const waited = await request(t.url)
      .post('/v1/sessions/before/runs')
      .set(bearer(SESSIONS))
      .send({ input: 'hello', wait: true })
      .expect(503);
    expectError(waited.body, 'SHUTTING_DOWN');
    const resume = await request(t.url)
      .post('/v1/sessions/before/runs/run_x/resume')
      .set(bearer(SESSIONS))
      .send({})
      .expect(503);
    expectError(resume.body, 'SHUTTING_DOWN');

    // Nothing was admitted: no new session, no run, no provider call.
    const list = (await request(t.url).get('/v1/sessions').set(bearer(SESSIONS)).expect(200)).body.sessions as {
      id: string;
    }[];
    expect(list.map((s) => s.id)).toEqual(['before']);
    expect((await request(t.url).get('/v1/sessions/before/runs').set(bearer(SESSIONS)).expect(200)).body.runs).toEqual(
      [],
    );
    expect(await t.server.ctx.store.load(sessionKey('tenant-a', 'during'))).toBeUndefined();
    expect(t.fake.requests).toHaveLength(0);
  });

  it('GET /readyz answers 503 while the Redis store is unreachable and 200 again once it is back, without a token', async () => {
    const proxy = await startTcpProxy(inject('redisUrl'));
    let started: TestServer | undefined;
    try {
      const t = await start({
        config: {
          apiTokens: TOKENS,
          redisUrl: proxy.url,
          redisKeyPrefix: `a3s-ready-${Math.random().toString(36).slice(2)}:`,
        },
      });
      started = t;
      expect((await request(t.url).get('/readyz').expect(200)).body).toEqual({
        status: 'ready',
        checks: { store: true, admitting: true },
        sandbox: expect.any(String),
      });
      proxy.cut();
      const down = await request(t.url).get('/readyz').expect(503);
      expect(down.body).toEqual({
        status: 'not_ready',
        checks: { store: false, admitting: true },
        sandbox: expect.any(String),
      });
      await request(t.url).get('/healthz').expect(200);
      proxy.restore();
      await eventually(
        async () => (await request(t.url).get('/readyz')).status === 200,
        'readiness after Redis is reachable again',
      );
      expect((await request(t.url).get('/readyz').expect(200)).body).toEqual({
        status: 'ready',
        checks: { store: true, admitting: true },
        sandbox: expect.any(String),
      });
    } finally {
      // The server closes through the proxy (it deletes its node advertisement), then the proxy goes.
      proxy.restore();
      await started?.close();
      await proxy.close();
    }
  });
});

describe('POST /v1/sessions/:id/program needs the host_direct scope', () => {
  const start = useTestServers();
  const program = (file: string) => ({
    source: `async function run(ctx) { const r = await ctx.tool('bash', { command: 'echo ran > ${file}' }); return { exitCode: r.exitCode }; }`,
  });

  it('answers 403 FORBIDDEN (details.scope host_direct) without it and runs nothing; with it the program runs', async () => {
    const t = await start({ config: { apiTokens: TOKENS } });
    await request(t.url).post('/v1/sessions').set(bearer(SESSIONS)).send({ sessionId: 'p1' }).expect(201);

    const denied = await request(t.url)
      .post('/v1/sessions/p1/program')
      .set(bearer(SESSIONS))
      .send(program('denied.txt'))
      .expect(403);
    expectError(denied.body, 'FORBIDDEN', { scope: 'host_direct' });

    // The allowed call completes after the denied one: had the denied program run at all, its file would exist by now.
    const allowed = await request(t.url)
      .post('/v1/sessions/p1/program')
      .set(bearer(HOST))
      .send(program('allowed.txt'))
      .expect(200);
    expect(allowed.body.exitCode, allowed.body.output).toBe(0);
    expect(allowed.body.metadata.script_result).toEqual({ exitCode: 0 });
    expect(existsSync(join(t.root, 'allowed.txt'))).toBe(true);
    expect(existsSync(join(t.root, 'denied.txt'))).toBe(false);
    const calls = (allowed.body.metadata.program.tool_calls as { tool_name: string }[]).map((c) => c.tool_name);
    expect(calls).toEqual(['bash']);
    expect(t.fake.requests).toHaveLength(0);
  });
});

describe('request bodies over limits.bodyLimitBytes', () => {
  const start = useTestServers();
  const LIMIT = 4096;

  /** POST a JSON body with chunked transfer encoding (no content-length), so the limit is enforced while reading. */
  function postChunked(url: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        `${url}${path}`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      const text = JSON.stringify(body);
      for (let i = 0; i < text.length; i += 1000) req.write(text.slice(i, i + 1000));
      req.end();
    });
  }

  it('POST /v1/sessions answers 413 PAYLOAD_TOO_LARGE with the error envelope and creates no session', async () => {
    const t = await start({ config: { limits: { bodyLimitBytes: LIMIT } } });
    const big = { sessionId: 'too-big', autoSave: true, guidelines: 'g'.repeat(LIMIT) };
    const res = await request(t.url).post('/v1/sessions').send(big).expect(413);
    expectError(res.body, 'PAYLOAD_TOO_LARGE');
    const chunked = await postChunked(t.url, '/v1/sessions', big);
    expect(chunked.status).toBe(413);
    expectError(chunked.body, 'PAYLOAD_TOO_LARGE');

    expectError((await request(t.url).get('/v1/sessions/too-big').expect(404)).body, 'SESSION_NOT_FOUND');
    expect((await request(t.url).get('/v1/sessions').expect(200)).body.sessions).toEqual([]);
    expect(await t.server.ctx.store.load(sessionKey('default', 'too-big'))).toBeUndefined();
    // The same options under the limit are fine.
    await request(t.url)
      .post('/v1/sessions')
      .send({ ...big, guidelines: 'g'.repeat(100) })
      .expect(201);
  });

  it('POST /v1/sessions/:id/runs answers 413 PAYLOAD_TOO_LARGE with the error envelope and starts no run', async () => {
    const t = await start({ config: { limits: { bodyLimitBytes: LIMIT } } });
    await request(t.url).post('/v1/sessions').send({ sessionId: 'r1' }).expect(201);
    const big = { input: 'x'.repeat(LIMIT), wait: true };
    const res = await request(t.url).post('/v1/sessions/r1/runs').set('Idempotency-Key', 'big-1').send(big).expect(413);
    expectError(res.body, 'PAYLOAD_TOO_LARGE');
    const chunked = await postChunked(t.url, '/v1/sessions/r1/runs', big);
    expect(chunked.status).toBe(413);
    expectError(chunked.body, 'PAYLOAD_TOO_LARGE');

    expect((await request(t.url).get('/v1/sessions/r1/runs').expect(200)).body.runs).toEqual([]);
    expect((await request(t.url).get('/v1/sessions/r1').expect(200)).body.session.busy).toBe(false);
    expect((await request(t.url).get('/v1/sessions/r1/history').expect(200)).body.messages).toEqual([]);
    expect(t.fake.requests).toHaveLength(0);
    // A run under the limit starts normally.
    t.fake.script({ text: 'small ok' });
    const ok = await request(t.url)
      .post('/v1/sessions/r1/runs')
      .send({ input: 'x'.repeat(100), wait: true })
      .expect(200);
    expect(ok.body.result.text).toBe('small ok');
    t.fake.assertDone();
  });
});
