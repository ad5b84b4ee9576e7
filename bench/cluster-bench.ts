import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer } from '../test/support/redis-server.js';
import type { BenchArgs } from './bench-args.js';
import { startBenchProvider } from './bench-provider.js';
import { BENCH_FILE } from './bench-server.js';
import { percentile, round } from './bench-stats.js';
import type { LoadFigures } from './driver-protocol.js';
import { closedLoop, createJsonClient, UnexpectedResponse } from './http-load.js';
import { RUNS_PROVIDER, runsLoad } from './runs-bench.js';
import { startServerProcess } from './server-process.js';

const CONCURRENCY = 20;
const WARMUP_SECONDS = 1;
const STORES = ['memory', 'file', 'redis'] as const;
type Store = (typeof STORES)[number];

/**
 * `cluster`: the `runs` workload at concurrency 20 against a built server process on each store in turn
 * (memory, file, Redis through REDIS_URL on a throwaway redis-server), twice per store: as `runs` runs it
 * (checkpoints go through the store, no snapshot), and with `autoSave: true` sessions (a snapshot per run
 * too). Prints runs/s and p50 for each and the ratios to the memory store; target: Redis >= 50% of memory.
 */
export async function runClusterBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const provider = await startBenchProvider(RUNS_PROVIDER);
  const redis = await startRedisServer();
  const figures: Record<string, Record<string, unknown>> = {};
  try {
    for (const store of STORES) figures[store] = await measureStore(store, provider.baseUrl, redis.url, args.seconds);
  } finally {
    await redis.stop();
    await provider.close();
  }
  const ratio = (store: Store, workload: 'runs' | 'autosave'): number | null => {
    const base = (figures.memory?.[workload] as { runs_per_s?: number } | undefined)?.runs_per_s;
    const value = (figures[store]?.[workload] as { runs_per_s?: number } | undefined)?.runs_per_s;
    return base && value !== undefined ? round(value / base, 2) : null;
  };
  const redisRatio = ratio('redis', 'runs');
  return {
    bench: 'cluster',
    ok: redisRatio !== null && redisRatio >= 0.5,
    concurrency: CONCURRENCY,
    seconds_per_phase: args.seconds,
    stores: figures,
    ratios_to_memory: {
      file_runs: ratio('file', 'runs'),
      redis_runs: redisRatio,
      file_autosave: ratio('file', 'autosave'),
      redis_autosave: ratio('redis', 'autosave'),
    },
    target: { redis_runs_ratio_min: 0.5 },
    note: `runs = the runs benchmark's iteration unchanged (POST /v1/sessions {} + POST runs {wait:true}; one read tool round, so one loop checkpoint written to and removed from the store per run, then a 20-chunk answer); autosave = the same with {autoSave: true} sessions (a snapshot per run as well); redis = REDIS_URL (snapshots, checkpoints, events through Redis streams); each store: a built server in its own process (dist/src/main.js), provider and ${CONCURRENCY} clients in the bench process, ${WARMUP_SECONDS} s warm-up`,
  };
}

async function measureStore(store: Store, providerBaseUrl: string, redisUrl: string, seconds: number): Promise<Record<string, unknown>> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-cluster-ws-')));
  const dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-cluster-data-')));
  writeFileSync(join(root, BENCH_FILE.path), BENCH_FILE.content);
  const server = await startServerProcess({
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: providerBaseUrl,
    A3S_MODEL: 'openai/bench-model',
    A3S_DATA_DIR: dataDir,
    A3S_WORKSPACE_ROOTS: root,
    ...(store === 'redis' ? { REDIS_URL: redisUrl, A3S_REDIS_KEY_PREFIX: `a3s-bench-${process.pid}:` } : { A3S_STORAGE_BACKEND: store }),
  });
  try {
    const params = { baseUrl: server.url, concurrency: CONCURRENCY, seconds };
    await runsLoad({ ...params, seconds: WARMUP_SECONDS });
    const runs = await runsLoad(params);
    const autosave = await autoSaveLoad(params);
    return { runs: summarize(runs), autosave: summarize(autosave), ...(server.exitStatus() !== undefined ? { server_exit: server.exitStatus() } : {}) };
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The runs iteration with an autoSave session, so every run also stores a snapshot. */
async function autoSaveLoad(params: { baseUrl: string; concurrency: number; seconds: number }): Promise<LoadFigures> {
  const client = createJsonClient(params.baseUrl, params.concurrency);
  try {
    return await closedLoop(params, async () => {
      const created = await client.post('/v1/sessions', { autoSave: true });
      const session = (created.body as { session?: { id?: unknown } } | null)?.session;
      if (created.status !== 201 || typeof session?.id !== 'string') throw new UnexpectedResponse(`create session: ${created.status} ${JSON.stringify(created.body).slice(0, 300)}`);
      const t0 = performance.now();
      const run = await client.post(`/v1/sessions/${session.id}/runs`, { input: `What is in ${BENCH_FILE.path}?`, wait: true });
      const elapsed = performance.now() - t0;
      const body = run.body as { run?: { status?: unknown }; result?: { toolCallsCount?: unknown } } | null;
      if (run.status !== 200 || body?.run?.status !== 'completed' || body.result?.toolCallsCount !== 1) throw new UnexpectedResponse(`run: ${run.status} ${JSON.stringify(body).slice(0, 300)}`);
      return elapsed;
    });
  } finally {
    client.close();
  }
}

function summarize(figures: LoadFigures): Record<string, unknown> {
  return {
    runs_per_s: round(figures.count / figures.seconds, 1),
    p50_ms: round(percentile(figures.latenciesMs, 50)),
    p99_ms: round(percentile(figures.latenciesMs, 99)),
    run_p50_ms: round(percentile(figures.innerLatenciesMs, 50)),
    runs: figures.count,
    errors: figures.errors,
    ...(figures.firstError !== undefined ? { first_error: figures.firstError.slice(0, 300) } : {}),
  };
}
