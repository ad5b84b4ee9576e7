import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchDelegation, BenchProviderOptions, BenchToolCall } from './driver-protocol.js';

/** A running zero-latency OpenAI-compatible chat-completions endpoint for benchmarks. */
export interface BenchProvider {
  baseUrl: string;
  /** Requests answered so far. */
  readonly requests: number;
  /** Delegation mode: the tool results the latest parent and child requests ended with (for checks and diagnosis). */
  readonly lastToolResults: Readonly<{ parent?: string; child?: string }>;
  /** Replace what the provider answers from the next request on. */
  configure(options: BenchProviderOptions): void;
  close(): Promise<void>;
}

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

interface RequestBody {
  model?: unknown;
  stream?: unknown;
  messages?: unknown;
}

/** SSE chunks are written in batches this big when streaming as fast as possible. */
const BATCH = 64;

/**
 * Starts the bench provider on 127.0.0.1: unlike the strict test fake it chooses its answer from the
 * request, so one script serves any number of concurrent runs. A request whose last message is a tool
 * result (or any request when no tool call is configured) gets a streamed text answer; any other
 * request gets the configured tool call (in delegation mode: the parent's or a child's, see pickDelegationCall).
 */
export async function startBenchProvider(initial: BenchProviderOptions): Promise<BenchProvider> {
  let options = initial;
  let requests = 0;
  let counter = 0;
  const lastToolResults: { parent?: string; child?: string } = {};

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `bench provider: no ${req.method} ${req.url}` } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RequestBody;
    const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
    const model = typeof body.model === 'string' ? body.model : 'bench-model';
    if (body.stream !== true) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'bench provider: only streaming requests' } }));
      return;
    }
    requests += 1;
    counter += 1;
    const current = options;
    const toolCall =
      messages.at(-1)?.role === 'tool'
        ? undefined
        : current.delegation
          ? pickDelegationCall(messages, current.delegation)
          : current.toolCall;
    if (current.delegation && messages.at(-1)?.role === 'tool')
      lastToolResults[isChildRequest(messages, current.delegation) ? 'child' : 'parent'] = messageText(
        messages.at(-1) as ChatMessage,
      );
    const stream = new ChunkWriter(`chatcmpl-bench-${counter}`, model);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write(stream.chunk({ role: 'assistant', content: '' }));
    if (!toolCall) {
      await writeText(res, stream, current);
      res.write(stream.chunk({}, 'stop'));
    } else {
      const args = JSON.stringify(toolCall.arguments);
      res.write(
        stream.chunk({
          tool_calls: [
            { index: 0, id: `call_${counter}`, type: 'function', function: { name: toolCall.name, arguments: '' } },
          ],
        }),
      );
      res.write(stream.chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }));
      res.write(stream.chunk({}, 'tool_calls'));
    }
    res.write(stream.usage());
    res.end('data: [DONE]\n\n');
  };

  const server: Server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `bench provider crashed: ${String(error)}` } }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    get lastToolResults() {
      return lastToolResults;
    },
    configure(next) {
      options = next;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** A child's request carries its task's prompt (starting with childPrefix) as a user message; the parent's does not. */
function pickDelegationCall(messages: readonly ChatMessage[], delegation: BenchDelegation): BenchToolCall {
  return isChildRequest(messages, delegation) ? delegation.childToolCall : delegation.parentToolCall;
}

/** Whether one of the request's user messages starts with the child prefix. */
function isChildRequest(messages: readonly ChatMessage[], delegation: BenchDelegation): boolean {
  return messages.some((message) => message.role === 'user' && messageText(message).startsWith(delegation.childPrefix));
}

/** The text of a chat message: its string content, or its text parts joined. */
function messageText(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (!Array.isArray(message.content)) return '';
  return (message.content as Array<{ type?: unknown; text?: unknown }>)
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** Formats the SSE chunks of one completion. */
class ChunkWriter {
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly id: string,
    private readonly model: string,
  ) {}

  /** One `data:` line carrying a choice delta. */
  chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
    const body = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      usage: null,
    };
    return `data: ${JSON.stringify(body)}\n\n`;
  }

  /** The trailing usage chunk (stream_options.include_usage). */
  usage(): string {
    const body = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    };
    return `data: ${JSON.stringify(body)}\n\n`;
  }
}

/** Streams the text chunks, either as fast as the socket drains or paced at chunksPerSecond. */
async function writeText(res: ServerResponse, stream: ChunkWriter, options: BenchProviderOptions): Promise<void> {
  const line = stream.chunk({ content: options.chunkText });
  const total = options.answerChunks;
  const rate = options.chunksPerSecond;
  let sent = 0;
  const start = performance.now();
  while (sent < total && !res.destroyed) {
    // Paced: send whatever is due by now, so timer jitter shifts chunks but never loses rate.
    const due =
      rate === undefined
        ? Math.min(total, sent + BATCH)
        : Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    if (due > sent) {
      const writable = res.write(line.repeat(due - sent));
      sent = due;
      if (!writable) await drained(res);
    }
    // Yield every batch: clients sharing this process (the ws subscribers) must not starve behind the stream.
    if (rate !== undefined && sent < total) await sleep(1);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Resolves when the response can take more data, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
