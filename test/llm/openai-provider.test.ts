import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LlmProviderError } from '../../src/runtime/llm/llm-provider.js';
import type { LlmRequest, LlmStreamEvent } from '../../src/runtime/llm/llm-provider.js';
import { OpenAiProvider } from '../../src/runtime/llm/openai-provider.js';
import { startFakeProvider } from '../support/fake-provider.js';
import type { FakeProvider } from '../support/fake-provider.js';

let fake: FakeProvider;
let provider: OpenAiProvider;

beforeEach(async () => {
  fake = await startFakeProvider();
  provider = new OpenAiProvider({ apiKey: 'test-key', baseUrl: fake.baseUrl, maxRetries: 0, timeoutMs: 10_000 });
});

afterEach(async () => {
  await provider.close();
  await fake.close();
});

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Every event a stream delivers, in order. */
async function everyEvent(from: OpenAiProvider, req: LlmRequest): Promise<LlmStreamEvent[]> {
  const out: LlmStreamEvent[] = [];
  await from.stream(req, (event) => out.push(event));
  return out;
}

/** Every event of a stream but the `request` and `response` descriptions (checked by their own tests). */
async function collect(from: OpenAiProvider, req: LlmRequest): Promise<LlmStreamEvent[]> {
  return (await everyEvent(from, req)).filter((event) => event.type !== 'response' && event.type !== 'request');
}

async function failure(from: OpenAiProvider, req: LlmRequest): Promise<unknown> {
  try {
    await collect(from, req);
  } catch (error) {
    return error;
  }
  throw new Error('expected the stream to fail');
}

describe('OpenAiProvider against the strict fake provider', () => {
  it('streams text in N chunks as N text_delta events, then usage and finish', async () => {
    fake.script({ text: 'Hello, world!', chunks: 3 });
    const events = await collect(provider, request());
    const texts = events.filter((e) => e.type === 'text_delta');
    expect(texts).toHaveLength(3);
    expect(texts.map((e) => e.text).join('')).toBe('Hello, world!');
    expect(events.at(-2)).toEqual({ type: 'usage', promptTokens: 10, completionTokens: 5, totalTokens: 15 });
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    fake.assertDone();
  });

  it('describes the request as sent first: its body size and the sha256 of exactly the bytes received', async () => {
    fake.script({ text: 'hi' });
    const [first] = await everyEvent(provider, request());
    const [received] = await fake.waitForRequests(1);
    expect(first).toEqual({
      type: 'request',
      bodyBytes: Buffer.byteLength(received.raw),
      bodyDigest: `sha256:${createHash('sha256').update(received.raw, 'utf8').digest('hex')}`,
    });
  });

  it('describes the response next: where the request went and the id, model and object of its first chunk', async () => {
    fake.script({ text: 'hi' });
    const [, first] = await everyEvent(provider, request());
    expect(first).toEqual({
      type: 'response',
      requestUrl: `${fake.baseUrl}/chat/completions`,
      responseId: expect.stringMatching(/^chatcmpl-fake-/),
      responseModel: 'gpt-test',
      responseObject: 'chat.completion.chunk',
    });
    await fake.waitForRequests(1);
  });

  it('passes the bare model name, the messages, the tools, max_tokens and temperature', async () => {
    fake.script({ text: 'ok' });
    await collect(
      provider,
      request({
        model: 'qwen3-coder',
        maxTokens: 256,
        temperature: 0.2,
        messages: [
          { role: 'system', content: 'be terse' },
          { role: 'user', content: 'read a.txt' },
          {
            role: 'assistant',
            content: null,
            reasoning: 'private thoughts',
            tool_calls: [
              { id: 'call_9', type: 'function', function: { name: 'read', arguments: '{"file_path":"a.txt"}' } },
            ],
          },
          { role: 'tool', content: 'contents', tool_call_id: 'call_9' },
        ],
        tools: [{ name: 'read', description: 'Read a file', parameters: { type: 'object', properties: {} } }],
      }),
    );
    const [recorded] = fake.requests;
    expect(recorded.headers.authorization).toBe('Bearer test-key');
    expect(recorded.body.model).toBe('qwen3-coder');
    expect(recorded.body.stream).toBe(true);
    expect(recorded.body.stream_options).toEqual({ include_usage: true });
    expect(recorded.body.max_tokens).toBe(256);
    expect(recorded.body.temperature).toBe(0.2);
    expect(recorded.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: {} } },
      },
    ]);
    expect(recorded.body.messages).toEqual([
      { role: 'system', content: 'be terse' },
      { role: 'user', content: 'read a.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_9', type: 'function', function: { name: 'read', arguments: '{"file_path":"a.txt"}' } },
        ],
      },
      { role: 'tool', content: 'contents', tool_call_id: 'call_9' },
    ]);
    fake.assertDone();
  });

  it('sends each call the tools it was given, in order, when specs are shared between calls', async () => {
    const read = {
      name: 'read',
      description: 'Read "a" file \u2028 ünïcode',
      parameters: { type: 'object', properties: { p: { type: 'string' } } },
    };
    const ls = { name: 'ls', description: 'List', parameters: { type: 'object', properties: {} } };
    fake.script({ text: 'one' }, { text: 'two' });
    await collect(provider, request({ tools: [read, ls] }));
    // Multi-byte text before the spliced tool bytes: the body is exact bytes, not characters.
    await collect(
      provider,
      request({
        tools: [ls, read],
        temperature: 0,
        messages: [{ role: 'user', content: 'h\u00e9llo \u65e5\u672c \u{1f389}' }],
      }),
    );
    const names = fake.requests.map((r) =>
      (r.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name),
    );
    expect(names).toEqual([
      ['read', 'ls'],
      ['ls', 'read'],
    ]);
    expect(fake.requests[1]?.body.tools).toEqual([
      { type: 'function', function: ls },
      { type: 'function', function: read },
    ]);
    expect(fake.requests[1]?.body.temperature).toBe(0);
    expect(fake.requests[1]?.body.messages).toEqual([{ role: 'user', content: 'h\u00e9llo \u65e5\u672c \u{1f389}' }]);
    fake.assertDone();
  });

  it('omits tools and optional sampling fields when not given', async () => {
    fake.script({ text: 'ok' });
    await collect(provider, request());
    const { body } = fake.requests[0];
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('max_tokens');
    expect(body).not.toHaveProperty('temperature');
    fake.assertDone();
  });

  it('streams reasoning before text', async () => {
    fake.script({ reasoning: 'thinking...', text: 'answer' });
    const events = await collect(provider, request());
    expect(events.slice(0, 2)).toEqual([
      { type: 'reasoning_delta', text: 'thinking...' },
      { type: 'text_delta', text: 'answer' },
    ]);
    fake.assertDone();
  });

  it('reads reasoning from the `reasoning` field some providers use instead', async () => {
    fake.script({ reasoning: 'hmm', reasoningField: 'reasoning', text: 'done' });
    const events = await collect(provider, request());
    expect(events[0]).toEqual({ type: 'reasoning_delta', text: 'hmm' });
    fake.assertDone();
  });

  it('reassembles tool calls with partial arguments by index', async () => {
    fake.script({
      text: 'Let me look.',
      toolCalls: [
        { id: 'call_a', name: 'read', arguments: { file_path: 'a.txt' } },
        { name: 'grep', arguments: '{"pattern":"TODO"}' },
      ],
    });
    const events = await collect(provider, request());
    const starts = events.filter((e) => e.type === 'tool_call_start');
    expect(starts).toEqual([
      { type: 'tool_call_start', index: 0, id: 'call_a', name: 'read' },
      { type: 'tool_call_start', index: 1, id: 'call_2', name: 'grep' },
    ]);
    const args = new Map<number, string>();
    let deltas = 0;
    for (const event of events) {
      if (event.type !== 'tool_call_delta') continue;
      deltas += 1;
      args.set(event.index, (args.get(event.index) ?? '') + event.argumentsDelta);
    }
    expect(deltas).toBeGreaterThanOrEqual(4);
    expect(JSON.parse(args.get(0) ?? '')).toEqual({ file_path: 'a.txt' });
    expect(JSON.parse(args.get(1) ?? '')).toEqual({ pattern: 'TODO' });
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'tool_calls' });
    fake.assertDone();
  });

  it('reports the usage of the final chunk and a custom finish reason', async () => {
    fake.script({ usage: { prompt_tokens: 120, completion_tokens: 7 }, text: 'x', finishReason: 'length' });
    const events = await collect(provider, request());
    expect(events.filter((e) => e.type === 'usage')).toEqual([
      { type: 'usage', promptTokens: 120, completionTokens: 7, totalTokens: 127 },
    ]);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'length' });
    fake.assertDone();
  });

  it('lets a step assert on the request', async () => {
    fake.script({
      expect: (req) => expect(req.body.messages.at(-1)?.content).toBe('ping'),
      text: 'pong',
    });
    const events = await collect(provider, request({ messages: [{ role: 'user', content: 'ping' }] }));
    expect(events[0]).toEqual({ type: 'text_delta', text: 'pong' });
    fake.assertDone();
  });

  it('maps HTTP 500 to a retryable LlmProviderError', async () => {
    fake.script({ error: { status: 500, message: 'boom' } });
    const error = await failure(provider, request());
    expect(error).toBeInstanceOf(LlmProviderError);
    expect(error).toMatchObject({ status: 500, retryable: true });
    expect((error as Error).message).toContain('boom');
    fake.assertDone();
  });

  it('maps HTTP 429 to retryable and HTTP 400 to not retryable', async () => {
    fake.script({ error: { status: 429, message: 'slow down' } }, { error: { status: 400, message: 'bad request' } });
    expect(await failure(provider, request())).toMatchObject({
      name: 'LlmProviderError',
      status: 429,
      retryable: true,
    });
    expect(await failure(provider, request())).toMatchObject({
      name: 'LlmProviderError',
      status: 400,
      retryable: false,
    });
    fake.assertDone();
  });

  it('sends the API key and JSON content type, never retries itself, and reports the retry headers of a failed response', async () => {
    const retrying = new OpenAiProvider({ apiKey: 'test-key', baseUrl: fake.baseUrl, maxRetries: 1 });
    try {
      // The LLM invoker retries (max_retries); the provider makes one request and says what the answer asked for.
      expect(retrying.maxRetries).toBe(1);
      const defaults = new OpenAiProvider({ baseUrl: fake.baseUrl });
      expect(defaults.maxRetries).toBe(2);
      await defaults.close();
      fake.script(
        { error: { status: 503, message: 'overloaded', headers: { 'retry-after-ms': '1' } } },
        { error: { status: 429, message: 'slow', headers: { 'retry-after': '3' } } },
        { text: 'second time lucky' },
      );
      expect(await failure(retrying, request())).toMatchObject({
        name: 'LlmProviderError',
        status: 503,
        retryable: true,
        retryAfterMs: 1,
      });
      expect(fake.requests).toHaveLength(1);
      expect(await failure(retrying, request())).toMatchObject({ status: 429, retryable: true, retryAfterMs: 3000 });
      const events = await collect(retrying, request());
      expect(events[0]).toEqual({ type: 'text_delta', text: 'second time lucky' });
      expect(fake.requests).toHaveLength(3);
      expect(fake.requests[2]?.headers).toMatchObject({
        authorization: 'Bearer test-key',
        'content-type': 'application/json',
        'x-stainless-retry-count': '0',
      });
      // x-should-retry: false overrides the status: a 503 the server calls final is not retryable.
      fake.script({ error: { status: 503, message: 'final', headers: { 'x-should-retry': 'false' } } });
      expect(await failure(retrying, request())).toMatchObject({
        name: 'LlmProviderError',
        status: 503,
        retryable: false,
        retryAfterMs: undefined,
      });
      expect(fake.requests).toHaveLength(4);
      fake.assertDone();
    } finally {
      await retrying.close();
    }
  });

  it("fails with a retryable LlmProviderError when no response comes within the provider's timeoutMs", async () => {
    fake.script({ hang: true });
    const impatient = new OpenAiProvider({ baseUrl: fake.baseUrl, maxRetries: 0, timeoutMs: 200 });
    try {
      const error = await failure(impatient, request());
      expect(error).toMatchObject({ name: 'LlmProviderError', status: undefined, retryable: true });
      expect((error as Error).message).toMatch(/timed out/i);
      fake.assertDone();
    } finally {
      await impatient.close();
    }
  });

  it('maps a refused connection to a retryable LlmProviderError', async () => {
    const gone = await startFakeProvider();
    await gone.close();
    const offline = new OpenAiProvider({ baseUrl: gone.baseUrl, maxRetries: 0 });
    expect(await failure(offline, request())).toMatchObject({
      name: 'LlmProviderError',
      status: undefined,
      retryable: true,
    });
  });

  it('rejects promptly with AbortError when aborted during a hung request', async () => {
    fake.script({ hang: true });
    const controller = new AbortController();
    const pending = failure(provider, request({ signal: controller.signal }));
    await fake.waitForRequests(1);
    const abortedAt = Date.now();
    controller.abort();
    const error = await pending;
    expect(Date.now() - abortedAt).toBeLessThan(1_000);
    expect(error).toMatchObject({ name: 'AbortError' });
    fake.assertDone();
  });

  it('rejects with AbortError when aborted mid-stream', async () => {
    fake.script({ text: 'a slow answer', chunks: 5, chunkDelayMs: 200 });
    const controller = new AbortController();
    const seen: LlmStreamEvent[] = [];
    const error = await provider
      .stream(request({ signal: controller.signal }), (event) => {
        if (event.type !== 'response' && event.type !== 'request') seen.push(event);
        if (event.type === 'text_delta') controller.abort();
      })
      .then(
        () => undefined,
        (rejected: unknown) => rejected,
      );
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(1);
    fake.assertDone();
  });

  it('rejects with exactly what the consumer threw, stops reading, and the next call streams normally', async () => {
    fake.script({ text: 'one two three', chunks: 3 }, { text: 'after' });
    const thrown = new TypeError('consumer failed');
    const seen: string[] = [];
    const error = await provider
      .stream(request(), (event) => {
        seen.push(event.type);
        if (event.type === 'text_delta') throw thrown;
      })
      .then(
        () => undefined,
        (rejected: unknown) => rejected,
      );
    expect(error).toBe(thrown);
    expect(seen).toEqual(['request', 'response', 'text_delta']);
    expect((await collect(provider, request())).filter((e) => e.type === 'text_delta')).toEqual([
      { type: 'text_delta', text: 'after' },
    ]);
    fake.assertDone();
  });

  it('rejects with AbortError without a request when the signal already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await failure(provider, request({ signal: controller.signal }))).toMatchObject({ name: 'AbortError' });
    expect(fake.requests).toHaveLength(0);
    fake.assertDone();
  });
});

describe('OpenAiProvider endpoint settings', () => {
  it('posts to chatUrl exactly, with the configured headers, on every request', async () => {
    const custom = await startFakeProvider({ chatPath: '/openai/deployments/d1/chat/completions' });
    const routed = new OpenAiProvider({
      apiKey: 'k',
      chatUrl: `${custom.rootUrl}/openai/deployments/d1/chat/completions`,
      headers: { 'X-Team': 'docs' },
      maxRetries: 1,
    });
    try {
      custom.script({ error: { status: 500, message: 'again' } }, { text: 'routed' });
      expect(await failure(routed, request())).toMatchObject({ status: 500, retryable: true });
      const events = await collect(routed, request());
      expect(events).toContainEqual({ type: 'text_delta', text: 'routed' });
      custom.assertDone();
      expect(custom.requests.map((r) => r.headers['x-team'])).toEqual(['docs', 'docs']);
    } finally {
      await routed.close();
      await custom.close();
    }
  });

  it('fails when the provider serves another path', async () => {
    const custom = await startFakeProvider({ chatPath: '/chat/completions' });
    const routed = new OpenAiProvider({ apiKey: 'k', chatUrl: `${custom.rootUrl}/v1/chat/completions`, maxRetries: 0 });
    try {
      expect(await failure(routed, request())).toBeInstanceOf(LlmProviderError);
      expect(custom.failures.map((f) => f.path)).toEqual(['/v1/chat/completions']);
    } finally {
      await routed.close();
      await custom.close();
    }
  });
});

describe('strict fake provider', () => {
  it('fails an unexpected request and makes assertDone throw', async () => {
    const error = await failure(provider, request());
    expect(error).toMatchObject({ name: 'LlmProviderError', status: 500 });
    expect((error as Error).message).toContain('script is empty');
    expect(fake.failures).toHaveLength(1);
    expect(() => fake.assertDone()).toThrow(/script is empty/);
  });

  it('makes assertDone throw when scripted steps are left unconsumed', async () => {
    fake.script({ text: 'one' }, { text: 'two' });
    await collect(provider, request());
    expect(() => fake.assertDone()).toThrow(/1 scripted step\(s\) left unconsumed/);
  });

  it('fails requests to another path, another method or with an invalid body', async () => {
    fake.script({ text: 'never used' });
    const other = await fetch(`${fake.baseUrl}/embeddings`, { method: 'POST', body: '{}' });
    const get = await fetch(`${fake.baseUrl}/chat/completions`);
    const invalid = await fetch(`${fake.baseUrl}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm' }),
    });
    expect([other.status, get.status, invalid.status]).toEqual([500, 500, 500]);
    expect(await invalid.text()).toContain('no messages');
    expect(fake.failures.map((f) => f.reason)).toEqual([
      'unexpected POST /v1/embeddings',
      'unexpected GET /v1/chat/completions',
      'request body has no messages',
    ]);
    expect(() => fake.assertDone()).toThrow(/left unconsumed/);
  });

  it('records a failing expect as a failure', async () => {
    fake.script({
      expect: () => {
        throw new Error('wrong prompt');
      },
      text: 'x',
    });
    expect(await failure(provider, request())).toMatchObject({ status: 500 });
    expect(() => fake.assertDone()).toThrow(/wrong prompt/);
  });

  it('close() ends hung requests, which the adapter reports as a retryable failure', async () => {
    fake.script({ hang: true });
    const pending = failure(provider, request());
    await fake.waitForRequests(1);
    await fake.close();
    expect(await pending).toMatchObject({ name: 'LlmProviderError', retryable: true });
    fake.assertDone();
  });

  it('answers non-streaming requests with a chat.completion body', async () => {
    fake.script({ text: 'plain', toolCalls: [{ name: 'read', arguments: { file_path: 'b.txt' } }] });
    const response = await fetch(`${fake.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [
        {
          message: {
            role: 'assistant',
            content: 'plain',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"file_path":"b.txt"}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    fake.assertDone();
  });

  it('waits for delayed steps and repeats a step forever in repeat mode', async () => {
    const bench = await startFakeProvider({ repeat: { text: 'again' } });
    try {
      const repeating = new OpenAiProvider({ baseUrl: bench.baseUrl, maxRetries: 0 });
      bench.script({ delayMs: 100, text: 'first' });
      const startedAt = Date.now();
      const first = await collect(repeating, request());
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(90);
      expect(first[0]).toEqual({ type: 'text_delta', text: 'first' });
      for (let i = 0; i < 3; i += 1) {
        expect((await collect(repeating, request()))[0]).toEqual({ type: 'text_delta', text: 'again' });
      }
      await expect(bench.waitForRequests(4, 100)).resolves.toHaveLength(4);
      await expect(bench.waitForRequests(5, 50)).rejects.toThrow(/waited 50 ms for 5 requests/);
      bench.assertDone();
    } finally {
      await bench.close();
    }
  });
});
