import type { BenchArgs } from './bench-args.js';
import { numberFlag } from './bench-args.js';
import type { BenchProvider } from './bench-provider.js';
import { startBenchServer } from './bench-server.js';
import { histogramPercentile, round } from './bench-stats.js';
import { startDriver, type Driver } from './driver-client.js';
import type { BenchProviderOptions, WsPhaseFigures, WsPhaseParams } from './driver-protocol.js';
import { createJsonClient, UnexpectedResponse, type JsonClient } from './http-load.js';
import { openSubscriber, type SubscriberTransport } from './bench-subscribers.js';

const SUBSCRIBERS = 100;
const DEFAULT_BUFFER = 1024;
const MAX_LATENCY_BUCKET = 60_000;
const TIMESTAMP_KEY = Buffer.from('"timestamp_ms":');
const TYPE_PATTERN = /"type":"([^"]+)"/;

/** The buffer the max-throughput phase is repeated with when the default one closed subscribers. */
const RAISED_BUFFER = 1_000_000;

type Phase = (provider: BenchProviderOptions) => Promise<WsPhaseFigures>;

/**
 * `ws`: one session fanning its events out to 100 WebSocket subscribers, driven by a run whose provider
 * streams text chunks; phase one streams `--chunks N` (default 20,000) as fast as possible for delivered
 * events/s, phase two paces the provider so subscribers receive `--paced-eps` (default 20,000) events/s
 * in total, for `--seconds`, for the emit-to-receive latency. When the default subscriber buffer closes
 * subscribers (4008) in phase one, phase one is repeated on a server with a raised buffer, and both are reported.
 * Then the same phases with 100 SSE readers (`sse`: delivered events/s, p99, and its ratio to the WebSocket figure).
 */
export async function runWsBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const chunks = Math.floor(numberFlag(args, 'chunks', 20_000));
  const pacedEps = numberFlag(args, 'paced-eps', 20_000);
  const buffer = Math.floor(numberFlag(args, 'subscriber-buffer', DEFAULT_BUFFER));
  const emitRate = pacedEps / SUBSCRIBERS;
  const pacedChunks = Math.max(1, Math.round(emitRate * args.seconds));
  const warm: BenchProviderOptions = { answerChunks: 1000, chunkText: 'word ' };
  const flat: BenchProviderOptions = { answerChunks: chunks, chunkText: 'word ' };
  const driver = await startDriver();
  try {
    const { baseUrl } = await driver.call('start-provider', warm);
    const paced: BenchProviderOptions = { answerChunks: pacedChunks, chunkText: 'word ', chunksPerSecond: emitRate };
    const explicitBuffer = args.flags.has('subscriber-buffer');
    const ws = await measure(driver, baseUrl, buffer, 'ws', { warm, flat, paced }, explicitBuffer);
    const sse = await measure(driver, baseUrl, buffer, 'sse', { warm, flat, paced }, explicitBuffer);
    const first = ws.first;
    const max = ws.max;
    const raise = ws.raised;
    const closedAtMax = first.max.closedByServer['4008'] ?? 0;
    const wsDelivered = rate(max.frames, max.windowMs);
    const sseDelivered = rate(sse.max.frames, sse.max.windowMs);
    return {
      bench: 'ws',
      subscribers: SUBSCRIBERS,
      delivered_events_per_s: wsDelivered,
      emitted_events_per_s: rate(max.framesPerSubscriber, max.windowMs),
      p50_ms_at_max: histogramPercentile(max.latencyHistogram, 50),
      p99_ms_at_max: histogramPercentile(max.latencyHistogram, 99),
      max_phase: { ...describe(max, chunks), subscriber_buffer_events: raise ? RAISED_BUFFER : buffer },
      ...(raise
        ? {
            max_phase_at_default_buffer: {
              ...describe(first.max, chunks),
              delivered_events_per_s: rate(first.max.frames, first.max.windowMs),
              subscriber_buffer_events: buffer,
            },
          }
        : {}),
      p50_ms_at_20k_eps: histogramPercentile(first.paced.latencyHistogram, 50),
      p99_ms_at_20k_eps: histogramPercentile(first.paced.latencyHistogram, 99),
      p999_ms_at_20k_eps: histogramPercentile(first.paced.latencyHistogram, 99.9),
      max_ms_at_20k_eps: histogramPercentile(first.paced.latencyHistogram, 100),
      paced_phase: {
        ...describe(first.paced, pacedChunks),
        emit_rate_per_s: emitRate,
        delivered_events_per_s: rate(first.paced.frames, first.paced.windowMs),
        subscriber_buffer_events: buffer,
      },
      subscribers_closed_4008: {
        max_phase_default_buffer: closedAtMax,
        paced_phase: first.paced.closedByServer['4008'] ?? 0,
      },
      subscriber_buffer_raised: raise || buffer !== DEFAULT_BUFFER,
      target: { delivered_events_per_s: 70_000, p99_ms_at_20k_eps: 5, sse_to_ws_ratio: 0.7 },
      sse: {
        readers: SUBSCRIBERS,
        delivered_events_per_s: sseDelivered,
        sse_to_ws_ratio: wsDelivered > 0 ? round(sseDelivered / wsDelivered, 2) : 0,
        p50_ms_at_max: histogramPercentile(sse.max.latencyHistogram, 50),
        p99_ms_at_max: histogramPercentile(sse.max.latencyHistogram, 99),
        p50_ms_at_20k_eps: histogramPercentile(sse.first.paced.latencyHistogram, 50),
        p99_ms_at_20k_eps: histogramPercentile(sse.first.paced.latencyHistogram, 99),
        max_phase: { ...describe(sse.max, chunks), subscriber_buffer_events: sse.raised ? RAISED_BUFFER : buffer },
        ...(sse.raised
          ? {
              max_phase_at_default_buffer: {
                ...describe(sse.first.max, chunks),
                delivered_events_per_s: rate(sse.first.max.frames, sse.first.max.windowMs),
                subscriber_buffer_events: buffer,
              },
            }
          : {}),
        paced_phase: {
          ...describe(sse.first.paced, pacedChunks),
          delivered_events_per_s: rate(sse.first.paced.frames, sse.first.paced.windowMs),
        },
        note: 'the same phases with 100 SSE readers (Accept: text/event-stream, one HTTP/1.1 connection each) instead of WebSocket subscribers; an SSE frame counts as read once the server handed it to the kernel (no end-to-end acknowledgement)',
      },
      note: `20k eps = events received by all subscribers together (${emitRate} emitted/s x ${SUBSCRIBERS}); latency = Date.now() on receipt - metadata.timestamp_ms, both whole ms, so +-1 ms; subscribers and provider run in a separate process${raise ? `; the max phase closed subscribers with 4008 at limits.subscriberBufferEvents ${buffer}, so delivered_events_per_s comes from a repeat with ${RAISED_BUFFER}` : ''}`,
    };
  } finally {
    await driver.close();
  }
}

interface Measured {
  /** Phases at the requested buffer. */
  first: { max: WsPhaseFigures; paced: WsPhaseFigures };
  /** The max phase reported (a repeat with RAISED_BUFFER when the first one closed subscribers). */
  max: WsPhaseFigures;
  raised: boolean;
}

/** Warm-up, max and paced phases over one transport; the max phase again with a raised buffer when it closed subscribers (4008). */
async function measure(
  driver: Driver,
  baseUrl: string,
  buffer: number,
  transport: SubscriberTransport,
  providers: { warm: BenchProviderOptions; flat: BenchProviderOptions; paced: BenchProviderOptions },
  explicitBuffer: boolean,
): Promise<Measured> {
  const first = await withSession(driver, baseUrl, buffer, transport, async (phase) => {
    await phase(providers.warm);
    const max = await phase(providers.flat);
    const paced = await phase(providers.paced);
    return { max, paced };
  });
  const raised = (first.max.closedByServer['4008'] ?? 0) > 0 && !explicitBuffer;
  const max = raised
    ? await withSession(driver, baseUrl, RAISED_BUFFER, transport, async (phase) => {
        await phase(providers.warm);
        return phase(providers.flat);
      })
    : first.max;
  return { first, max, raised };
}

/** Starts a server with the given subscriber buffer and one session, and hands `fn` a phase runner for it. */
async function withSession<T>(
  driver: Driver,
  providerBaseUrl: string,
  buffer: number,
  transport: SubscriberTransport,
  fn: (phase: Phase) => Promise<T>,
): Promise<T> {
  const bench = await startBenchServer({ providerBaseUrl, limits: { subscriberBufferEvents: buffer } });
  try {
    const created = await fetch(`${bench.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    if (created.status !== 201)
      throw new UnexpectedResponse(`create session: ${created.status} ${await created.text()}`);
    const { session } = (await created.json()) as { session: { id: string } };
    return await fn((provider) =>
      driver.call('ws-phase', {
        baseUrl: bench.url,
        sessionId: session.id,
        subscribers: SUBSCRIBERS,
        provider,
        timeoutMs: 300_000,
        transport,
      }),
    );
  } finally {
    await bench.close();
  }
}

function rate(count: number, windowMs: number): number {
  return windowMs > 0 ? round((count * 1000) / windowMs, 0) : 0;
}

function describe(figures: WsPhaseFigures, chunks: number): Record<string, unknown> {
  return {
    text_chunks: chunks,
    frames: figures.frames,
    frames_per_subscriber: figures.framesPerSubscriber,
    window_ms: round(figures.windowMs, 1),
    subscribers_finished: figures.finished,
    closed_by_server: figures.closedByServer,
    ...(figures.timedOut ? { timed_out: true } : {}),
  };
}

/** Driver side of `ws`: subscribe, start one streaming run, count frames and latencies until agent_end. */
export async function wsPhase(params: WsPhaseParams, provider: BenchProvider): Promise<WsPhaseFigures> {
  const client = createJsonClient(params.baseUrl, 1);
  // A run of an earlier phase may still be streaming to nobody; its events must not count here.
  await waitIdle(client, params.sessionId, params.timeoutMs);
  provider.configure(params.provider);
  const histogram = new Array<number>(MAX_LATENCY_BUCKET + 1).fill(0);
  const closedByServer: Record<string, number> = {};
  const counts: number[] = [];
  let frames = 0;
  let finished = 0;
  let gone = 0;
  let first = 0;
  let last = 0;
  let ending = false;
  let onSettled: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (onSettled = resolve));
  const checkSettled = (): void => {
    if (finished + gone >= params.subscribers) onSettled();
  };

  const sockets = await Promise.all(
    Array.from({ length: params.subscribers }, (_, index) => {
      counts[index] = 0;
      let done = false;
      return openSubscriber(params.transport ?? 'ws', params.baseUrl, params.sessionId, {
        onFrame: (buf) => {
          const now = Date.now();
          const at = performance.now();
          if (frames === 0) first = at;
          last = at;
          frames += 1;
          counts[index] = (counts[index] ?? 0) + 1;
          const stamp = readTimestamp(buf);
          if (stamp !== undefined) {
            const bucket = Math.min(MAX_LATENCY_BUCKET, Math.max(0, now - stamp));
            histogram[bucket] = (histogram[bucket] ?? 0) + 1;
          }
          if (!done && TYPE_PATTERN.exec(buf.toString('latin1', 0, Math.min(buf.length, 120)))?.[1] === 'agent_end') {
            done = true;
            finished += 1;
            checkSettled();
          }
        },
        onClose: (code) => {
          if (ending) return;
          closedByServer[code] = (closedByServer[code] ?? 0) + 1;
          if (!done) {
            done = true;
            gone += 1;
            checkSettled();
          }
        },
      });
    }),
  );

  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  try {
    await startRun(client, params.sessionId);
    await Promise.race([
      settled,
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          timedOut = true;
          resolve();
        }, params.timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    ending = true;
    for (const socket of sockets) socket.terminate();
    client.close();
  }
  // Trim the histogram to its last used bucket to keep the IPC message small.
  let top = histogram.length;
  while (top > 0 && histogram[top - 1] === 0) top -= 1;
  return {
    frames,
    framesPerSubscriber: Math.max(0, ...counts),
    windowMs: last - first,
    latencyHistogram: histogram.slice(0, top),
    closedByServer,
    finished,
    timedOut,
  };
}

/** Waits until the session has no active run. */
async function waitIdle(client: JsonClient, sessionId: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await client.get(`/v1/sessions/${sessionId}`);
    const busy = (response.body as { session?: { busy?: unknown } } | null)?.session?.busy;
    if (response.status !== 200)
      throw new UnexpectedResponse(`get session: ${response.status} ${JSON.stringify(response.body)}`);
    if (busy === false) return;
    if (Date.now() > deadline) throw new Error(`session ${sessionId} still busy after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts a run without waiting for it. */
async function startRun(client: JsonClient, sessionId: string): Promise<void> {
  const response = await client.post(`/v1/sessions/${sessionId}/runs`, { input: 'Stream, please.', wait: false });
  if (response.status !== 202)
    throw new UnexpectedResponse(`start run: ${response.status} ${JSON.stringify(response.body)}`);
}

/** The envelope's metadata.timestamp_ms, read from the raw frame without parsing it (metadata comes last, and a key inside a string would be escaped). */
function readTimestamp(buf: Buffer): number | undefined {
  const at = buf.lastIndexOf(TIMESTAMP_KEY);
  if (at === -1) return undefined;
  let value = 0;
  for (let i = at + TIMESTAMP_KEY.length; i < buf.length; i += 1) {
    const digit = (buf[i] as number) - 48;
    if (digit < 0 || digit > 9) break;
    value = value * 10 + digit;
  }
  return value;
}
