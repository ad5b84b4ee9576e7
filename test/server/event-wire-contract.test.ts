import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCanonicalEventType, isKnownEventType } from '../../src/protocol/event-catalog.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { EVENT_PAYLOAD_SCHEMAS } from '../../src/protocol/event-registry.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';
import { subscribe, type EventSubscriber } from '../support/ws-client.js';

/**
 * The seed's payload fields of every v1 event type, copied from its catalog (SEED-REFERENCE §1.2), written
 * here by hand and not derived from src: `required` must be present under exactly these names, `optional`
 * are the seed's optional fields. Anything else in a payload is one of our additive extras.
 */
const SEED_PAYLOAD_FIELDS: Record<string, { required: string[]; optional?: string[] }> = {
  agent_start: { required: ['prompt'] },
  agent_mode_changed: { required: ['mode', 'agent', 'description'] },
  turn_start: { required: ['turn'] },
  text_delta: { required: ['text'] },
  reasoning_delta: { required: ['text'] },
  tool_start: { required: ['id', 'name'] },
  tool_input_delta: { required: ['delta'], optional: ['id'] },
  tool_request_bound: { required: ['tool_id', 'tool_name', 'snapshot'] },
  tool_execution_start: { required: ['id', 'name', 'args'] },
  tool_end: { required: ['id', 'name', 'output', 'exit_code'], optional: ['metadata', 'error_kind', 'args'] },
  tool_output_delta: { required: ['id', 'name', 'delta'] },
  turn_end: { required: ['turn', 'usage'] },
  agent_end: { required: ['text', 'usage', 'verification_summary'], optional: ['meta'] },
  error: { required: ['message'] },
  confirmation_required: { required: ['tool_id', 'tool_name', 'args', 'timeout_ms'] },
  confirmation_received: { required: ['tool_id', 'approved', 'reason'] },
  confirmation_timeout: { required: ['tool_id', 'action_taken'] },
  user_question: { required: ['question_id', 'question', 'options', 'allow_free_text'] },
  external_task_pending: { required: ['task_id', 'session_id', 'lane', 'command_type', 'payload', 'timeout_ms'] },
  external_task_completed: { required: ['task_id', 'session_id', 'success'] },
  permission_denied: { required: ['tool_id', 'tool_name', 'args', 'reason'] },
  context_resolving: { required: ['providers'] },
  context_resolved: { required: ['total_items', 'total_tokens'] },
  run_capability_bound: { required: ['call_sequence', 'snapshot'] },
  model_presentation_bound: { required: ['snapshot'] },
  model_input_bound: { required: ['snapshot'] },
  model_usage_bound: { required: ['snapshot'] },
  cognitive_context_bound: { required: ['binding'] },
  command_dead_lettered: { required: ['command_id', 'command_type', 'lane', 'error', 'attempts'] },
  command_retry: { required: ['command_id', 'command_type', 'lane', 'attempt', 'delay_ms'] },
  queue_alert: { required: ['level', 'alert_type', 'message'] },
  task_updated: { required: ['session_id', 'tasks'] },
  memory_stored: { required: ['memory_id', 'memory_type', 'importance', 'tags'] },
  memory_recalled: { required: ['memory_id', 'content', 'relevance'] },
  memories_searched: { required: ['query', 'tags', 'result_count'] },
  memory_cleared: { required: ['tier', 'count'] },
  subagent_start: {
    required: ['task_id', 'session_id', 'parent_session_id', 'agent', 'description'],
    optional: ['started_ms'],
  },
  subagent_progress: { required: ['task_id', 'session_id', 'status', 'metadata'] },
  subagent_end: { required: ['task_id', 'session_id', 'agent', 'output', 'success'], optional: ['finished_ms'] },
  planning_start: { required: ['prompt'] },
  planning_end: { required: ['plan', 'estimated_steps'] },
  step_start: { required: ['step_id', 'description', 'step_number', 'total_steps'] },
  step_end: { required: ['step_id', 'status', 'step_number', 'total_steps'] },
  goal_extracted: { required: ['goal'] },
  goal_progress: { required: ['goal', 'progress', 'completed_steps', 'total_steps'] },
  goal_achieved: { required: ['goal', 'total_steps', 'duration_ms'] },
  context_compacted: {
    required: ['session_id', 'before_messages', 'after_messages', 'percent_before'],
    optional: ['summary'],
  },
  run_control_applied: {
    required: ['request_id', 'operation', 'turn_id', 'turn_revision'],
    optional: ['input', 'reason'],
  },
  persistence_failed: { required: ['session_id', 'operation', 'error'] },
  budget_threshold_hit: { required: ['resource', 'kind', 'consumed', 'limit'], optional: ['message'] },
  passivation_requested: { required: ['reason'], optional: ['deadline_ms'] },
  peer_invocation: { required: ['from_session_id'], optional: ['from_tenant_id', 'correlation_id'] },
};

/** Names the server used before it spoke the seed's contract: none may come back as a payload field of a seed event. */
const RETIRED_NAMES: Record<string, string[]> = {
  agent_start: ['input'],
  tool_start: ['tool_id', 'tool_name'],
  tool_input_delta: ['tool_id'],
  tool_execution_start: ['tool_id', 'tool_name'],
  tool_end: ['tool_id', 'tool_name'],
  tool_output_delta: ['tool_id', 'tool_name'],
  budget_threshold_hit: ['used'],
  persistence_failed: ['message'],
};

/** Types the scenarios below must produce; a type missing here means a scenario silently stopped covering it. */
const MUST_SEE = [
  'agent_start',
  'turn_start',
  'text_delta',
  'reasoning_delta',
  'tool_start',
  'tool_input_delta',
  'tool_execution_start',
  'tool_output_delta',
  'tool_end',
  'turn_end',
  'agent_end',
  'error',
  'confirmation_required',
  'confirmation_received',
  'confirmation_timeout',
  'permission_denied',
  'budget_threshold_hit',
  'passivation_requested',
  'peer_invocation',
  'run_status_changed',
  'provider_retry',
  'checkpoint_saved',
  'session_closed',
  'hook_blocked',
  'budget_exhausted',
  'verification_started',
  'verification_completed',
  'subagent_start',
  'subagent_progress',
  'subagent_end',
];

const seen: EventEnvelope[] = [];

async function pendingConfirmation(t: TestServer, id: string): Promise<{ toolId: string }> {
  for (let i = 0; i < 200; i++) {
    const list = (await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations as {
      toolId: string;
    }[];
    if (list[0]) return list[0];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no pending confirmation');
}

describe('event wire contract: every emitted payload carries the seed fields under the seed names', () => {
  let t: TestServer;
  let fake: FakeProvider;
  let hooks: WebhookServer;
  const sockets: EventSubscriber[] = [];

  async function session(options: Record<string, unknown>): Promise<string> {
    const id = (await request(t.url).post('/v1/sessions').send(options).expect(201)).body.session.id as string;
    sockets.push(await subscribe(t.url, id, { after: 0 }));
    return id;
  }

  beforeAll(async () => {
    hooks = await startWebhookServer({ '/block': { body: { action: 'block', reason: 'not today' } } });
    // One retry per provider call (providers.openai.max_retries 1), so a failing call shows provider_retry.
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      files: { 'a.txt': 'alpha\n' },
      config: { providers: { openai: { apiKey: 'sk-test', baseUrl: fake.baseUrl, maxRetries: 1 } } },
    });

    // Text, reasoning, read + streamed bash output, a denied write: the core of one streamed turn.
    const core = await session({ permissionPolicy: { allow: ['read', 'bash'], deny: ['write'] } });
    t.fake.script(
      {
        reasoning: 'thinking',
        text: 'Looking.',
        toolCalls: [
          { id: 'c_read', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'c_bash', name: 'bash', arguments: { command: 'printf "one\\ntwo\\n"' } },
          { id: 'c_write', name: 'write', arguments: { file_path: 'b.txt', content: 'x' } },
          { id: 'c_bad', name: 'read', arguments: { file_path: 5 } },
        ],
      },
      { text: 'Done.' },
    );
    await request(t.url).post(`/v1/sessions/${core}/runs`).send({ input: 'look around', wait: true }).expect(200);

    // Confirmations: one approved over REST, one left to time out.
    const confirm = await session({
      permissionPolicy: { ask: ['bash'] },
      confirmationPolicy: { enabled: true, defaultTimeoutMs: 300, timeoutAction: 'reject' },
    });
    t.fake.script(
      { toolCalls: [{ id: 'c_ok', name: 'bash', arguments: { command: 'true' } }] },
      { toolCalls: [{ id: 'c_late', name: 'bash', arguments: { command: 'true' } }] },
      { text: 'ok' },
    );
    const running = await request(t.url).post(`/v1/sessions/${confirm}/runs`).send({ input: 'confirm' }).expect(202);
    const pending = await pendingConfirmation(t, confirm);
    await request(t.url)
      .post(`/v1/sessions/${confirm}/confirmations/${pending.toolId}`)
      .send({ approved: true })
      .expect(200);
    await sockets.at(-1)?.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === running.body.runId, 10_000);

    // Delegation: the parent's task runs an explore child that reads a file.
    const parent = await session({ permissionPolicy: { allow: ['read', 'task'] } });
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'd_task',
            name: 'task',
            arguments: { agent: 'explore', description: 'read a.txt', prompt: 'Read a.txt' },
          },
        ],
      },
      { toolCalls: [{ id: 'd_read', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { text: 'alpha' },
      { text: 'The child read alpha.' },
    );
    await request(t.url).post(`/v1/sessions/${parent}/runs`).send({ input: 'delegate', wait: true }).expect(200);

    // A retried provider failure, then a terminal one.
    const failing = await session({ circuitBreakerThreshold: 2 });
    t.fake.script({ error: { status: 500, message: 'down 1' } }, { error: { status: 500, message: 'down 2' } });
    await request(t.url).post(`/v1/sessions/${failing}/runs`).send({ input: 'fail', wait: true }).expect(200);

    // Budgets: a soft warning, then a denied tool call; a pre_tool_use hook blocks one call.
    const budgeted = await session({ budget: { maxToolCalls: 2, softRatio: 0.5 } });
    await request(t.url)
      .post(`/v1/sessions/${budgeted}/hooks`)
      .send({ event: 'pre_tool_use', matcher: { tool: 'ls' }, endpoint: { type: 'webhook', url: hooks.url('/block') } })
      .expect(201);
    t.fake.script(
      {
        toolCalls: [
          { id: 'b_ls', name: 'ls', arguments: {} },
          { id: 'b1', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'b2', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'b3', name: 'read', arguments: { file_path: 'a.txt' } },
        ],
      },
      { text: 'done' },
    );
    await request(t.url).post(`/v1/sessions/${budgeted}/runs`).send({ input: 'spend', wait: true }).expect(200);

    // A host-direct verification, host-injected cluster events (passivation closes the session).
    await request(t.url)
      .post(`/v1/sessions/${budgeted}/verifications`)
      .send({
        subject: 'docs smoke',
        commands: [{ id: 'echo', kind: 'custom', description: 'echo works', command: 'printf verify', required: true }],
      })
      .expect(201);
    await request(t.url)
      .post(`/v1/sessions/${budgeted}/cluster-events`)
      .send({ type: 'budget_threshold_hit', payload: { resource: 'usd_cost', kind: 'soft', consumed: 8, limit: 10 } })
      .expect(202);
    await request(t.url)
      .post(`/v1/sessions/${budgeted}/cluster-events`)
      .send({ type: 'peer_invocation', payload: { from_session_id: 'other' } })
      .expect(202);
    await request(t.url)
      .post(`/v1/sessions/${budgeted}/cluster-events`)
      .send({ type: 'passivation_requested', payload: { reason: 'manual' } })
      .expect(202);
    await sockets.at(-1)?.waitFor((e) => e.type === 'session_closed', 10_000);
    t.fake.assertDone();
    for (const socket of sockets) seen.push(...socket.events);
  }, 60_000);

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await t?.close();
    await fake?.close();
    await hooks?.close();
  });

  it('produces every event type the scenarios cover', () => {
    const types = new Set(seen.map((e) => e.type));
    expect(MUST_SEE.filter((type) => !types.has(type))).toEqual([]);
  });

  it('every emitted type is in the registry, and its payload parses with the registered schema', () => {
    for (const event of seen) {
      expect(isKnownEventType(event.type), event.type).toBe(true);
      if (!isKnownEventType(event.type)) continue;
      const parsed = EVENT_PAYLOAD_SCHEMAS[event.type].safeParse(event.payload);
      expect(parsed.success, `${event.type}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });

  it("seed events carry every field of the seed's table under its exact name; retired names are gone", () => {
    for (const event of seen.filter((e) => isCanonicalEventType(e.type))) {
      const fields = SEED_PAYLOAD_FIELDS[event.type];
      expect(fields, event.type).toBeDefined();
      for (const name of fields?.required ?? [])
        expect(Object.keys(event.payload), `${event.type}.${name}`).toContain(name);
      for (const name of RETIRED_NAMES[event.type] ?? [])
        expect(Object.keys(event.payload), `${event.type} still has ${name}`).not.toContain(name);
    }
  });

  it('payload values have the seed types', () => {
    const one = (type: string) => seen.find((e) => e.type === type)?.payload ?? {};
    expect(one('agent_start')).toMatchObject({ prompt: 'look around' });
    expect(one('tool_end')).toMatchObject({
      id: 'c_read',
      name: 'read',
      exit_code: 0,
      output: expect.stringContaining('alpha'),
    });
    expect(seen.find((e) => e.type === 'tool_output_delta')?.payload).toMatchObject({ id: 'c_bash', name: 'bash' });
    expect(one('permission_denied')).toMatchObject({
      tool_id: 'c_write',
      tool_name: 'write',
      args: { file_path: 'b.txt', content: 'x' },
    });
    expect(one('confirmation_timeout')).toEqual(
      expect.objectContaining({ tool_id: 'c_late', action_taken: 'rejected' }),
    );
    expect(one('confirmation_received')).toMatchObject({ tool_id: 'c_ok', approved: true, reason: null });
    expect(one('agent_end')).toMatchObject({
      text: expect.any(String),
      usage: {
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
      },
      verification_summary: { status: 'skipped', report_count: 0 },
    });
    // The seed's LlmResponseMeta: what the last provider response said about itself.
    expect(one('agent_end').meta).toMatchObject({
      provider: 'openai',
      request_model: 'test-model',
      request_url: `${t.fake.baseUrl}/chat/completions`,
      response_id: expect.stringMatching(/^chatcmpl-fake-/),
      response_model: 'test-model',
      response_object: 'chat.completion.chunk',
      duration_ms: expect.any(Number),
      first_token_ms: expect.any(Number),
    });
    expect(seen.filter((e) => e.type === 'error').map((e) => e.payload.message)).toHaveLength(1);
    expect(seen.find((e) => e.type === 'budget_exhausted')?.payload).toMatchObject({
      resource: 'tool_calls',
      kind: 'hard',
      consumed: 2,
      limit: 2,
    });
    expect(seen.find((e) => e.type === 'budget_threshold_hit' && e.payload.scope === 'session')?.payload).toMatchObject(
      { resource: 'tool_calls', kind: 'soft', consumed: expect.any(Number), limit: 2, message: expect.any(String) },
    );
    const ended = (id: string) => seen.find((e) => e.type === 'tool_end' && e.payload.id === id)?.payload;
    expect(ended('c_bad')).toMatchObject({
      exit_code: 1,
      error_kind: { type: 'invalid_argument', message: expect.stringContaining('file_path') },
    });
    expect(ended('b_ls')).toMatchObject({
      exit_code: 1,
      error_kind: { type: 'hook_denied', reason: 'not today', retryable: false },
    });
    expect(ended('c_read')).not.toHaveProperty('error_kind');
    expect(one('turn_end')).toMatchObject({ turn: 1, usage: { total_tokens: expect.any(Number) } });
  });

  it("host-direct tool results are the seed SDK's ToolResult: name, output, exitCode, metadata, errorKind", async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id as string;
    const ok = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(ok.body).toMatchObject({
      name: 'read',
      exitCode: 0,
      output: expect.stringContaining('alpha'),
      metadata: expect.any(Object),
    });
    expect(ok.body).not.toHaveProperty('errorKind');
    const missing = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 'nope.txt' } })
      .expect(200);
    expect(missing.body).toMatchObject({ name: 'read', exitCode: 1, errorKind: { type: 'not_found' } });
    const bad = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read`)
      .send({ args: { file_path: 7 } })
      .expect(200);
    expect(bad.body).toMatchObject({
      name: 'read',
      exitCode: 1,
      errorKind: { type: 'invalid_argument', message: expect.stringContaining('file_path') },
    });
  });
});
