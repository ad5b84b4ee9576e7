import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';
import { subscribe } from '../support/ws-client.js';
import { toolMessage } from '../support/run-helpers.js';

async function events(t: TestServer, id: string, runId: string) {
  return (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}/events?after=-1&limit=1000`).expect(200)).body
    .events as { type: string; payload: Record<string, unknown> }[];
}

describe('hooks over REST: webhooks and WebSocket hosts, gating and observing', () => {
  let t: TestServer;
  let hooks: WebhookServer;
  beforeAll(async () => {
    hooks = await startWebhookServer({
      '/block': { body: { action: 'block', reason: 'no shells today' } },
      '/slow': { body: { action: 'continue' }, delayMs: 2000 },
      '/fail': { status: 500, body: 'boom' },
      '/rewrite': (body) => ({
        body: {
          action: 'continue',
          modified: { ...(body.args as Record<string, unknown>), command: 'echo rewritten' },
        },
      }),
      '/observe': { body: { action: 'continue' } },
      '/observe-fail': { status: 500, body: 'observer down' },
      '/retry-once': (body) => ({
        body: body.attempt === 0 ? { action: 'retry', reason: 'not ready' } : { action: 'continue' },
      }),
      '/retry-always': { body: { action: 'retry', reason: 'never ready' } },
    });
    t = await startTestServer({ files: { 'a.txt': 'alpha\n' } });
  });
  afterAll(async () => {
    await t.close();
    await hooks.close();
  });

  async function sessionWithHook(hook: Record<string, unknown>) {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const created = await request(t.url).post(`/v1/sessions/${id}/hooks`).send(hook).expect(201);
    return { id, hookId: created.body.hook.id as string };
  }

  it('a blocking pre_tool_use webhook stops matching calls only; the model sees the reason', async () => {
    const { id, hookId } = await sessionWithHook({
      event: 'pre_tool_use',
      matcher: { tool: 'bash' },
      endpoint: { type: 'webhook', url: hooks.url('/block') },
    });
    t.fake.script(
      {
        toolCalls: [
          { id: 'h_bash', name: 'bash', arguments: { command: 'echo hi' } },
          { id: 'h_read', name: 'read', arguments: { file_path: 'a.txt' } },
        ],
      },
      { text: 'ok' },
    );
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    expect(toolMessage(t, 'h_bash')).toContain(`blocked by hook ${hookId}: no shells today`);
    expect(toolMessage(t, 'h_read')).toContain('alpha');
    const blocked = (await events(t, id, run.body.runId)).find((e) => e.type === 'hook_blocked');
    expect(blocked?.payload).toMatchObject({ tool_id: 'h_bash', hook_id: hookId });
    const received = hooks.on('/block');
    expect(received.at(-1)?.body).toMatchObject({ kind: 'pre_tool_use', tool: 'bash', args: { command: 'echo hi' } });
    t.fake.assertDone();
  });

  it('gating hooks fail closed: a slow hook (timeout) and a failing hook block', async () => {
    const slow = await sessionWithHook({
      event: 'pre_tool_use',
      timeoutMs: 200,
      endpoint: { type: 'webhook', url: hooks.url('/slow') },
    });
    const out = await request(t.url)
      .post(`/v1/sessions/${slow.id}/tools/read/governed`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(out.body.exitCode).toBe(1);
    expect(out.body.output).toMatch(/blocked by hook .*no answer within 200 ms/);
    const failing = await sessionWithHook({
      event: 'pre_tool_use',
      endpoint: { type: 'webhook', url: hooks.url('/fail') },
    });
    const out2 = await request(t.url)
      .post(`/v1/sessions/${failing.id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(out2.body.exitCode).toBe(1);
    expect(out2.body.output).toContain('blocked by hook');
  });

  it('a retry answer asks the hook again, a bounded number of times', async () => {
    const once = await sessionWithHook({
      event: 'pre_tool_use',
      endpoint: { type: 'webhook', url: hooks.url('/retry-once') },
    });
    expect(
      (
        await request(t.url)
          .post(`/v1/sessions/${once.id}/tools/read`)
          .send({ args: { file_path: 'a.txt' } })
          .expect(200)
      ).body.exitCode,
    ).toBe(0);
    const always = await sessionWithHook({
      event: 'pre_tool_use',
      endpoint: { type: 'webhook', url: hooks.url('/retry-always') },
    });
    const blocked = await request(t.url)
      .post(`/v1/sessions/${always.id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(blocked.body.exitCode).toBe(1);
    expect(blocked.body.output).toContain('retry more than 2 times');
    expect(hooks.on('/retry-always')).toHaveLength(3);
  });

  it('a continue answer with modified args changes the call (re-validated)', async () => {
    const { id } = await sessionWithHook({
      event: 'pre_tool_use',
      matcher: { commandPattern: 'echo *' },
      endpoint: { type: 'webhook', url: hooks.url('/rewrite') },
    });
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/tools/bash`)
      .send({ args: { command: 'echo original' } })
      .expect(200);
    expect(out.body.output).toContain('rewritten');
    expect(out.body.output).not.toContain('original');
  });

  it('observing hooks see post_tool_use and never block, even when failing', async () => {
    const { id } = await sessionWithHook({
      event: 'post_tool_use',
      endpoint: { type: 'webhook', url: hooks.url('/observe') },
    });
    await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'post_tool_use', endpoint: { type: 'webhook', url: hooks.url('/observe-fail') } })
      .expect(201);
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(out.body.exitCode).toBe(0);
    for (let i = 0; i < 100 && hooks.on('/observe').length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(hooks.on('/observe').at(-1)?.body).toMatchObject({
      kind: 'post_tool_use',
      tool: 'read',
      result: { exit_code: 0 },
    });
  });

  it('lists and removes hooks; unknown ids are 404; bad bodies name the field', async () => {
    const { id, hookId } = await sessionWithHook({
      event: 'pre_tool_use',
      priority: 5,
      endpoint: { type: 'webhook', url: hooks.url('/block') },
    });
    const list = (await request(t.url).get(`/v1/sessions/${id}/hooks`).expect(200)).body.hooks;
    expect(list).toEqual([expect.objectContaining({ id: hookId, event: 'pre_tool_use', priority: 5 })]);
    await request(t.url).delete(`/v1/sessions/${id}/hooks/${hookId}`).expect(200);
    await request(t.url).delete(`/v1/sessions/${id}/hooks/${hookId}`).expect(404);
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(out.body.exitCode).toBe(0);
    const bad = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'nope', endpoint: { type: 'webhook', url: hooks.url('/x') } })
      .expect(400);
    expect(bad.body.error.message).toContain('body.event');
    const badUrl = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'file:///etc/passwd' } })
      .expect(400);
    expect(badUrl.body.error.message).toContain('endpoint.url');
  });

  it('a WebSocket-attached host answers hook_request frames', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const host = await subscribe(t.url, id);
    const raw: Record<string, unknown>[] = [];
    host.socket.on('message', (data) => raw.push(JSON.parse(data.toString()) as Record<string, unknown>));
    host.send({ type: 'host_register' });
    const registered = await host.waitFor((e) => e.type === 'host_registered');
    const connectionId = String(registered.payload.connection_id);
    const created = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'pre_tool_use', matcher: { tool: 'write' }, endpoint: { type: 'websocket', connectionId } })
      .expect(201);
    const call = request(t.url)
      .post(`/v1/sessions/${id}/tools/write`)
      .send({ args: { file_path: 'x.txt', content: 'x' } })
      .then((r) => r);
    let hookRequest: Record<string, unknown> | undefined;
    for (let i = 0; i < 200 && !hookRequest; i++) {
      hookRequest = raw.find((f) => f.type === 'hook_request');
      if (!hookRequest) await new Promise((r) => setTimeout(r, 10));
    }
    expect(hookRequest).toMatchObject({
      kind: 'pre_tool_use',
      payload: expect.objectContaining({ tool: 'write', hook_id: created.body.hook.id }),
    });
    host.send({ type: 'hook_response', request_id: hookRequest?.request_id, action: 'block', reason: 'host says no' });
    const result = await call;
    expect(result.body.exitCode).toBe(1);
    expect(result.body.output).toContain('host says no');
    // Once the host disconnects, its gating hook keeps blocking (fail closed) until it is removed.
    host.close();
    await host.closed;
    const after = await request(t.url)
      .post(`/v1/sessions/${id}/tools/write`)
      .send({ args: { file_path: 'y.txt', content: 'y' } })
      .expect(200);
    expect(after.body.exitCode).toBe(1);
    const unknownConn = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn_nope' } })
      .expect(400);
    expect(unknownConn.body.error.message).toContain('connectionId');
  });

  it('a pre_prompt hook can block a run', async () => {
    const { id } = await sessionWithHook({
      event: 'pre_prompt',
      endpoint: { type: 'webhook', url: hooks.url('/block') },
    });
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'hello', wait: true }).expect(200);
    expect(run.body.run.status).toBe('failed');
    expect(run.body.run.error).toMatchObject({ code: 'BLOCKED_BY_HOOK' });
  });
});

describe('budgets', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      files: { 'a.txt': 'alpha\n' },
      config: { tenantBudgets: { default: { maxToolCalls: 1000 } } },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('denies tool calls past maxToolCalls with BUDGET_EXHAUSTED, soft-warns before, and host-direct calls count too', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ budget: { maxToolCalls: 3, softRatio: 0.5 } })
        .expect(201)
    ).body.session.id;
    await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    t.fake.script(
      {
        toolCalls: [
          { id: 'b1', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'b2', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'b3', name: 'ls', arguments: {} },
        ],
      },
      { text: 'done' },
    );
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    expect(toolMessage(t, 'b1')).toContain('alpha');
    expect(toolMessage(t, 'b3')).toContain('BUDGET_EXHAUSTED: tool_calls');
    const evs = await events(t, id, run.body.runId);
    expect(evs.some((e) => e.type === 'budget_threshold_hit' && e.payload.kind === 'soft')).toBe(true);
    expect(evs.find((e) => e.type === 'budget_exhausted')?.payload).toMatchObject({
      resource: 'tool_calls',
      scope: 'session',
    });
    const direct = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(direct.body.output).toContain('BUDGET_EXHAUSTED');
    t.fake.assertDone();
  });

  it('denies a provider call once maxTokens is used up; the run fails with BUDGET_EXHAUSTED', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ budget: { maxTokens: 100000 } })
        .expect(201)
    ).body.session.id;
    t.fake.script({
      toolCalls: [{ id: 'tk1', name: 'read', arguments: { file_path: 'a.txt' } }],
      usage: { prompt_tokens: 99990, completion_tokens: 5 },
    });
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    expect(run.body.run.status).toBe('failed');
    expect(run.body.run.error).toMatchObject({ code: 'BUDGET_EXHAUSTED' });
    expect((await events(t, id, run.body.runId)).find((e) => e.type === 'budget_exhausted')?.payload).toMatchObject({
      resource: 'llm_tokens',
      kind: 'hard',
    });
    // Only the first provider call was made: the second was refused before it reached the provider.
    const info = (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session;
    expect(info.llmCalls).toBe(1);
    t.fake.assertDone();
  });

  it('tenant budgets are shared by the tenant sessions', async () => {
    const t2 = await startTestServer({
      files: { 'a.txt': 'alpha\n' },
      config: { tenantBudgets: { default: { maxToolCalls: 2 } } },
    });
    try {
      const a = (await request(t2.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
      const b = (await request(t2.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
      await request(t2.url)
        .post(`/v1/sessions/${a}/tools/read`)
        .send({ args: { file_path: 'a.txt' } })
        .expect(200);
      await request(t2.url)
        .post(`/v1/sessions/${b}/tools/read`)
        .send({ args: { file_path: 'a.txt' } })
        .expect(200);
      const third = await request(t2.url)
        .post(`/v1/sessions/${a}/tools/read`)
        .send({ args: { file_path: 'a.txt' } })
        .expect(200);
      expect(third.body.output).toMatch(/BUDGET_EXHAUSTED: tool_calls: .*tenant/);
    } finally {
      await t2.close();
    }
  });

  it('a budget host webhook is asked before tool and provider calls; deny and a hanging host both refuse', async () => {
    const host = await startWebhookServer({
      '/deny-tools': (body) => ({
        body:
          body.phase === 'tool'
            ? { decision: 'deny', resource: 'tool_calls', reason: 'host says no tools' }
            : { decision: 'allow' },
      }),
      '/hang': { body: { decision: 'allow' }, delayMs: 3000 },
    });
    try {
      const id = (
        await request(t.url)
          .post('/v1/sessions')
          .send({ budgetHost: { url: host.url('/deny-tools') } })
          .expect(201)
      ).body.session.id;
      const denied = await request(t.url)
        .post(`/v1/sessions/${id}/tools/read`)
        .send({ args: { file_path: 'a.txt' } })
        .expect(200);
      expect(denied.body.output).toMatch(/BUDGET_EXHAUSTED: tool_calls: .*host says no tools/);
      expect(host.on('/deny-tools').at(-1)?.body).toMatchObject({
        kind: 'budget_check',
        phase: 'tool',
        session_id: id,
      });
      const hung = (
        await request(t.url)
          .post('/v1/sessions')
          .send({ budgetHost: { url: host.url('/hang'), timeoutMs: 200 } })
          .expect(201)
      ).body.session.id;
      const run = await request(t.url).post(`/v1/sessions/${hung}/runs`).send({ input: 'x', wait: true }).expect(200);
      expect(run.body.run.error).toMatchObject({ code: 'BUDGET_EXHAUSTED' });
    } finally {
      await host.close();
    }
  });

  it('a WebSocket-attached budget host answers budget_check requests; removing it restores the built-in limits', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const host = await subscribe(t.url, id);
    const raw: Record<string, unknown>[] = [];
    host.socket.on('message', (data) => raw.push(JSON.parse(data.toString()) as Record<string, unknown>));
    host.send({ type: 'host_register' });
    const connectionId = String((await host.waitFor((e) => e.type === 'host_registered')).payload.connection_id);
    await request(t.url)
      .put(`/v1/sessions/${id}/budget-host`)
      .send({ type: 'websocket', connectionId: 'conn_unknown' })
      .expect(400);
    await request(t.url)
      .put(`/v1/sessions/${id}/budget-host`)
      .send({ type: 'websocket', connectionId, timeoutMs: 5000 })
      .expect(200);
    const call = request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .then((r) => r);
    let ask: Record<string, unknown> | undefined;
    for (let i = 0; i < 200 && !ask; i++) {
      ask = raw.find((f) => f.type === 'hook_request' && f.kind === 'budget_check');
      if (!ask) await new Promise((r) => setTimeout(r, 10));
    }
    expect(ask?.payload).toMatchObject({ session_id: id, phase: 'tool' });
    host.send({
      type: 'hook_response',
      request_id: ask?.request_id,
      decision: 'deny',
      resource: 'tool_calls',
      reason: 'ws host says no',
    });
    expect((await call).body.output).toContain('ws host says no');
    await request(t.url).delete(`/v1/sessions/${id}/budget-host`).expect(200);
    expect(
      (
        await request(t.url)
          .post(`/v1/sessions/${id}/tools/read`)
          .send({ args: { file_path: 'a.txt' } })
          .expect(200)
      ).body.exitCode,
    ).toBe(0);
    host.close();
  });

  it('every provider call goes through the one LLM invoker', async () => {
    const id = (
      await request(t.url).post('/v1/sessions').send({ continuationEnabled: true, maxContinuationTurns: 1 }).expect(201)
    ).body.session.id;
    const before = t.fake.requests.length;
    t.fake.script(
      { toolCalls: [{ id: 'cnt', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { text: 'part', finishReason: 'length' },
      { text: 'rest' },
    );
    await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    const info = (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session;
    expect(info.llmCalls).toBe(t.fake.requests.length - before);
    expect(info.llmCalls).toBe(3);
    t.fake.assertDone();
  });
});
