import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisCluster } from '../test/support/redis-cluster.js';
import { startRedisServer } from '../test/support/redis-server.js';
import type { BenchArgs } from './bench-args.js';
import { measureBalancer } from './balancer-bench.js';
import { loadSummary } from './load-summary.js';
import { startBenchProvider } from './bench-provider.js';
import { BENCH_FILE } from './bench-server.js';
import { round } from './bench-stats.js';
import type { LoadFigures } from './driver-protocol.js';
import { closedLoop, createJsonClient, UnexpectedResponse } from './http-load.js';
import {
  RedisCounterProbe,
  type RedisNodeCounters,
  redisPerRun,
  redisUsageBetween,
  type RedisUsage,
} from './redis-command-stats.js';
import { RUNS_PROVIDER, runsLoad } from './runs-bench.js';
import { startServerProcess } from './server-process.js';

const CONCURRENCY = 20;
const WARMUP_SECONDS = 1;
/** Idle window after the load phases: what the live sessions' lease renewals alone cost (renewed every 15 s / 3). */
const IDLE_SECONDS = 10;
/** Each workload at concurrency 1 under MONITOR, to count the commands the server sends (not timed). */
const SAMPLE_SECONDS = 1;
const STORES = ['memory', 'file', 'redis', 'redis-cluster', 'balancer'] as const;
/** The cluster secret the Redis stores' servers share (required with Redis). */
const BENCH_CLUSTER_SECRET = 'bench-cluster-secret-0123456789abcdef';
type Store = (typeof STORES)[number];

/** Where a Redis store's server points and which nodes the bench reads counters from. */
interface RedisTarget {
  env: Record<string, string>;
  nodes: string[];
}

/**
 * `cluster`: the `runs` workload at concurrency 20 against a built server process on each store in turn
 * (memory, file, Redis through REDIS_URL on a throwaway redis-server, and a local Redis Cluster of 3 masters
 * with a replica each through REDIS_CLUSTER_NODES), twice per store: as `runs` runs it (checkpoints go through
 * the store, no snapshot), and with `autoSave: true` sessions (a snapshot per run too). Prints runs/s and p50
 * for each and the ratios to the memory store, and for the Redis stores the Redis commands and bytes per run
 * (INFO deltas over the masters) and the bytes Redis holds per session; target: Redis >= 50% of memory.
 */
export async function runClusterBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const provider = await startBenchProvider(RUNS_PROVIDER);
  const figures: Record<string, Record<string, unknown>> = {};
  try {
    for (const store of selectedStores(args))
      figures[store] = await measureStore(store, provider.baseUrl, args.seconds);
  } finally {
    await provider.close();
  }
  const ratio = (store: Store, workload: 'runs' | 'autosave'): number | null => {
    const base = (figures.memory?.[workload] as { runs_per_s?: number } | undefined)?.runs_per_s;
    const value = (figures[store]?.[workload] as { runs_per_s?: number } | undefined)?.runs_per_s;
    return base && value !== undefined ? round(value / base, 2) : null;
  };
  const redisRatio = ratio('redis', 'runs');
  const clusterRatio = ratio('redis-cluster', 'runs');
  return {
    bench: 'cluster',
    ok: redisRatio !== null && redisRatio >= 0.5,
    redis_cluster_ok: clusterRatio !== null && clusterRatio >= 0.5,
    concurrency: CONCURRENCY,
    seconds_per_phase: args.seconds,
    stores: figures,
    ratios_to_memory: {
      file_runs: ratio('file', 'runs'),
      redis_runs: redisRatio,
      redis_cluster_runs: clusterRatio,
      file_autosave: ratio('file', 'autosave'),
      redis_autosave: ratio('redis', 'autosave'),
      redis_cluster_autosave: ratio('redis-cluster', 'autosave'),
    },
    balancer_ok: (figures.balancer as { ok?: boolean } | undefined)?.ok ?? null,
    target: { redis_runs_ratio_min: 0.5, redis_cluster_runs_ratio_min: 0.5 },
    note: [
      `runs = the runs benchmark's iteration unchanged (POST /v1/sessions {} + POST runs {wait:true}; one read tool round, so one loop checkpoint written to and removed from the store per run, then a 20-chunk answer); autosave = the same with {autoSave: true} sessions (a snapshot per run as well); redis = REDIS_URL (snapshots, checkpoints, events through Redis streams); each store: a built server in its own process (dist/src/main.js), provider and ${CONCURRENCY} clients in the bench process, ${WARMUP_SECONDS} s warm-up`,
      `redis-cluster = REDIS_CLUSTER_NODES on a local Redis Cluster (3 masters + 3 replicas, all on this machine's CPUs beside the server and the bench); fenced writes (snapshot saves, lease takeovers, checkpoints) wait for one replica's acknowledgement (WAIT 1, the default with replicas), which is measured here; ok is the single-Redis target, redis_cluster_ok the same ratio for the cluster, reported separately because six redis-server processes share the two CPUs here`,
      `redis_per_run: INFO deltas over the phase summed over the masters (replicas excluded; repl_bytes_out is what the masters sent their replicas), divided by the runs completed in the phase, the bench's own INFO calls taken out; commands = INFO commandstats calls, so a script (evalsha) counts once plus once per command it runs; bytes_in = bytes the server sent to Redis, bytes_out = bytes it received (replication taken out); cpu_ms = CPU time (user + system) of the masters; redis_bytes_per_session = used_memory delta over the phase / sessions created in it (the runs workload's sessions are not saved: only their event streams, leases and epochs stay), redis_keys_per_session likewise; idle = ${IDLE_SECONDS} s without load after both phases (lease renewals of every session still live on the node); redis_requests_per_run = from MONITOR on the masters during ${SAMPLE_SECONDS} s of the workload at concurrency 1 before the timed phases: sent = commands the server sent Redis (wire requests) per run, in_scripts = commands its Lua scripts ran there; sample_session = MEMORY USAGE of each key of one autoSave session after its run`,
      `balancer = two built nodes on one redis-server behind Debian's nginx (deploy/nginx.conf, plain round-robin), sharing a workspace root: direct_to_owner = the runs workload with ${CONCURRENCY / 2} clients on each node, every request to the node that created the session; through_balancer = the same ${CONCURRENCY} clients through nginx, so about half the run requests reach the other node and are forwarded (signed hop, streamed back); server_cpu_ms_per_run = CPU of both nodes per run (nginx excluded); hop = sequential GET /v1/sessions/:id straight to the owner against the same GET sent to the other node (forwarded), and the Redis commands a forward adds (MONITOR, forwarded GETs less direct ones); balancer_ok: ratio_to_direct >= 0.85 and added_p50_ms <= 2`,
    ],
  };
}

/** `--stores a,b` (a subset of STORES, in STORES order), or every store. */
function selectedStores(args: BenchArgs): Store[] {
  const given = args.flags.get('stores');
  if (given === undefined) return [...STORES];
  const names = given.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(STORES as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new Error(`--stores takes a comma-separated subset of ${STORES.join(',')}, got ${given}`);
  return STORES.filter((store) => names.includes(store));
}

async function measureStore(store: Store, providerBaseUrl: string, seconds: number): Promise<Record<string, unknown>> {
  if (store === 'balancer') return measureBalancer(providerBaseUrl, seconds);
  if (store === 'redis') {
    const redis = await startRedisServer();
    try {
      return await measureServer(store, providerBaseUrl, seconds, {
        env: { REDIS_URL: redis.url, A3S_CLUSTER_SECRET: BENCH_CLUSTER_SECRET },
        nodes: [`127.0.0.1:${redis.port}`],
      });
    } finally {
      await redis.stop();
    }
  }
  if (store === 'redis-cluster') {
    const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    try {
      return await measureServer(store, providerBaseUrl, seconds, {
        env: { REDIS_CLUSTER_NODES: cluster.seeds, A3S_CLUSTER_SECRET: BENCH_CLUSTER_SECRET },
        nodes: cluster.nodes,
      });
    } finally {
      await cluster.stop();
    }
  }
  return measureServer(store, providerBaseUrl, seconds, undefined);
}

async function measureServer(
  store: Store,
  providerBaseUrl: string,
  seconds: number,
  redis: RedisTarget | undefined,
): Promise<Record<string, unknown>> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-cluster-ws-')));
  const dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-cluster-data-')));
  writeFileSync(join(root, BENCH_FILE.path), BENCH_FILE.content);
  const prefix = `a3s-bench-${process.pid}:`;
  const server = await startServerProcess({
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: providerBaseUrl,
    A3S_MODEL: 'openai/bench-model',
    A3S_DATA_DIR: dataDir,
    A3S_WORKSPACE_ROOTS: root,
    ...(redis !== undefined ? { ...redis.env, A3S_REDIS_KEY_PREFIX: prefix } : { A3S_STORAGE_BACKEND: store }),
  });
  const probe = redis !== undefined ? await RedisCounterProbe.open(redis.nodes) : undefined;
  try {
    const params = { baseUrl: server.url, concurrency: CONCURRENCY, seconds };
    await runsLoad({ ...params, seconds: WARMUP_SECONDS });
    const sampled = probe !== undefined ? await sampleRequests(probe, server.url) : undefined;
    const c0 = await probe?.read();
    const runs = await runsLoad(params);
    const c1 = await probe?.read();
    const autosave = await autoSaveLoad(params);
    const c2 = await probe?.read();
    const out: Record<string, unknown> = {
      runs: { ...summarize(runs, c0, c1), ...(sampled !== undefined ? { redis_requests_per_run: sampled.runs } : {}) },
      autosave: {
        ...summarize(autosave, c1, c2),
        ...(sampled !== undefined ? { redis_requests_per_run: sampled.autosave } : {}),
      },
    };
    if (probe !== undefined && c2 !== undefined) {
      const liveSessions = await liveSessionCount(server.url);
      await sleep(IDLE_SECONDS * 1000);
      const c3 = await probe.read();
      out.idle = idleFigures(redisUsageBetween(c2, c3), liveSessions);
      out.sample_session = await sampleSession(server.url, probe, prefix).catch((error: unknown) => ({
        error: error instanceof Error ? error.message.slice(0, 300) : String(error),
      }));
      out.redis_nodes = {
        masters: c3.filter((node) => node.role === 'master').length,
        replicas: c3.filter((node) => node.role === 'replica').length,
      };
    }
    if (server.exitStatus() !== undefined) out.server_exit = server.exitStatus();
    // A phase with errors: the server's last log lines say why (it logs at warn level).
    if (runs.errors + autosave.errors > 0) out.server_log_tail = server.output().slice(-2000);
    return out;
  } finally {
    probe?.close();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The runs iteration with an autoSave session, so every run also stores a snapshot. */
async function autoSaveLoad(params: { baseUrl: string; concurrency: number; seconds: number }): Promise<LoadFigures> {
  const client = createJsonClient(params.baseUrl, params.concurrency);
  try {
    return await closedLoop(params, () => autoSaveRun(client).then(({ elapsedMs }) => elapsedMs));
  } finally {
    client.close();
  }
}

/** One autoSave session created and run to completion; the run request's milliseconds and the session id. */
async function autoSaveRun(
  client: ReturnType<typeof createJsonClient>,
): Promise<{ elapsedMs: number; sessionId: string }> {
  const created = await client.post('/v1/sessions', { autoSave: true });
  const session = (created.body as { session?: { id?: unknown } } | null)?.session;
  if (created.status !== 201 || typeof session?.id !== 'string')
    throw new UnexpectedResponse(`create session: ${created.status} ${JSON.stringify(created.body).slice(0, 300)}`);
  const t0 = performance.now();
  const run = await client.post(`/v1/sessions/${session.id}/runs`, {
    input: `What is in ${BENCH_FILE.path}?`,
    wait: true,
  });
  const elapsedMs = performance.now() - t0;
  const body = run.body as { run?: { status?: unknown }; result?: { toolCallsCount?: unknown } } | null;
  if (run.status !== 200 || body?.run?.status !== 'completed' || body.result?.toolCallsCount !== 1)
    throw new UnexpectedResponse(`run: ${run.status} ${JSON.stringify(body).slice(0, 300)}`);
  return { elapsedMs, sessionId: session.id };
}

function summarize(
  figures: LoadFigures,
  before: RedisNodeCounters[] | undefined,
  after: RedisNodeCounters[] | undefined,
): Record<string, unknown> {
  const out = loadSummary(figures);
  if (before !== undefined && after !== undefined) {
    const usage = redisUsageBetween(before, after);
    // Every iteration creates a session, failed ones included (a failed run still left its session behind).
    const sessions = figures.count + figures.errors;
    out.redis_per_run = redisPerRun(usage, figures.count);
    out.redis_bytes_per_session = sessions > 0 ? Math.round(usage.usedMemoryDelta / sessions) : null;
    out.redis_keys_per_session = sessions > 0 ? round(usage.keysDelta / sessions, 2) : null;
    if (usage.commands === 0)
      out.first_error ??= 'Redis saw no command during the phase: the server did not use this store';
  }
  return out;
}

function idleFigures(usage: RedisUsage, liveSessions: number | null): Record<string, unknown> {
  const perSecond = (value: number): number => round(value / IDLE_SECONDS, 1);
  return {
    seconds: IDLE_SECONDS,
    live_sessions: liveSessions,
    commands_per_s: perSecond(usage.commands),
    by_command_per_s: Object.fromEntries(
      Object.entries(usage.byCommand).map(([name, calls]) => [name, perSecond(calls)]),
    ),
    bytes_in_per_s: Math.round(usage.bytesIn / IDLE_SECONDS),
    bytes_out_per_s: Math.round(usage.bytesOut / IDLE_SECONDS),
    repl_bytes_out_per_s: Math.round(usage.replBytesOut / IDLE_SECONDS),
    cpu_ms_per_s: round((usage.cpuSeconds * 1000) / IDLE_SECONDS, 1),
  };
}

/**
 * The commands the server sends Redis per run (requests, by name) and the commands its scripts run there,
 * from MONITOR on every master during ${SAMPLE_SECONDS} s of each workload at concurrency 1 (before the timed
 * phases, so MONITOR's cost stays out of their runs/s).
 */
async function sampleRequests(
  probe: RedisCounterProbe,
  baseUrl: string,
): Promise<{ runs: Record<string, unknown> | null; autosave: Record<string, unknown> | null }> {
  const params = { baseUrl, concurrency: 1, seconds: SAMPLE_SECONDS };
  const perRun = async (load: () => Promise<LoadFigures>): Promise<Record<string, unknown> | null> => {
    let figures: LoadFigures | undefined;
    const counts = await probe.monitor(async () => {
      figures = await load();
    });
    const runs = figures?.count ?? 0;
    if (runs === 0) return null;
    return {
      sampled_runs: runs,
      sent: round(counts.sent / runs, 1),
      sent_by_command: Object.fromEntries(
        Object.entries(counts.sentByCommand).map(([name, calls]) => [name, round(calls / runs, 2)]),
      ),
      in_scripts: round(counts.inScripts / runs, 1),
    };
  };
  return { runs: await perRun(() => runsLoad(params)), autosave: await perRun(() => autoSaveLoad(params)) };
}

/** One more autoSave session run to completion, then MEMORY USAGE of each of its keys, by key part (`snapshot`, `events`, ...). */
async function sampleSession(
  baseUrl: string,
  probe: RedisCounterProbe,
  prefix: string,
): Promise<Record<string, unknown>> {
  const client = createJsonClient(baseUrl, 1);
  try {
    const { sessionId } = await autoSaveRun(client);
    const keys = await probe.memoryUsage(`${prefix}*${sessionId}*`);
    const parts: Record<string, number> = {};
    for (const [key, bytes] of Object.entries(keys)) {
      const part = key.slice(key.lastIndexOf('}:') + 2).split(':')[0] ?? key;
      parts[part] = (parts[part] ?? 0) + bytes;
    }
    return {
      keys: Object.keys(keys).length,
      bytes_by_part: parts,
      bytes: Object.values(keys).reduce((sum, bytes) => sum + bytes, 0),
    };
  } finally {
    client.close();
  }
}

/** `a3s_sessions_live` from GET /metrics, or null when it cannot be read. */
async function liveSessionCount(baseUrl: string): Promise<number | null> {
  const text = await fetch(`${baseUrl}/metrics`).then(
    (response) => (response.ok ? response.text() : ''),
    () => '',
  );
  const value = /^a3s_sessions_live(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1];
  return value === undefined ? null : Number(value);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
