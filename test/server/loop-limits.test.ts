import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { CONTINUATION_PROMPT } from '../../src/runtime/prompt/system-prompt.js';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { createSession, history, ofType, runAndWait, runEvents, useTestServers } from '../support/run-helpers.js';

const server = useTestServers();

/** Every tool_call is answered by exactly one later tool message, and every tool message answers a call. */
function expectValidTranscript(messages: ChatMessage[]): void {
  const open = new Set<string>();
  const answered = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') {
      expect(open.size, 'a new assistant turn started while tool calls were unanswered').toBe(0);
      for (const call of m.tool_calls ?? []) open.add(call.id);
    } else if (m.role === 'tool') {
      expect(m.tool_call_id, 'tool message without tool_call_id').toBeDefined();
      const id = m.tool_call_id ?? '';
      expect(open.has(id), `tool message answers unknown or already answered call ${id}`).toBe(true);
      open.delete(id);
      answered.add(id);
    } else {
      expect(open.size, `a ${m.role} message arrived while tool calls were unanswered`).toBe(0);
    }
  }
  expect([...open], 'unanswered tool calls').toEqual([]);
}

function toolMessages(req: RecordedRequest): Array<{ tool_call_id?: unknown; content?: unknown }> {
  return req.body.messages.filter((m) => m.role === 'tool');
}

function lastToolContent(req: RecordedRequest): string {
  const tools = toolMessages(req);
  return String(tools[tools.length - 1]?.content);
}

/** Every tool_start event is closed by exactly one tool_end event for the same tool id. */
function expectToolEventsClosed(events: EventEnvelope[]): void {
  const started = ofType(events, 'tool_start').map((e) => String(e.payload.id));
  const ended = ofType(events, 'tool_end').map((e) => String(e.payload.id));
  expect([...ended].sort()).toEqual([...started].sort());
}

describe('loop limits over HTTP', () => {
  it('maxToolRounds: a model that keeps calling tools fails with MAX_TOOL_ROUNDS after N rounds, transcript valid', async () => {
    const t = await server({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t, { maxToolRounds: 2 });
    t.fake.script(
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { toolCalls: [{ id: 'r2', name: 'ls', arguments: {} }] },
      {
        toolCalls: [
          { id: 'r3a', name: 'read', arguments: { file_path: 'a.txt', offset: 1 } },
          { id: 'r3b', name: 'ls', arguments: { path: '.' } },
        ],
      },
    );
    const { run, result, runId } = await runAndWait(t, id, 'loop forever');
    t.fake.assertDone();
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('MAX_TOOL_ROUNDS');
    expect(run.error?.message).toContain('maxToolRounds (2)');
    expect(result.toolCallsCount).toBe(2);
    expect(t.fake.requests).toHaveLength(3);

    const messages = await history(t, id);
    expectValidTranscript(messages);
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'tool',
    ]);
    for (const m of messages.slice(-2)) expect(m.content).toContain('maxToolRounds');

    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'tool_execution_start')).toHaveLength(2);
    const end = ofType(events, 'agent_end')[0];
    expect(end.payload).toMatchObject({ status: 'failed', error: { code: 'MAX_TOOL_ROUNDS' } });
    expect(ofType(events, 'error').map((e) => e.payload.code)).toEqual(['MAX_TOOL_ROUNDS']);
    expectToolEventsClosed(events);
  });

  it('maxParseRetries: malformed JSON becomes an error result the model sees; one too many fails the run', async () => {
    const t = await server({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t, { maxParseRetries: 1 });
    t.fake.script(
      { toolCalls: [{ id: 'bad1', name: 'read', arguments: '{"file_path": "a.txt"' }] },
      {
        toolCalls: [
          { id: 'bad2', name: 'read', arguments: '{file_path: a.txt}' },
          { id: 'after', name: 'ls', arguments: {} },
        ],
      },
    );
    const { run, runId } = await runAndWait(t, id, 'read it');
    t.fake.assertDone();
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('MAX_PARSE_RETRIES');
    expect(run.error?.message).toContain('maxParseRetries (1)');

    // The second request carried the first failure back to the model, naming the problem.
    const seen = lastToolContent(t.fake.requests[1]);
    expect(seen).toContain('Invalid arguments for read');
    expect(seen).toContain('not valid JSON');

    const messages = await history(t, id);
    expectValidTranscript(messages);
    const last = messages[messages.length - 1];
    expect(last).toMatchObject({ role: 'tool', tool_call_id: 'after' });
    expect(last.content).toContain('Not run');

    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'tool_execution_start')).toHaveLength(0);
    expect(ofType(events, 'tool_end').map((e) => e.payload.exit_code)).toEqual([1, 1, 1]);
    expectToolEventsClosed(events);
  });

  it('maxParseRetries: malformed calls within the limit are answered and the run recovers', async () => {
    const t = await server({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t, { maxParseRetries: 2 });
    t.fake.script(
      { toolCalls: [{ id: 'bad1', name: 'read', arguments: '{' }] },
      { toolCalls: [{ id: 'bad2', name: 'read', arguments: 'not json at all' }] },
      { toolCalls: [{ id: 'good', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { text: 'Done.' },
    );
    const { run, result } = await runAndWait(t, id, 'read it');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    expect(result.text).toBe('Done.');
    expect(lastToolContent(t.fake.requests[3])).toContain('A');
    expectValidTranscript(await history(t, id));
  });

  it('zod-invalid arguments (unknown property, wrong type) become error results naming the field', async () => {
    const t = await server({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t, { maxParseRetries: 5 });
    t.fake.script(
      { toolCalls: [{ id: 'unknown', name: 'read', arguments: { file_path: 'a.txt', bogus_flag: true } }] },
      {
        toolCalls: [{ id: 'wrongtype', name: 'read', arguments: { file_path: 42 } }],
        expect: (req) => {
          const content = lastToolContent(req);
          expect(content).toContain('Invalid arguments for read');
          expect(content).toContain('bogus_flag');
        },
      },
      {
        toolCalls: [{ id: 'missing', name: 'write', arguments: { file_path: 'b.txt' } }],
        expect: (req) => {
          const content = lastToolContent(req);
          expect(content).toContain('Invalid arguments for read');
          expect(content).toContain('file_path');
          expect(content).toMatch(/string/i);
        },
      },
      {
        text: 'I give up.',
        expect: (req) => {
          const content = lastToolContent(req);
          expect(content).toContain('Invalid arguments for write');
          expect(content).toContain('content');
        },
      },
    );
    const { run } = await runAndWait(t, id, 'read it');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    expectValidTranscript(await history(t, id));
  });

  it('unknown tool names are answered with the list of available tools', async () => {
    const t = await server();
    const id = await createSession(t);
    t.fake.script(
      { toolCalls: [{ id: 'nope', name: 'teleport', arguments: {} }] },
      {
        text: 'ok',
        expect: (req) => {
          const content = lastToolContent(req);
          expect(content).toContain('Unknown tool "teleport"');
          expect(content).toContain('read');
        },
      },
    );
    const { run } = await runAndWait(t, id, 'go');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
  });

  it('duplicateToolCallThreshold: a call repeated beyond the threshold is not run and the model sees why', async () => {
    const t = await server({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t, { duplicateToolCallThreshold: 2 });
    const same = { name: 'read', arguments: { file_path: 'a.txt' } };
    t.fake.script(
      { toolCalls: [{ id: 'd1', ...same }] },
      { toolCalls: [{ id: 'd2', ...same }] },
      { toolCalls: [{ id: 'd3', ...same }] },
      { text: 'Understood.' },
    );
    const { run, runId } = await runAndWait(t, id, 'read a lot');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    const seen = lastToolContent(t.fake.requests[3]);
    expect(seen).toContain('Not run');
    expect(seen).toContain('duplicateToolCallThreshold 2');

    const events = await runEvents(t, id, runId);
    // Only the first two were executed.
    expect(ofType(events, 'tool_execution_start').map((e) => e.payload.id)).toEqual(['d1', 'd2']);
    expect(ofType(events, 'tool_end').map((e) => e.payload.id)).toEqual(['d1', 'd2', 'd3']);
    expectValidTranscript(await history(t, id));
  });

  it('continuation: finishReason length injects a continuation user turn, up to maxContinuationTurns', async () => {
    const t = await server();
    const id = await createSession(t, { continuationEnabled: true, maxContinuationTurns: 2 });
    t.fake.script(
      { text: 'Part one, ', finishReason: 'length' },
      { text: 'part two, ', finishReason: 'length' },
      { text: 'part three', finishReason: 'length' },
    );
    const { run, result, runId } = await runAndWait(t, id, 'write a long answer');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    expect(t.fake.requests).toHaveLength(3);
    for (const req of t.fake.requests.slice(1)) {
      const last = req.body.messages[req.body.messages.length - 1];
      expect(last.role).toBe('user');
      expect(last.content).toBe(CONTINUATION_PROMPT);
    }
    // The answer is the whole continued text, not only its last piece.
    expect(result.text).toBe('Part one, part two, part three');

    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'continuation_injected').map((e) => [e.payload.continuation, e.payload.reason])).toEqual([
      [1, 'length'],
      [2, 'length'],
    ]);
    expect(ofType(events, 'turn_end').map((e) => e.payload.finish_reason)).toEqual(['length', 'length', 'length']);
    const messages = await history(t, id);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  });

  it('continuationEnabled: false turns continuation off: finishReason length just completes', async () => {
    const t = await server();
    const id = await createSession(t, { continuationEnabled: false });
    t.fake.script({ text: 'Cut off', finishReason: 'length' });
    const { run, result, runId } = await runAndWait(t, id, 'go');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    expect(result.text).toBe('Cut off');
    expect(ofType(await runEvents(t, id, runId), 'continuation_injected')).toHaveLength(0);
  });

  it('usage is summed across turns from the provider reports', async () => {
    const t = await server({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t);
    t.fake.script(
      {
        toolCalls: [{ id: 'u1', name: 'read', arguments: { file_path: 'a.txt' } }],
        usage: { prompt_tokens: 100, completion_tokens: 7 },
      },
      {
        toolCalls: [{ id: 'u2', name: 'ls', arguments: {} }],
        usage: { prompt_tokens: 150, completion_tokens: 9, total_tokens: 160 },
      },
      { text: 'Done.', usage: { prompt_tokens: 200, completion_tokens: 11 } },
    );
    const { result, runId } = await runAndWait(t, id, 'go');
    t.fake.assertDone();
    expect(result).toMatchObject({
      promptTokens: 450,
      completionTokens: 27,
      totalTokens: 107 + 160 + 211,
      toolCallsCount: 2,
    });
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'turn_end').map((e) => e.payload.usage)).toEqual([
      { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 },
      { prompt_tokens: 150, completion_tokens: 9, total_tokens: 160 },
      { prompt_tokens: 200, completion_tokens: 11, total_tokens: 211 },
    ]);
    expect(ofType(events, 'agent_end')[0].payload.usage).toEqual({
      prompt_tokens: 450,
      completion_tokens: 27,
      total_tokens: 478,
    });
    const info = await request(t.url).get(`/v1/sessions/${id}`).expect(200);
    expect(info.body.session.usage).toEqual({ promptTokens: 450, completionTokens: 27, totalTokens: 478 });
  });
});

describe('provider failures and the circuit breaker', () => {
  // Retries are the provider's max_retries (test/server/provider-retry.test.ts has the retry layer's own cases).
  const fakes: FakeProvider[] = [];
  afterEach(async () => {
    for (const fake of fakes.splice(0)) await fake.close();
  });
  const retrying =
    (maxRetries: number) =>
    async (options: { files?: Record<string, string> } = {}) => {
      const fake = await startFakeProvider();
      fakes.push(fake);
      return server({
        ...options,
        fake,
        config: { providers: { openai: { apiKey: 'sk-test', baseUrl: fake.baseUrl, maxRetries } } },
      });
    };

  it('retries 500s up to max_retries and completes when a retry succeeds', async () => {
    const t = await retrying(2)();
    const id = await createSession(t, { circuitBreakerThreshold: 3 });
    t.fake.script(
      { error: { status: 500, message: 'boom 1' } },
      { error: { status: 503, message: 'boom 2' } },
      { text: 'Recovered.' },
    );
    const { run, result, runId } = await runAndWait(t, id, 'hello');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    expect(result.text).toBe('Recovered.');
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'error')).toEqual([]);
    expect(ofType(events, 'provider_retry').map((e) => [e.payload.attempt, e.payload.status])).toEqual([
      [1, 500],
      [2, 503],
    ]);
    expect(await history(t, id)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'Recovered.' },
    ]);
  });

  it('opens the breaker after threshold calls in a row failed, each after its retries', async () => {
    const t = await retrying(1)();
    const id = await createSession(t, { circuitBreakerThreshold: 1 });
    t.fake.script({ error: { status: 500, message: 'down 1' } }, { error: { status: 502, message: 'down 2' } });
    const { run, runId } = await runAndWait(t, id, 'hello');
    t.fake.assertDone();
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('CIRCUIT_BREAKER_OPEN');
    expect(run.error?.message).toContain('circuitBreakerThreshold 1');
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'provider_retry').map((e) => e.payload.attempt)).toEqual([1]);
    expect(ofType(events, 'error').map((e) => e.payload.code)).toEqual(['CIRCUIT_BREAKER_OPEN']);
    expect(ofType(events, 'agent_end')[0].payload).toMatchObject({
      status: 'failed',
      error: { code: 'CIRCUIT_BREAKER_OPEN' },
    });
  });

  it('retries are per call: a success in between starts the count again', async () => {
    const t = await retrying(1)({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t, { circuitBreakerThreshold: 2 });
    t.fake.script(
      { error: { status: 500, message: 'blip' } },
      { toolCalls: [{ id: 'c1', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { error: { status: 500, message: 'blip again' } },
      { text: 'Fine.' },
    );
    const { run } = await runAndWait(t, id, 'hello');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
  });

  it('a non-retryable 400 fails the run at once with PROVIDER_ERROR', async () => {
    const t = await server();
    const id = await createSession(t, { circuitBreakerThreshold: 5 });
    t.fake.script({ error: { status: 400, message: 'bad request: context too long' } });
    const { run, runId } = await runAndWait(t, id, 'hello');
    t.fake.assertDone();
    expect(t.fake.requests).toHaveLength(1);
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('PROVIDER_ERROR');
    expect(run.error?.message).toContain('context too long');
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'error').map((e) => e.payload.code)).toEqual(['PROVIDER_ERROR']);
    expect(await history(t, id)).toEqual([{ role: 'user', content: 'hello' }]);
  });
});

describe('maxExecutionTimeMs', () => {
  it('a slow provider call past the deadline is aborted and the run fails with MAX_EXECUTION_TIME', async () => {
    const t = await server();
    const id = await createSession(t, { maxExecutionTimeMs: 300 });
    t.fake.script({ text: 'too late', delayMs: 20_000 });
    const started = Date.now();
    const { run, runId } = await runAndWait(t, id, 'hello');
    expect(Date.now() - started).toBeLessThan(10_000);
    t.fake.assertDone();
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('MAX_EXECUTION_TIME');
    expect(run.error?.message).toContain('maxExecutionTimeMs (300 ms)');
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'agent_end')[0].payload).toMatchObject({
      status: 'failed',
      error: { code: 'MAX_EXECUTION_TIME' },
    });
    expect(await history(t, id)).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('a hanging provider call is aborted by the deadline too', async () => {
    const t = await server();
    const id = await createSession(t, { maxExecutionTimeMs: 300 });
    t.fake.script({ hang: true });
    const { run } = await runAndWait(t, id, 'hello');
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('MAX_EXECUTION_TIME');
  });

  it('a tool still running at the deadline is stopped; the transcript stays valid', async () => {
    const t = await server();
    const id = await createSession(t, { maxExecutionTimeMs: 1_000 });
    t.fake.script({
      toolCalls: [
        { id: 'slow', name: 'bash', arguments: { command: 'sleep 20' } },
        { id: 'next', name: 'ls', arguments: {} },
      ],
    });
    const started = Date.now();
    const { run, runId } = await runAndWait(t, id, 'run it');
    expect(Date.now() - started).toBeLessThan(10_000);
    t.fake.assertDone();
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('MAX_EXECUTION_TIME');
    const messages = await history(t, id);
    expectValidTranscript(messages);
    const tools = messages.filter((m) => m.role === 'tool');
    expect(tools[0].content).toContain('maxExecutionTimeMs');
    expect(tools[1].content).toContain('Not run');
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'tool_execution_start').map((e) => e.payload.id)).toEqual(['slow']);
    expectToolEventsClosed(events);
  });
});
