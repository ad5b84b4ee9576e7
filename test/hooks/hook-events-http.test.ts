import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { createSession, eventually, ofType, runAndWait, runEvents, startRun } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';
import { subscribe } from '../support/ws-client.js';

// The hook events of SEED-REFERENCE §8 beyond the first eleven, each through a real webhook receiver (and one
// through a WebSocket host), plus the seed's engine options: priority, asyncExecution, maxRetries, timeoutMs.

const arrivals: Record<string, number[]> = {};
let flakyCalls = 0;

describe('hook events over HTTP: triggers and payloads', () => {
  let t: TestServer;
  let fake: FakeProvider;
  let hooks: WebhookServer;
  beforeAll(async () => {
    hooks = await startWebhookServer({
      '/obs': { body: { action: 'continue' } },
      '/never': { body: { action: 'continue' } },
      '/plan-rewrite': {
        body: {
          action: 'continue',
          modified: { task_description: 'summarise b.txt instead', hints: ['read the file first'] },
        },
      },
      '/block': { body: { action: 'block', reason: 'no plans today' } },
    });
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      files: { 'a.txt': 'alpha\n', 'AGENTS.md': 'Always answer briefly.\n' },
      config: {
        providers: {
          openai: {
            apiKey: 'sk-test',
            baseUrl: fake.baseUrl,
            maxRetries: 1,
            models: { 'test-model': {}, reasoner: { reasoning: true } },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await hooks.close();
  });

  async function hook(id: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return (await request(t.url).post(`/v1/sessions/${id}/hooks`).send(body).expect(201)).body.hook;
  }
  const webhook = (path: string) => ({ type: 'webhook', url: hooks.url(path) });
  const received = (event: string, sessionId: string) =>
    hooks.requests.filter((r) => r.body.kind === event && r.body.session_id === sessionId).map((r) => r.body);

  it("what a hook is sent goes through the server's secret redactor, the rule run webhooks and traces share", async () => {
    const id = await createSession(t, {});
    await hook(id, { event: 'post_response', endpoint: webhook('/obs') });
    const leaked = 'sk-proj-abcdefghijklmnopqrstuvwx0123456789';
    t.fake.script({ text: `the key you gave me is ${leaked}` });
    await runAndWait(t, id, `remember my key ${leaked}`);
    t.fake.assertDone();
    await eventually(() => received('post_response', id).length === 1, 'the post_response hook');
    const [sent] = received('post_response', id);
    expect(sent?.response_text).toBe('the key you gave me is [REDACTED]');
    expect(JSON.stringify(hooks.requests.map((r) => r.body))).not.toContain(leaked);
  });

  it('a run tells pre/post_context_perception, pre/post_memory_recall, post_response and on_success; context_resolving/resolved frame the assembly', async () => {
    const id = await createSession(t, { memoryStore: { type: 'memory', namespace: `hooks-${Date.now()}` } });
    for (const event of [
      'pre_context_perception',
      'post_context_perception',
      'pre_memory_recall',
      'post_memory_recall',
      'post_response',
      'on_success',
    ])
      await hook(id, { event, endpoint: webhook('/obs') });
    t.fake.script({ text: 'Done hello.' });
    await runAndWait(t, id, 'hello world');
    t.fake.script({ text: 'Done again.' });
    const second = await runAndWait(t, id, 'hello world');
    t.fake.assertDone();
    await eventually(() => received('on_success', id).length === 2, 'two on_success');

    const events = await runEvents(t, id, second.runId);
    const types = events.map((e) => e.type);
    expect(types.indexOf('context_resolving')).toBeGreaterThan(types.indexOf('agent_start'));
    expect(types.indexOf('context_resolved')).toBeGreaterThan(types.indexOf('context_resolving'));
    expect(types.indexOf('turn_start')).toBeGreaterThan(types.indexOf('context_resolved'));
    expect(ofType(events, 'context_resolving')[0]?.payload).toEqual({ providers: ['agents_md', 'memory'] });
    // AGENTS.md (one item) and the first run's remembered success (one recalled item).
    const resolved = ofType(events, 'context_resolved')[0]?.payload as { total_items: number; total_tokens: number };
    expect(resolved.total_items).toBe(2);
    expect(resolved.total_tokens).toBeGreaterThan(5);

    const pre = received('pre_context_perception', id);
    expect(pre[1]).toMatchObject({ run_id: second.runId, prompt: 'hello world', providers: ['agents_md', 'memory'] });
    expect(received('post_context_perception', id)[1]).toMatchObject({
      run_id: second.runId,
      total_items: 2,
      total_tokens: resolved.total_tokens,
    });
    expect(received('pre_memory_recall', id)[1]).toMatchObject({ query: 'hello world', tags: [], limit: 5 });
    expect(received('post_memory_recall', id).map((b) => b.items_count)).toEqual([0, 1]);
    expect(received('post_response', id)[1]).toMatchObject({
      run_id: second.runId,
      response_text: 'Done again.',
      tool_calls_count: 0,
      status: 'completed',
      usage: { total_tokens: expect.any(Number) as unknown },
    });
    expect(received('on_success', id)[1]).toMatchObject({ run_id: second.runId, response_text: 'Done again.' });
    expect(typeof received('on_success', id)[1]?.duration_ms).toBe('number');
  });

  it('a failed run tells on_error, not on_success; a session without hooks still gets the context events', async () => {
    const id = await createSession(t);
    await hook(id, { event: 'on_success', endpoint: webhook('/obs') });
    await hook(id, { event: 'on_error', endpoint: webhook('/obs') });
    t.fake.script({ error: { status: 400, message: 'bad request' } });
    await runAndWait(t, id, 'fail please');
    await eventually(() => received('on_error', id).length === 1, 'on_error');
    expect(received('on_success', id)).toEqual([]);

    const plain = await createSession(t);
    t.fake.script({ text: 'ok' });
    const run = await runAndWait(t, plain, 'no hooks here');
    const events = await runEvents(t, plain, run.runId);
    expect(ofType(events, 'context_resolving')[0]?.payload).toEqual({ providers: ['agents_md'] });
    expect(ofType(events, 'context_resolved')[0]?.payload).toMatchObject({ total_items: 1 });
  });

  it('skill_load/skill_unload: a Skill activation, a skill added and removed; the skill matcher is a glob', async () => {
    const id = await createSession(t, {
      permissionPolicy: { allow: ['Skill', 'read'] },
      inlineSkills: [{ name: 'reviewer', description: 'Reviews', content: 'Review it.', allowedTools: 'read(*)' }],
    });
    await hook(id, { event: 'skill_load', matcher: { skill: 'rev*' }, endpoint: webhook('/obs') });
    await hook(id, { event: 'skill_unload', endpoint: webhook('/obs') });
    await hook(id, { id: 'never', event: 'skill_load', matcher: { skill: 'deploy*' }, endpoint: webhook('/never') });
    t.fake.script(
      { toolCalls: [{ id: 'sk1', name: 'Skill', arguments: { skill_name: 'reviewer', prompt: 'review a.txt' } }] },
      { text: 'reviewed' },
      { text: 'ok' },
    );
    await runAndWait(t, id, 'use the reviewer');
    t.fake.assertDone();
    await eventually(() => received('skill_unload', id).length === 1, 'skill_unload');
    expect(received('skill_load', id)).toEqual([
      expect.objectContaining({
        skill_name: 'reviewer',
        skill_kind: 'instruction',
        source: 'inline',
        trigger: 'skill_tool',
        tool_id: 'sk1',
      }),
    ]);
    expect(received('skill_unload', id)[0]).toMatchObject({
      skill_name: 'reviewer',
      trigger: 'skill_tool',
      status: 'completed',
    });

    await request(t.url)
      .post(`/v1/sessions/${id}/skills`)
      .send({ name: 'review-extra', description: 'More review', content: 'More.' })
      .expect(201);
    await request(t.url).delete(`/v1/sessions/${id}/skills/reviewer`).expect(200);
    await eventually(() => received('skill_unload', id).length === 2, 'skill removed');
    expect(received('skill_load', id)[1]).toMatchObject({ skill_name: 'review-extra', trigger: 'added' });
    expect(received('skill_unload', id)[1]).toMatchObject({ skill_name: 'reviewer', trigger: 'removed' });
    expect(hooks.on('/never')).toEqual([]);
  });

  it('planningMode auto: pre_planning may rewrite the task and add hints, intent_detection and post_planning tell the decision', async () => {
    const id = await createSession(t, { planningMode: 'auto' });
    await hook(id, { event: 'pre_planning', endpoint: webhook('/plan-rewrite') });
    await hook(id, { event: 'intent_detection', endpoint: webhook('/obs') });
    await hook(id, { event: 'post_planning', endpoint: webhook('/obs') });
    const analysis = JSON.stringify({
      intent: 'summarise',
      requires_planning: false,
      goal: { description: 'Summarise', success_criteria: [] },
      execution_plan: { complexity: 'Simple', steps: [] },
    });
    t.fake.script(
      {
        text: analysis,
        expect: (r) => {
          const user = String(r.body.messages.at(-1)?.content);
          expect(user).toContain('summarise b.txt instead');
          expect(user).toContain('- read the file first');
        },
      },
      { text: 'answered' },
    );
    const run = await runAndWait(t, id, 'summarise a.txt');
    t.fake.assertDone();
    await eventually(() => received('post_planning', id).length === 1, 'post_planning');
    const pre = hooks.requests.find((r) => r.body.kind === 'pre_planning' && r.body.session_id === id)?.body;
    expect(pre).toMatchObject({
      run_id: run.runId,
      task_description: 'summarise a.txt',
      available_strategies: ['pre_analysis', 'single_step', 'none'],
      planning_mode: 'auto',
    });
    expect(received('intent_detection', id)).toEqual([
      expect.objectContaining({
        run_id: run.runId,
        requires_planning: false,
        source: 'pre_analysis',
        intent: 'summarise',
      }),
    ]);
    expect(received('post_planning', id)[0]).toMatchObject({
      task_description: 'summarise b.txt instead',
      strategy_used: 'none',
      subtasks: [],
      success: true,
    });
  });

  it('a blocking pre_planning hook (gating) leaves the run unplanned with a run_warning', async () => {
    const id = await createSession(t, { planningMode: 'enabled' });
    await hook(id, { event: 'pre_planning', endpoint: webhook('/block') });
    t.fake.script({ text: 'plain answer' });
    const run = await runAndWait(t, id, 'plan something');
    t.fake.assertDone();
    expect(run.run.status).toBe('completed');
    const events = await runEvents(t, id, run.runId);
    expect(ofType(events, 'planning_start')).toEqual([]);
    expect(ofType(events, 'run_warning')[0]?.payload).toMatchObject({
      source: 'planning',
      message: expect.stringContaining('blocked by pre_planning hook') as unknown,
      fallback: 'unplanned',
    });
  });

  it('on_rate_limit: a provider 429 with its Retry-After', async () => {
    const id = await createSession(t);
    await hook(id, { event: 'on_rate_limit', endpoint: webhook('/obs') });
    t.fake.script({ error: { status: 429, message: 'slow down', headers: { 'retry-after': '1' } } }, { text: 'ok' });
    const run = await runAndWait(t, id, 'rate me');
    t.fake.assertDone();
    expect(run.run.status).toBe('completed');
    await eventually(() => received('on_rate_limit', id).length === 1, 'on_rate_limit');
    expect(received('on_rate_limit', id)[0]).toMatchObject({
      run_id: run.runId,
      provider: 'openai',
      model: 'openai/test-model',
      status: 429,
      retry_after_ms: 1000,
      attempt: 1,
      will_retry: true,
    });
  });

  it('pre_reasoning/post_reasoning: each turn of a model with reasoning on, with its reasoning text; none for other models', async () => {
    const id = await createSession(t, { model: 'openai/reasoner' });
    const plain = await createSession(t);
    for (const session of [id, plain])
      for (const event of ['pre_reasoning', 'post_reasoning'])
        await hook(session, { event, endpoint: webhook('/obs') });
    t.fake.script({ reasoning: 'Let me think.', text: 'thought' });
    const run = await runAndWait(t, id, 'think');
    t.fake.script({ text: 'plain' });
    await runAndWait(t, plain, 'do not think');
    t.fake.assertDone();
    await eventually(() => received('post_reasoning', id).length === 1, 'post_reasoning');
    expect(received('pre_reasoning', id)).toEqual([
      expect.objectContaining({ run_id: run.runId, turn: 1, model: 'openai/reasoner' }),
    ]);
    expect(received('post_reasoning', id)[0]).toMatchObject({ turn: 1, reasoning_text: 'Let me think.' });
    expect(received('pre_reasoning', plain)).toEqual([]);
  });

  it('on_confirmation through a WebSocket host: approved, timed out and cancelled confirmations', async () => {
    const id = await createSession(t, {
      permissionPolicy: { ask: ['bash'] },
      confirmationPolicy: { enabled: true, defaultTimeoutMs: 300, timeoutAction: 'reject' },
    });
    const host = await subscribe(t.url, id);
    const frames: Record<string, unknown>[] = [];
    host.socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (frame.type !== 'hook_request') return;
      frames.push(frame);
      host.send({ type: 'hook_response', request_id: frame.request_id, action: 'continue' });
    });
    host.send({ type: 'host_register' });
    const connectionId = String((await host.waitFor((e) => e.type === 'host_registered')).payload.connection_id);
    await hook(id, { event: 'on_confirmation', endpoint: { type: 'websocket', connectionId } });
    t.fake.script(
      { toolCalls: [{ id: 'c_ok', name: 'bash', arguments: { command: 'true' } }] },
      { toolCalls: [{ id: 'c_late', name: 'bash', arguments: { command: 'true' } }] },
      { toolCalls: [{ id: 'c_cancel', name: 'bash', arguments: { command: 'true' } }] },
    );
    const runId = await startRun(t, id, 'confirm things');
    const pending = async (toolId: string) =>
      eventually(
        async () =>
          (
            (await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations as {
              toolId: string;
            }[]
          ).some((c) => c.toolId === toolId),
        `confirmation ${toolId}`,
      );
    await pending('c_ok');
    await request(t.url).post(`/v1/sessions/${id}/confirmations/c_ok`).send({ approved: true }).expect(200);
    await pending('c_cancel');
    await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).send({}).expect(200);
    await eventually(() => frames.length === 3, 'three on_confirmation frames');
    expect(frames.map((f) => f.kind)).toEqual(['on_confirmation', 'on_confirmation', 'on_confirmation']);
    expect(frames.map((f) => (f.payload as Record<string, unknown>).outcome)).toEqual([
      'approved',
      'timeout',
      'cancelled',
    ]);
    expect(frames[1]?.payload).toMatchObject({ tool_id: 'c_late', tool_name: 'bash', action_taken: 'rejected' });
    host.close();
  });
});

describe("hook engine options over HTTP: the seed's priority, asyncExecution, maxRetries and 30 s timeout", () => {
  let t: TestServer;
  let hooks: WebhookServer;
  beforeAll(async () => {
    hooks = await startWebhookServer({
      '/slow': () => {
        (arrivals['/slow2'] ??= []).push(Date.now());
        return { body: { action: 'continue' }, delayMs: 600 };
      },
      '/fast': () => {
        (arrivals['/fast2'] ??= []).push(Date.now());
        return { body: { action: 'continue' } };
      },
      '/flaky': () => (++flakyCalls % 2 === 1 ? { status: 500, body: 'down' } : { body: { action: 'continue' } }),
    });
    t = await startTestServer({ files: { 'a.txt': 'alpha\n' } });
  });
  afterAll(async () => {
    await t.close();
    await hooks.close();
  });

  it("defaults are the seed's: priority 100, timeoutMs 30000, asyncExecution false, maxRetries 0", async () => {
    const id = await createSession(t);
    const created = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'on_success', endpoint: { type: 'webhook', url: hooks.url('/fast') } })
      .expect(201);
    expect(created.body.hook).toMatchObject({ priority: 100, timeoutMs: 30_000, asyncExecution: false, maxRetries: 0 });
    const bad = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'on_success', maxRetries: 99, endpoint: { type: 'webhook', url: hooks.url('/fast') } })
      .expect(400);
    expect(bad.body.error.message).toContain('body.maxRetries');
    const unknownEvent = await request(t.url)
      .post(`/v1/sessions/${id}/hooks`)
      .send({ event: 'on_everything', endpoint: { type: 'webhook', url: hooks.url('/fast') } })
      .expect(400);
    expect(unknownEvent.body.error.message).toContain('body.event');
  });

  it('observing hooks are told in priority order, each waiting for the one before, unless asyncExecution', async () => {
    const sync = await createSession(t);
    // Registered fast first, but the slow one has the lower priority: it is told first, the fast one after its answer.
    for (const [path, priority] of [
      ['/fast', 20],
      ['/slow', 10],
    ] as const)
      await request(t.url)
        .post(`/v1/sessions/${sync}/hooks`)
        .send({ event: 'post_tool_use', priority, endpoint: { type: 'webhook', url: hooks.url(path) } })
        .expect(201);
    await request(t.url)
      .post(`/v1/sessions/${sync}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    await eventually(() => (arrivals['/fast2'] ?? []).length === 1, 'fast hook told');
    const slowAt = arrivals['/slow2']![0]!;
    expect(arrivals['/fast2']![0]! - slowAt).toBeGreaterThanOrEqual(550);

    const async = await createSession(t);
    for (const [path, priority] of [
      ['/fast', 20],
      ['/slow', 10],
    ] as const)
      await request(t.url)
        .post(`/v1/sessions/${async}/hooks`)
        .send({
          event: 'post_tool_use',
          priority,
          asyncExecution: true,
          endpoint: { type: 'webhook', url: hooks.url(path) },
        })
        .expect(201);
    await request(t.url)
      .post(`/v1/sessions/${async}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    await eventually(() => (arrivals['/fast2'] ?? []).length === 2, 'fast hook told again');
    expect(arrivals['/fast2']![1]! - arrivals['/slow2']![1]!).toBeLessThan(500);
  });

  it('maxRetries repeats a failed gating request before it blocks', async () => {
    const retried = await createSession(t);
    await request(t.url)
      .post(`/v1/sessions/${retried}/hooks`)
      .send({ event: 'pre_tool_use', maxRetries: 1, endpoint: { type: 'webhook', url: hooks.url('/flaky') } })
      .expect(201);
    flakyCalls = 0;
    const ok = await request(t.url)
      .post(`/v1/sessions/${retried}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(ok.body.exitCode).toBe(0);
    expect(flakyCalls).toBe(2);

    const strict = await createSession(t);
    await request(t.url)
      .post(`/v1/sessions/${strict}/hooks`)
      .send({ event: 'pre_tool_use', endpoint: { type: 'webhook', url: hooks.url('/flaky') } })
      .expect(201);
    flakyCalls = 0;
    const blocked = await request(t.url)
      .post(`/v1/sessions/${strict}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(blocked.body.exitCode).toBe(1);
    expect(blocked.body.output).toContain('blocked by hook');
    expect(flakyCalls).toBe(1);
  });
});
