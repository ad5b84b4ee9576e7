import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import type { BenchArgs } from './bench-args.js';
import type { Telemetry } from '../src/runtime/ports/telemetry.js';
import { obtainGc } from './bench-gc.js';
import { BENCH_FILE, startBenchServer } from './bench-server.js';
import { percentile, round } from './bench-stats.js';
import { startDriver } from './driver-client.js';
import type { BenchProviderOptions, LoadFigures, LoadParams } from './driver-protocol.js';
import { closedLoop, createJsonClient, UnexpectedResponse } from './http-load.js';

const ANSWER_CHUNKS = 20;
const CHUNK_TEXT = 'word ';
/** What the bench provider answers in the `runs` workload (also the baseline of `delegation`). */
export const RUNS_PROVIDER: BenchProviderOptions = {
  answerChunks: ANSWER_CHUNKS,
  chunkText: CHUNK_TEXT,
  toolCall: { name: 'read', arguments: { file_path: BENCH_FILE.path } },
};
const WARMUP_SECONDS = 1;

/**
 * `runs`: sessions created and driven to completion (one `read` tool round, then a 20-chunk answer)
 * at concurrency 1 and 20, each for a fixed time; prints runs/s and latency percentiles.
 */
export async function runRunsBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const gc = obtainGc();
  const gcTime = watchGc();
  const driver = await startDriver();
  try {
    const { baseUrl } = await driver.call('start-provider', RUNS_PROVIDER);
    // `--tracing on`: spans of every request, run, provider and tool call exported to a collector in the driver.
    const tracing = tracingFlag(args);
    if (tracing) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = (await driver.call('otlp-sink', null)).url;
    const bench = await startBenchServer({ providerBaseUrl: baseUrl });
    try {
      // The server is the only thing running in this process (clients and provider are in the driver), so
      // this process's CPU time over a phase is the server's CPU (and GC) for that phase's runs.
      const load = async (concurrency: number, seconds: number): Promise<PhaseFigures> => {
        const before = process.cpuUsage();
        const gcBefore = gcTime.snapshot();
        const figures = await driver.call('runs-load', { baseUrl: bench.url, concurrency, seconds });
        const used = process.cpuUsage(before);
        return { ...figures, serverCpuMs: (used.user + used.system) / 1000, gc: gcTime.since(gcBefore) };
      };
      const warmup = await load(20, WARMUP_SECONDS);
      // Every measured run leaves one idle session holding its finished run (retention defaults on): the
      // memory they retain, after a full gc, divided by their number.
      await settle();
      gc.collect();
      const memoryBefore = process.memoryUsage();
      const sessionsBefore = bench.server.ctx.agent.sessionCount;
      const c1 = await load(1, args.seconds);
      const c20 = await load(20, args.seconds);
      await settle();
      gc.collect();
      const memoryAfter = process.memoryUsage();
      const retained = bench.server.ctx.agent.sessionCount - sessionsBefore;
      const perRetained = (key: 'rss' | 'heapUsed') =>
        retained > 0 ? Math.round((memoryAfter[key] - memoryBefore[key]) / retained) : null;
      // The spans still buffered are exported before the counts are read (shutdown flushes them).
      const exported = tracing ? await flushTraces(bench.server.ctx.telemetry, driver) : undefined;
      return {
        bench: 'runs',
        tracing: tracing ? 'on' : 'off',
        ...(exported
          ? {
              otlp_exports: exported.exports,
              otlp_bytes_per_run: exported.bytesPerRun(warmup.count + c1.count + c20.count),
            }
          : {}),
        c1: summarize(c1),
        c20: summarize(c20),
        rss_bytes_per_retained_session_run: perRetained('rss'),
        heap_bytes_per_retained_session_run: perRetained('heapUsed'),
        retained_sessions_measured: retained,
        gc: gc.source,
        target: { c20_runs_per_s: 300, c1_p50_ms: 5 },
        seconds_per_phase: args.seconds,
        warmup_s: WARMUP_SECONDS,
        live_sessions_at_end: bench.server.ctx.agent.sessionCount,
        note: 'one run = POST /v1/sessions + POST /v1/sessions/:id/runs {wait:true}; model: read tool call, then a 20-chunk answer; p50/p99 over both requests, run_* over the run request alone; server_cpu_ms_per_run = CPU time (user + system) of the server process per run; gc_ms_per_run = garbage-collection pause time per run; *_per_retained_session_run = memory held, after a full gc, by the sessions the measured runs left idle (each with its finished run, retention on by default); clients and provider in a separate process',
      };
    } finally {
      await bench.close();
    }
  } finally {
    gcTime.stop();
    await driver.close();
  }
}

function tracingFlag(args: BenchArgs): boolean {
  const value = args.flags.get('tracing') ?? 'off';
  if (value !== 'on' && value !== 'off') throw new Error(`--tracing must be on or off, got ${value}`);
  return value === 'on';
}

async function flushTraces(
  telemetry: Telemetry | undefined,
  driver: Awaited<ReturnType<typeof startDriver>>,
): Promise<{ exports: number; bytesPerRun(runs: number): number }> {
  if (telemetry === undefined) throw new Error('--tracing on, but the server started without traces');
  await telemetry.shutdown();
  const { exports, bytes } = await driver.call('otlp-sink', null);
  return { exports, bytesPerRun: (runs) => (runs > 0 ? Math.round(bytes / runs) : 0) };
}

/** One phase's load figures with the server's CPU and garbage collection over it. */
type PhaseFigures = LoadFigures & { serverCpuMs: number; gc: GcFigures };

/** Garbage collections over a phase: pause time (ms) and count, minor (scavenge) and major (mark-compact). */
interface GcFigures {
  ms: number;
  minor: number;
  major: number;
}

/** Counts this process's garbage collections (the server's: it is the only thing running here). */
function watchGc(): { snapshot(): GcFigures; since(before: GcFigures): GcFigures; stop(): void } {
  const total: GcFigures = { ms: 0, minor: 0, major: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      total.ms += entry.duration;
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) total.minor += 1;
      else if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) total.major += 1;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    snapshot: () => ({ ...total }),
    since: (before) => ({
      ms: total.ms - before.ms,
      minor: total.minor - before.minor,
      major: total.major - before.major,
    }),
    stop: () => observer.disconnect(),
  };
}

/** Lets pending callbacks and socket teardown finish before a measurement. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 200));
}

function summarize(figures: PhaseFigures): Record<string, unknown> {
  const perRun = (value: number, digits: number) => (figures.count > 0 ? round(value / figures.count, digits) : null);
  return {
    runs_per_s: round(figures.count / figures.seconds, 1),
    server_cpu_ms_per_run: perRun(figures.serverCpuMs, 3),
    gc_ms_per_run: perRun(figures.gc.ms, 3),
    minor_gcs_per_1000_runs: perRun(figures.gc.minor * 1000, 1),
    major_gcs: figures.gc.major,
    p50_ms: round(percentile(figures.latenciesMs, 50)),
    p99_ms: round(percentile(figures.latenciesMs, 99)),
    run_p50_ms: round(percentile(figures.innerLatenciesMs, 50)),
    run_p99_ms: round(percentile(figures.innerLatenciesMs, 99)),
    runs: figures.count,
    errors: figures.errors,
    ...(figures.firstError !== undefined ? { first_error: figures.firstError } : {}),
  };
}

/** Driver side of `runs`: the closed loop of create-session + run-and-wait requests. */
export async function runsLoad(params: LoadParams): Promise<LoadFigures> {
  const client = createJsonClient(params.baseUrl, params.concurrency);
  const expected = CHUNK_TEXT.repeat(ANSWER_CHUNKS);
  try {
    return await closedLoop(params, async () => {
      const created = await client.post('/v1/sessions', {});
      const session = (created.body as { session?: { id?: unknown } } | null)?.session;
      if (created.status !== 201 || typeof session?.id !== 'string')
        throw new UnexpectedResponse(`create session: ${created.status} ${JSON.stringify(created.body)}`);
      const t0 = performance.now();
      const run = await client.post(`/v1/sessions/${session.id}/runs`, {
        input: `What is in ${BENCH_FILE.path}?`,
        wait: true,
      });
      const elapsed = performance.now() - t0;
      const body = run.body as {
        run?: { status?: unknown };
        result?: { text?: unknown; toolCallsCount?: unknown };
      } | null;
      if (
        run.status !== 200 ||
        body?.run?.status !== 'completed' ||
        body.result?.text !== expected ||
        body.result.toolCallsCount !== 1
      ) {
        throw new UnexpectedResponse(`run: ${run.status} ${JSON.stringify(body).slice(0, 500)}`);
      }
      return elapsed;
    });
  } finally {
    client.close();
  }
}
