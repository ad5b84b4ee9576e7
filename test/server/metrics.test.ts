import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOOL_LABELS, RuntimeMetrics } from '../../src/server/runtime-metrics.js';
import { useTestServers } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const USER = 'token-tenant-a-sessions-0001';
const ADMIN = 'token-admin-all-tenants-0001';

/** One sample line of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parse Prometheus text exposition; throws on a line that is neither a comment nor a sample. */
function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[label[1] as string] = label[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with exactly these labels, or undefined. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const keys = Object.keys(labels);
  const found = samples.filter(
    (s) =>
      s.name === name && Object.keys(s.labels).length === keys.length && keys.every((k) => s.labels[k] === labels[k]),
  );
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

async function scrape(t: TestServer, token?: string): Promise<{ samples: Sample[]; text: string }> {
  const req = request(t.url).get('/metrics');
  if (token) req.set('authorization', `Bearer ${token}`);
  const res = await req.expect(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return { samples: parsePrometheus(res.text), text: res.text };
}

describe('GET /metrics', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      files: { 'tenant-a/a.txt': 'hello metrics\n' },
      config: {
        apiTokens: [
          { token: USER, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
          { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
        ],
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('needs a token (401) with the admin scope (403)', async () => {
    const missing = await request(t.url).get('/metrics').expect(401);
    expect(missing.body.error.code).toBe('UNAUTHORIZED');
    const forbidden = await request(t.url).get('/metrics').set('authorization', `Bearer ${USER}`).expect(403);
    expect(forbidden.body.error).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'admin' } });
  });

  it('reports live sessions, HTTP requests by route pattern, finished runs, tool, provider and event counters', async () => {
    const asUser = (r: request.Test) => r.set('authorization', `Bearer ${USER}`);
    const before = await scrape(t, ADMIN);
    expect(value(before.samples, 'a3s_sessions_live')).toBe(0);
    expect(value(before.samples, 'a3s_runs_finished_total', { status: 'completed' })).toBe(0);
    expect(value(before.samples, 'a3s_websocket_connections')).toBe(0);
    // Default process metrics are in the same registry.
    expect(value(before.samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(before.text).toContain('# TYPE nodejs_heap_size_total_bytes gauge');

    const created = await asUser(request(t.url).post('/v1/sessions')).send({ sessionId: 'metrics-a' }).expect(201);
    expect(created.body.session.id).toBe('metrics-a');
    await asUser(request(t.url).post('/v1/sessions')).send({ sessionId: 'metrics-b' }).expect(201);
    await request(t.url).get('/no/such/route').set('authorization', `Bearer ${USER}`).expect(404);

    t.fake.script(
      {
        toolCalls: [
          { id: 'ok', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'bad', name: 'read', arguments: { file_path: 'missing.txt' } },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 7 },
      },
      { text: 'Read it.', usage: { prompt_tokens: 120, completion_tokens: 3 } },
    );
    const run = await asUser(request(t.url).post('/v1/sessions/metrics-a/runs'))
      .send({ input: 'read a.txt', wait: true })
      .expect(200);
    expect(run.body.run.status).toBe('completed');
    t.fake.assertDone();

    const { samples } = await scrape(t, ADMIN);
    expect(value(samples, 'a3s_sessions_live')).toBe(2);
    expect(
      value(samples, 'a3s_http_requests_total', { method: 'POST', route: '/v1/sessions', status_code: '201' }),
    ).toBe(2);
    expect(
      value(samples, 'a3s_http_requests_total', { method: 'POST', route: '/v1/sessions/:id/runs', status_code: '200' }),
    ).toBe(1);
    expect(value(samples, 'a3s_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(
      1,
    );
    expect(value(samples, 'a3s_http_requests_total', { method: 'GET', route: '/metrics', status_code: '401' })).toBe(1);
    expect(value(samples, 'a3s_http_requests_total', { method: 'GET', route: '/metrics', status_code: '403' })).toBe(1);
    expect(value(samples, 'a3s_http_request_duration_seconds_count', { method: 'POST', route: '/v1/sessions' })).toBe(
      2,
    );
    // Route patterns, never raw URLs: no label carries a session id.
    expect(samples.filter((s) => Object.values(s.labels).some((v) => v.includes('metrics-a')))).toEqual([]);

    expect(value(samples, 'a3s_runs_finished_total', { status: 'completed' })).toBe(1);
    expect(value(samples, 'a3s_runs_finished_total', { status: 'failed' })).toBe(0);
    expect(value(samples, 'a3s_tool_calls_total', { tool: 'read', outcome: 'ok' })).toBe(1);
    expect(value(samples, 'a3s_tool_calls_total', { tool: 'read', outcome: 'error' })).toBe(1);
    expect(value(samples, 'a3s_provider_calls_total', { outcome: 'ok' })).toBe(2);
    expect(value(samples, 'a3s_provider_calls_total', { outcome: 'error' })).toBe(0);
    expect(value(samples, 'a3s_provider_tokens_total', { kind: 'prompt' })).toBe(220);
    expect(value(samples, 'a3s_provider_tokens_total', { kind: 'completion' })).toBe(10);
    expect(value(samples, 'a3s_events_emitted_total', { type: 'agent_end' })).toBe(1);
    expect(value(samples, 'a3s_events_emitted_total', { type: 'turn_start' })).toBe(2);
    expect(value(samples, 'a3s_events_emitted_total', { type: 'tool_end' })).toBe(2);

    await asUser(request(t.url).delete('/v1/sessions/metrics-b')).expect(200);
    expect(value((await scrape(t, ADMIN)).samples, 'a3s_sessions_live')).toBe(1);
  });
});

describe('metrics registries', () => {
  const server = useTestServers();

  it('are separate per server in one process', async () => {
    const one = await server();
    const two = await server();
    expect(one.server.ctx.metrics.registry).not.toBe(two.server.ctx.metrics.registry);
    await request(one.url).post('/v1/sessions').send({}).expect(201);
    await request(one.url).post('/v1/sessions').send({}).expect(201);
    await request(two.url).post('/v1/sessions').send({}).expect(201);
    const a = (await scrape(one)).samples;
    const b = (await scrape(two)).samples;
    expect(value(a, 'a3s_sessions_live')).toBe(2);
    expect(value(b, 'a3s_sessions_live')).toBe(1);
    expect(value(a, 'a3s_http_requests_total', { method: 'POST', route: '/v1/sessions', status_code: '201' })).toBe(2);
    expect(value(b, 'a3s_http_requests_total', { method: 'POST', route: '/v1/sessions', status_code: '201' })).toBe(1);
  });

  it(`caps tool name labels at ${MAX_TOOL_LABELS} distinct names, counting the rest as "other"`, async () => {
    const metrics = new RuntimeMetrics({ liveSessions: () => 0 });
    try {
      for (let i = 0; i < MAX_TOOL_LABELS + 50; i++) {
        metrics.observeEvent('tool_end', {
          id: `c${i}`,
          name: `mcp__srv__tool${i}`,
          output: '',
          exit_code: 0,
          duration_ms: 1,
          truncated: false,
        });
      }
      metrics.observeEvent('tool_end', {
        id: 'again',
        name: 'mcp__srv__tool0',
        output: '',
        exit_code: 2,
        duration_ms: 1,
        truncated: false,
      });
      const samples = parsePrometheus(await metrics.scrape()).filter((s) => s.name === 'a3s_tool_calls_total');
      expect(new Set(samples.map((s) => s.labels.tool)).size).toBe(MAX_TOOL_LABELS + 1);
      expect(value(samples, 'a3s_tool_calls_total', { tool: 'other', outcome: 'ok' })).toBe(50);
      expect(value(samples, 'a3s_tool_calls_total', { tool: 'mcp__srv__tool0', outcome: 'error' })).toBe(1);
    } finally {
      metrics.close();
    }
  });
});
