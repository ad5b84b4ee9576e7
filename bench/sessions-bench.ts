import type { BenchArgs } from './bench-args.js';
import { numberFlag } from './bench-args.js';
import { obtainGc } from './bench-gc.js';
import { startBenchServer } from './bench-server.js';
import { percentile, round } from './bench-stats.js';
import { startDriver } from './driver-client.js';
import type { CreateSessionsParams, LoadFigures, LoadParams } from './driver-protocol.js';
import { closedLoop, createJsonClient, UnexpectedResponse, type JsonClient } from './http-load.js';

const CONCURRENCY = 20;
const WARMUP_SESSIONS = 1000;

/**
 * `sessions`: resident memory and heap per idle session (before and after creating `--idle N`
 * sessions, default 10,000, after a full gc), then POST /v1/sessions throughput at concurrency 20.
 */
export async function runSessionsBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const idle = Math.floor(numberFlag(args, 'idle', 10_000));
  const gc = obtainGc();
  const driver = await startDriver();
  try {
    const { baseUrl } = await driver.call('start-provider', { answerChunks: 1, chunkText: 'unused' });
    // At ~18k sessions/s a 5 s load passes the default limits.maxSessions (100,000): raise it for the bench.
    const bench = await startBenchServer({ providerBaseUrl: baseUrl, limits: { maxSessions: 10_000_000 } });
    try {
      const create = (count: number): Promise<LoadFigures> =>
        driver.call('create-sessions', { baseUrl: bench.url, count, concurrency: CONCURRENCY });
      // Warm the JIT and the session map first, so the baseline holds what every session shares.
      const warm = await create(WARMUP_SESSIONS);
      if (warm.errors > 0) throw new Error(`warm-up failed: ${warm.firstError ?? ''}`);
      await settle();
      gc.collect();
      const before = process.memoryUsage();
      const created = await create(idle);
      await settle();
      gc.collect();
      const after = process.memoryUsage();
      const perSession = (key: 'rss' | 'heapUsed' | 'external') =>
        Math.round((after[key] - before[key]) / created.count);

      const load = await driver.call('sessions-load', {
        baseUrl: bench.url,
        concurrency: CONCURRENCY,
        seconds: args.seconds,
      });
      return {
        bench: 'sessions',
        sessions_per_s: round(load.count / load.seconds, 1),
        p50_ms: round(percentile(load.latenciesMs, 50)),
        p99_ms: round(percentile(load.latenciesMs, 99)),
        errors: load.errors + created.errors,
        ...(load.firstError !== undefined || created.firstError !== undefined
          ? { first_error: load.firstError ?? created.firstError }
          : {}),
        rss_bytes_per_idle_session: perSession('rss'),
        heap_bytes_per_idle_session: perSession('heapUsed'),
        external_bytes_per_idle_session: perSession('external'),
        idle_sessions_measured: created.count,
        gc: gc.source,
        concurrency: CONCURRENCY,
        seconds: args.seconds,
        live_sessions_at_end: bench.server.ctx.agent.sessionCount,
        target: { sessions_per_s: 7000, bytes_per_idle_session: 16_384 },
        note: 'memory measured in the server process only (clients run in a separate process), after a warm-up of 1000 sessions; storageBackend memory',
      };
    } finally {
      await bench.close();
    }
  } finally {
    await driver.close();
  }
}

/** Lets pending callbacks and socket teardown finish before a measurement. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 200));
}

async function createOne(client: JsonClient): Promise<void> {
  const created = await client.post('/v1/sessions', {});
  const session = (created.body as { session?: { id?: unknown } } | null)?.session;
  if (created.status !== 201 || typeof session?.id !== 'string')
    throw new UnexpectedResponse(`create session: ${created.status} ${JSON.stringify(created.body)}`);
}

/** Driver side of `sessions`: POST /v1/sessions in a closed loop for a fixed time. */
export async function sessionsLoad(params: LoadParams): Promise<LoadFigures> {
  const client = createJsonClient(params.baseUrl, params.concurrency);
  try {
    return await closedLoop(params, () => createOne(client));
  } finally {
    client.close();
  }
}

/** Driver side of `sessions`: create a fixed number of sessions. */
export async function createSessionsLoad(params: CreateSessionsParams): Promise<LoadFigures> {
  const client = createJsonClient(params.baseUrl, params.concurrency);
  try {
    return await closedLoop({ concurrency: params.concurrency, count: params.count }, () => createOne(client));
  } finally {
    client.close();
  }
}
