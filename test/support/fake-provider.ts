import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tool call the fake assistant makes; `arguments` is JSON-encoded unless already a string. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown> | string;
}

/** Token usage the fake reports (total defaults to prompt + completion). */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
}

/** One scripted answer of the fake provider; each request consumes one step. */
export interface FakeStep {
  text?: string;
  /** Number of stream chunks the text is split into (default 1). */
  chunks?: number;
  reasoning?: string;
  /** Delta field carrying the reasoning (providers differ; default `reasoning_content`). */
  reasoningField?: 'reasoning_content' | 'reasoning';
  toolCalls?: FakeToolCall[];
  /** An error response; `headers` are sent with it (e.g. retry-after-ms, x-should-retry). */
  error?: { status: number; message: string; type?: string; headers?: Record<string, string> };
  delayMs?: number;
  /** Delay between stream chunks, so a client can abort mid-stream. */
  chunkDelayMs?: number;
  hang?: boolean;
  usage?: FakeUsage;
  finishReason?: string;
  expect?: (request: RecordedRequest) => void;
  /**
   * Answer only requests this accepts: a request takes the first step whose `when` accepts it (steps
   * without one accept any request). For concurrent callers (parallel child runs) whose order varies.
   */
  when?: (request: RecordedRequest) => boolean;
}

/** A chat-completions request body as the fake validated it. */
export interface FakeRequestBody {
  model: string;
  messages: Array<{ role: string; content?: unknown; [key: string]: unknown }>;
  tools?: Array<Record<string, unknown>>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  temperature?: number;
  [key: string]: unknown;
}

/** A valid chat-completions request the fake received. */
export interface RecordedRequest {
  body: FakeRequestBody;
  /** The body's text as received (UTF-8). */
  raw: string;
  headers: IncomingHttpHeaders;
  /** Set when the client went away before the response ended (a cancelled run aborts its request). */
  abortedAtMs?: number;
}

/** A request the strict fake refused (unexpected, malformed, or failing an `expect`). */
export interface FakeFailure {
  method: string;
  path: string;
  reason: string;
}

/** Options of startFakeProvider. */
export interface FakeProviderOptions {
  /** Extra delay before every response (default 0). */
  latencyMs?: number;
  /** Answers every request with this step once the script is empty (for benchmarks). */
  repeat?: FakeStep;
  /** The one path chat completions are served at (default `/v1/chat/completions`); any other path fails. */
  chatPath?: string;
}

/** A running strict fake of an OpenAI-compatible chat-completions endpoint. */
export interface FakeProvider {
  /** The openai SDK's baseURL for the default chat path: `<rootUrl>/v1`. */
  baseUrl: string;
  /** `http://127.0.0.1:<port>`, with no path: the seed's `base_url`. */
  rootUrl: string;
  /** The path chat completions are served at. */
  chatPath: string;
  requests: RecordedRequest[];
  failures: FakeFailure[];
  /** The most chat-completion requests that were in flight at once (received, response not yet ended). */
  readonly maxInFlight: number;
  script(...steps: FakeStep[]): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  assertDone(): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE: Required<FakeUsage> = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Starts the strict fake provider on 127.0.0.1 at a random port. */
export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const steps: FakeStep[] = [];
  const requests: RecordedRequest[] = [];
  const failures: FakeFailure[] = [];
  const waiters = new Set<() => void>();
  let completionCounter = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const chatPath = options.chatPath ?? '/v1/chat/completions';

  const fail = (req: IncomingMessage, res: ServerResponse, reason: string): void => {
    failures.push({ method: req.method ?? '', path: req.url ?? '', reason });
    sendJson(res, 500, { error: { message: `fake provider: ${reason}`, type: 'fake_provider_failure' } });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const closed = new AbortController();
    const seen: { request?: RecordedRequest } = {};
    res.on('close', () => {
      closed.abort();
      if (seen.request && !res.writableFinished) seen.request.abortedAtMs = Date.now();
    });
    const raw = await readBody(req);
    if (req.method !== 'POST' || req.url !== chatPath) {
      return fail(req, res, `unexpected ${req.method} ${req.url}`);
    }
    if (raw === undefined) return fail(req, res, `request body exceeds ${MAX_BODY_BYTES} bytes`);
    const parsed = parseBody(raw);
    if (typeof parsed === 'string') return fail(req, res, parsed);
    const recorded: RecordedRequest = { body: parsed, raw, headers: req.headers };
    seen.request = recorded;
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.once('close', () => {
      inFlight -= 1;
    });
    requests.push(recorded);
    for (const wake of [...waiters]) wake();
    const index = steps.findIndex((candidate) => candidate.when === undefined || candidate.when(recorded));
    const step = (index >= 0 ? steps.splice(index, 1)[0] : undefined) ?? options.repeat;
    if (!step) return fail(req, res, `unexpected request #${requests.length}: the script is empty`);
    if (step.expect) {
      try {
        step.expect(recorded);
      } catch (error) {
        return fail(req, res, `expect failed on request #${requests.length}: ${errorMessage(error)}`);
      }
    }
    if (step.hang) return; // close() or the client's abort ends it
    if (!(await sleep((options.latencyMs ?? 0) + (step.delayMs ?? 0), closed.signal))) return;
    if (step.error) {
      sendJson(
        res,
        step.error.status,
        { error: { message: step.error.message, type: step.error.type ?? 'fake_error', code: null, param: null } },
        step.error.headers,
      );
      return;
    }
    completionCounter += 1;
    const id = `chatcmpl-fake-${completionCounter}`;
    if (parsed.stream === true) {
      await streamStep(res, step, id, parsed, closed.signal);
    } else {
      sendJson(res, 200, completionBody(step, id, parsed.model));
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      failures.push({ method: req.method ?? '', path: req.url ?? '', reason: `fake crashed: ${errorMessage(error)}` });
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'fake provider crashed' } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    rootUrl: `http://127.0.0.1:${port}`,
    chatPath,
    requests,
    failures,
    get maxInFlight() {
      return maxInFlight;
    },
    script(...more: FakeStep[]): void {
      for (const step of more) validateStep(step);
      steps.push(...more);
    },
    waitForRequests(count: number, timeoutMs = 5_000): Promise<RecordedRequest[]> {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (requests.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(requests);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake provider: waited ${timeoutMs} ms for ${count} requests, got ${requests.length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    assertDone(): void {
      const problems = failures.map((f) => `${f.method} ${f.path}: ${f.reason}`);
      if (steps.length > 0) problems.push(`${steps.length} scripted step(s) left unconsumed`);
      if (problems.length > 0) throw new Error(`fake provider is not done:\n- ${problems.join('\n- ')}`);
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Hung and keep-alive connections would keep close() waiting forever.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Rejects steps that cannot be answered as written, at script time rather than request time. */
function validateStep(step: FakeStep): void {
  if (step.chunks !== undefined) {
    const length = Array.from(step.text ?? '').length;
    if (!Number.isInteger(step.chunks) || step.chunks < 1 || step.chunks > Math.max(length, 1)) {
      throw new Error(`fake provider: chunks must be an integer from 1 to the text length (${length})`);
    }
  }
  if (step.error && (step.error.status < 400 || step.error.status > 599)) {
    throw new Error('fake provider: error.status must be an HTTP error status');
  }
}

/** Parses and validates a chat-completions body; returns a reason string when invalid. */
function parseBody(raw: string): FakeRequestBody | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return 'request body is not JSON';
  }
  if (!isRecord(value)) return 'request body is not a JSON object';
  if (typeof value.model !== 'string' || value.model === '') return 'request body has no model';
  const messages = value.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'request body has no messages';
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message) || typeof message.role !== 'string') return `messages[${index}] has no role`;
  }
  if (value.tools !== undefined && !Array.isArray(value.tools)) return 'tools is not an array';
  const format = value.response_format;
  if (format !== undefined) {
    if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.json_schema))
      return 'response_format is not {type: "json_schema", json_schema: {...}}';
    if (typeof format.json_schema.name !== 'string' || !isRecord(format.json_schema.schema))
      return 'response_format.json_schema needs a name and a schema object';
  }
  return value as FakeRequestBody;
}

/** Writes the SSE stream of one step; stops quietly when the client goes away. */
async function streamStep(
  res: ServerResponse,
  step: FakeStep,
  id: string,
  body: FakeRequestBody,
  closed: AbortSignal,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> => ({
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const events: Array<Record<string, unknown>> = [chunk({ role: 'assistant', content: '' })];
  if (step.reasoning) events.push(chunk({ [step.reasoningField ?? 'reasoning_content']: step.reasoning }));
  if (step.text) for (const part of split(step.text, step.chunks ?? 1)) events.push(chunk({ content: part }));
  for (const [index, call] of (step.toolCalls ?? []).entries()) {
    const fn = { name: call.name, arguments: '' };
    events.push(chunk({ tool_calls: [{ index, id: toolCallId(call, index), type: 'function', function: fn }] }));
    const args = argumentsText(call);
    for (const part of split(args, Math.min(2, Math.max(Array.from(args).length, 1)))) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  }
  events.push(chunk({}, finishReason(step)));
  if (includeUsage) {
    const { choices: _choices, ...rest } = chunk({});
    events.push({ ...rest, choices: [], usage: usageOf(step) });
  }
  for (const [n, event] of events.entries()) {
    if (n > 0 && !(await sleep(step.chunkDelayMs ?? 0, closed))) return;
    if (closed.aborted) return;
    res.write(`data: ${JSON.stringify(event)}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

/** The non-streaming chat.completion body for one step. */
function completionBody(step: FakeStep, id: string, model: string): Record<string, unknown> {
  const toolCalls = (step.toolCalls ?? []).map((call, index) => ({
    id: toolCallId(call, index),
    type: 'function',
    function: { name: call.name, arguments: argumentsText(call) },
  }));
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: step.text ?? null,
          refusal: null,
          ...(step.reasoning ? { [step.reasoningField ?? 'reasoning_content']: step.reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(step),
      },
    ],
    usage: usageOf(step),
  };
}

function finishReason(step: FakeStep): string {
  return step.finishReason ?? ((step.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop');
}

function usageOf(step: FakeStep): Required<FakeUsage> {
  if (!step.usage) return DEFAULT_USAGE;
  const { prompt_tokens, completion_tokens } = step.usage;
  return {
    prompt_tokens,
    completion_tokens,
    total_tokens: step.usage.total_tokens ?? prompt_tokens + completion_tokens,
  };
}

function toolCallId(call: FakeToolCall, index: number): string {
  return call.id ?? `call_${index + 1}`;
}

function argumentsText(call: FakeToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/** Splits text into `parts` non-empty pieces of near-equal length (by code point). */
function split(text: string, parts: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const size = chars.length / parts;
  const pieces: string[] = [];
  for (let i = 0; i < parts; i += 1)
    pieces.push(chars.slice(Math.round(i * size), Math.round((i + 1) * size)).join(''));
  return pieces;
}

/** Resolves true after `ms`, or false as soon as `signal` fires. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Reads the whole body, or undefined when it exceeds the bound. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
