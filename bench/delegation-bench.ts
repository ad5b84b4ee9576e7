import type { BenchArgs } from './bench-args.js';
import { BENCH_FILE, startBenchServer } from './bench-server.js';
import { percentile, round } from './bench-stats.js';
import { startDriver, type Driver } from './driver-client.js';
import type {
  BenchProviderOptions,
  DelegationLoadFigures,
  DelegationLoadParams,
  LoadFigures,
} from './driver-protocol.js';
import { closedLoop, createJsonClient, UnexpectedResponse } from './http-load.js';
import { RUNS_PROVIDER } from './runs-bench.js';

const CHILDREN = 8;
const CHILD_PREFIX = 'child ';
const ANSWER_CHUNKS = 5;
const CHUNK_TEXT = 'word ';
/** Provider calls one parent run makes: its own two, and two per child (a read round, then the answer). */
const PROVIDER_CALLS_PER_RUN = 2 + 2 * CHILDREN;
const PROVIDER: BenchProviderOptions = {
  answerChunks: ANSWER_CHUNKS,
  chunkText: CHUNK_TEXT,
  delegation: {
    parentToolCall: {
      name: 'parallel_task',
      arguments: {
        tasks: Array.from({ length: CHILDREN }, (_, i) => ({
          agent: 'explore',
          description: `child ${i + 1}`,
          prompt: `${CHILD_PREFIX}${i + 1}: read the file`,
        })),
      },
    },
    childPrefix: CHILD_PREFIX,
    childToolCall: { name: 'read', arguments: { file_path: BENCH_FILE.path } },
  },
};
/**
 * The parent session's body: the built-in default policy does not allow parallel_task (defaultDecision "ask",
 * no confirmations: denied), and a session's own policy replaces the default, which allowed `read`; the
 * children (explore) inherit it, so `read` is listed too.
 */
const SESSION_BODY = { permissionPolicy: { allow: ['read', 'parallel_task'] } };
const BENCH_FILE_FIRST_LINE = BENCH_FILE.content.split('\n')[0] as string;
const CONCURRENCIES = [1, 4] as const;
const PLAIN_CONCURRENCY = 20;
const WARMUP_SECONDS = 1;
/** The target: the server's CPU per child run is at most this multiple of a plain run's. */
const TARGET_CHILD_VS_PLAIN = 1.5;

type Measured<T extends LoadFigures> = T & { serverCpuMs: number };

/**
 * `delegation`: parent runs whose model calls `parallel_task` with 8 children (each one `read` round,
 * then a 5-chunk answer) at concurrency 1 and 4; prints parent runs/s, latency and the server's CPU per
 * child, against the CPU of a plain `runs` run measured in the same invocation.
 */
export async function runDelegationBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const driver = await startDriver();
  try {
    const { baseUrl } = await driver.call('start-provider', RUNS_PROVIDER);
    const bench = await startBenchServer({ providerBaseUrl: baseUrl });
    try {
      // The server is the only thing running in this process (clients and provider are in the driver), so
      // this process's CPU time over a phase is the server's CPU for that phase.
      const measure = async <T extends LoadFigures>(phase: () => Promise<T>): Promise<Measured<T>> => {
        const before = process.cpuUsage();
        const figures = await phase();
        const used = process.cpuUsage(before);
        return { ...figures, serverCpuMs: (used.user + used.system) / 1000 };
      };
      const plain = (seconds: number) =>
        measure(() => driver.call('runs-load', { baseUrl: bench.url, concurrency: PLAIN_CONCURRENCY, seconds }));
      const delegation = (concurrency: number, seconds: number) =>
        measure(() =>
          delegationPhase(driver, {
            baseUrl: bench.url,
            concurrency,
            seconds,
            expectedText: CHUNK_TEXT.repeat(ANSWER_CHUNKS),
          }),
        );

      // The baseline first, as `runs` measures it (its own warm-up, the runs provider unchanged).
      await plain(WARMUP_SECONDS);
      const baseline = await plain(args.seconds);
      const plainCpuPerRun = baseline.count > 0 ? baseline.serverCpuMs / baseline.count : Number.NaN;

      await driver.call('configure-provider', PROVIDER);
      const warm = await delegation(CONCURRENCIES[CONCURRENCIES.length - 1], WARMUP_SECONDS);
      if (warm.count === 0)
        throw new Error(`delegation warm-up completed no run: ${warm.firstError ?? 'no error recorded'}`);
      // A parent whose parallel_task failed still completes (the model answers the error): check the children ran.
      if (warm.providerRequests !== warm.count * PROVIDER_CALLS_PER_RUN) {
        throw new Error(
          `delegation warm-up: ${round(warm.providerRequests / warm.count, 2)} provider calls per parent run, expected ${PROVIDER_CALLS_PER_RUN} (the children did not all run); parallel_task returned: ${warm.parentToolResult ?? '(no tool result seen)'}`,
        );
      }
      // A denied read is far cheaper than a real one: the children must really read the file.
      if (!warm.childToolResult?.includes(BENCH_FILE_FIRST_LINE))
        throw new Error(
          `delegation warm-up: a child's read did not return the file: ${warm.childToolResult ?? '(no tool result seen)'}`,
        );
      const phases: Record<string, unknown> = {};
      for (const concurrency of CONCURRENCIES)
        phases[`c${concurrency}`] = summarize(await delegation(concurrency, args.seconds), plainCpuPerRun);

      return {
        bench: 'delegation',
        ...phases,
        plain_runs: {
          concurrency: PLAIN_CONCURRENCY,
          runs_per_s: round(baseline.count / baseline.seconds, 1),
          server_cpu_ms_per_run: round(plainCpuPerRun, 3),
          runs: baseline.count,
          errors: baseline.errors,
          ...(baseline.firstError !== undefined ? { first_error: baseline.firstError } : {}),
        },
        children_per_run: CHILDREN,
        target: { child_vs_plain_cpu_max: TARGET_CHILD_VS_PLAIN },
        seconds_per_phase: args.seconds,
        warmup_s: WARMUP_SECONDS,
        live_sessions_at_end: bench.server.ctx.agent.sessionCount,
        note: `one parent run = POST /v1/sessions {permissionPolicy:{allow:["read","parallel_task"]}} + POST /v1/sessions/:id/runs {input:"delegate", wait:true}; model: parallel_task with ${CHILDREN} explore tasks, each child a read tool round then a ${ANSWER_CHUNKS}-chunk answer, then the parent's ${ANSWER_CHUNKS}-chunk answer (${PROVIDER_CALLS_PER_RUN} provider calls); server_cpu_ms_per_child = server CPU (user + system) of the phase / (parent runs * ${CHILDREN}), so it carries the parent's share; p50/p99 over both requests, run_* over the run request alone; plain_runs is the \`runs\` workload at c${PLAIN_CONCURRENCY} on the same server, measured first; child_vs_plain_cpu = server_cpu_ms_per_child / plain server_cpu_ms_per_run; clients and provider in a separate process`,
      };
    } finally {
      await bench.close();
    }
  } finally {
    await driver.close();
  }
}

/** Runs one delegation phase in the driver. */
function delegationPhase(driver: Driver, params: DelegationLoadParams): Promise<DelegationLoadFigures> {
  return driver.call('delegation-load', params);
}

function summarize(figures: Measured<DelegationLoadFigures>, plainCpuPerRun: number): Record<string, unknown> {
  const perChild = figures.count > 0 ? figures.serverCpuMs / (figures.count * CHILDREN) : Number.NaN;
  return {
    parent_runs_per_s: round(figures.count / figures.seconds, 2),
    children_per_s: round((figures.count * CHILDREN) / figures.seconds, 1),
    p50_ms: round(percentile(figures.latenciesMs, 50)),
    p99_ms: round(percentile(figures.latenciesMs, 99)),
    run_p50_ms: round(percentile(figures.innerLatenciesMs, 50)),
    run_p99_ms: round(percentile(figures.innerLatenciesMs, 99)),
    server_cpu_ms_per_parent_run: figures.count > 0 ? round(figures.serverCpuMs / figures.count, 3) : null,
    server_cpu_ms_per_child: figures.count > 0 ? round(perChild, 3) : null,
    child_vs_plain_cpu:
      figures.count > 0 && Number.isFinite(plainCpuPerRun) ? round(perChild / plainCpuPerRun, 2) : null,
    // Should be exactly PROVIDER_CALLS_PER_RUN when every run completed: the children really ran.
    provider_calls_per_run: figures.count > 0 ? round(figures.providerRequests / figures.count, 2) : null,
    parent_runs: figures.count,
    errors: figures.errors,
    ...(figures.firstError !== undefined ? { first_error: figures.firstError } : {}),
  };
}

/** Driver side of `delegation`: the closed loop of create-session + delegating run-and-wait requests. */
export async function delegationLoad(params: DelegationLoadParams): Promise<LoadFigures> {
  const client = createJsonClient(params.baseUrl, params.concurrency);
  try {
    return await closedLoop(params, async () => {
      const created = await client.post('/v1/sessions', SESSION_BODY);
      const session = (created.body as { session?: { id?: unknown } } | null)?.session;
      if (created.status !== 201 || typeof session?.id !== 'string')
        throw new UnexpectedResponse(`create session: ${created.status} ${JSON.stringify(created.body)}`);
      const t0 = performance.now();
      const run = await client.post(`/v1/sessions/${session.id}/runs`, { input: 'delegate', wait: true });
      const elapsed = performance.now() - t0;
      const body = run.body as { run?: { status?: unknown }; result?: { text?: unknown } } | null;
      if (run.status !== 200 || body?.run?.status !== 'completed' || body.result?.text !== params.expectedText) {
        throw new UnexpectedResponse(`run: ${run.status} ${JSON.stringify(body).slice(0, 500)}`);
      }
      return elapsed;
    });
  } finally {
    client.close();
  }
}
