import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNginx } from '../test/support/nginx-balancer.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { BENCH_FILE } from './bench-server.js';
import { percentile, round } from './bench-stats.js';
import type { LoadFigures } from './driver-protocol.js';
import { createJsonClient } from './http-load.js';
import { loadSummary } from './load-summary.js';
import { RedisCounterProbe } from './redis-command-stats.js';
import { runsLoad } from './runs-bench.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

const CONCURRENCY = 20;
const WARMUP_SECONDS = 1;
/** Sequential GETs of one session's info per path, for the latency a hop adds. */
const HOP_SAMPLES = 400;
/** Forwarded GETs under MONITOR, for the Redis commands a hop costs. */
const MONITOR_SAMPLES = 100;
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789abcdef';
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/** CPU milliseconds (user + system) a process has used, from /proc/<pid>/stat. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

function both(nodes: readonly ServerProcess[]): number {
  return nodes.reduce((sum, node) => sum + cpuMs(node.pid), 0);
}

function merged(parts: readonly LoadFigures[]): LoadFigures {
  const out: LoadFigures = {
    count: parts.reduce((sum, p) => sum + p.count, 0),
    errors: parts.reduce((sum, p) => sum + p.errors, 0),
    seconds: Math.max(...parts.map((p) => p.seconds)),
    latenciesMs: parts.flatMap((p) => p.latenciesMs),
    innerLatenciesMs: parts.flatMap((p) => p.innerLatenciesMs),
  };
  const firstError = parts.find((p) => p.firstError !== undefined)?.firstError;
  if (firstError !== undefined) out.firstError = firstError;
  return out;
}

function phase(figures: LoadFigures, serverCpuMs: number): Record<string, unknown> {
  const summary = loadSummary(figures);
  return {
    runs_per_s: summary.runs_per_s,
    server_cpu_ms_per_run: figures.count > 0 ? round(serverCpuMs / figures.count, 3) : null,
    ...summary,
  };
}

/** `count` sequential GETs of `path` on `baseUrl`; their milliseconds. */
async function sequentialGets(baseUrl: string, path: string, count: number): Promise<number[]> {
  const client = createJsonClient(baseUrl, 1);
  const out: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      const res = await client.get(path);
      if (res.status !== 200)
        throw new Error(`GET ${path} on ${baseUrl}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      out.push(performance.now() - t0);
    }
    return out;
  } finally {
    client.close();
  }
}

/**
 * The "through the balancer" row of `cluster`: two built server processes on one redis-server, sharing a
 * workspace root, behind Debian's nginx with deploy/nginx.conf (plain round-robin). The runs workload at
 * concurrency 20 (1) straight to the owners (half the clients on each node, every request to the node that
 * created the session) and (2) through nginx, where about half of the run requests reach the node that does
 * not own the session and are forwarded. Then the p50 a hop adds to a session-info GET (sequential, direct
 * to the owner against the same GET sent to the other node) and the Redis commands one forward costs
 * (MONITOR, forwarded GETs less direct ones), both measured first, while Redis holds no other session.
 */
export async function measureBalancer(providerBaseUrl: string, seconds: number): Promise<Record<string, unknown>> {
  const redis = await startRedisServer();
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-lb-bench-ws-')));
  const dataDirs = [0, 1].map(() => realpathSync(mkdtempSync(join(tmpdir(), 'a3s-lb-bench-data-'))));
  writeFileSync(join(root, BENCH_FILE.path), BENCH_FILE.content);
  const env = {
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: providerBaseUrl,
    A3S_MODEL: 'openai/bench-model',
    A3S_WORKSPACE_ROOTS: root,
    REDIS_URL: redis.url,
    A3S_REDIS_KEY_PREFIX: `a3s-lb-bench-${process.pid}:`,
    A3S_CLUSTER_SECRET: CLUSTER_SECRET,
    A3S_CLUSTER_PEER_URLS: 'http://127.0.0.1:*',
  };
  const nodes: ServerProcess[] = [];
  let lb: Awaited<ReturnType<typeof startNginx>> | undefined;
  let probe: RedisCounterProbe | undefined;
  try {
    nodes.push(await startServerProcess({ ...env, A3S_NODE_ID: 'node-a', A3S_DATA_DIR: dataDirs[0] ?? '' }));
    nodes.push(await startServerProcess({ ...env, A3S_NODE_ID: 'node-b', A3S_DATA_DIR: dataDirs[1] ?? '' }));
    const [a, b] = nodes as [ServerProcess, ServerProcess];
    lb = await startNginx([new URL(a.url).host, new URL(b.url).host]);
    // First, while Redis holds nothing else (no lease renewals of other sessions in the counts): one session on
    // A, asked about directly and through B (forwarded).
    const client = createJsonClient(a.url, 1);
    const created = await client.post('/v1/sessions', {});
    client.close();
    const id = (created.body as { session?: { id?: string } } | null)?.session?.id;
    if (created.status !== 201 || id === undefined) throw new Error(`create session: ${created.status}`);
    const path = `/v1/sessions/${id}`;
    await sequentialGets(b.url, path, 50);
    const directGets = await sequentialGets(a.url, path, HOP_SAMPLES);
    const forwardedGets = await sequentialGets(b.url, path, HOP_SAMPLES);
    probe = await RedisCounterProbe.open([`127.0.0.1:${redis.port}`]);
    const directCounts = await probe.monitor(async () => void (await sequentialGets(a.url, path, MONITOR_SAMPLES)));
    const forwardedCounts = await probe.monitor(async () => void (await sequentialGets(b.url, path, MONITOR_SAMPLES)));
    const perForward: Record<string, number> = {};
    for (const [name, calls] of Object.entries(forwardedCounts.sentByCommand)) {
      const extra = (calls - (directCounts.sentByCommand[name] ?? 0)) / MONITOR_SAMPLES;
      if (extra > 0) perForward[name] = round(extra, 2);
    }
    await runsLoad({ baseUrl: lb.url, concurrency: CONCURRENCY, seconds: WARMUP_SECONDS });

    let cpu0 = both(nodes);
    const direct = merged(
      await Promise.all([a, b].map((node) => runsLoad({ baseUrl: node.url, concurrency: CONCURRENCY / 2, seconds }))),
    );
    const directCpu = both(nodes) - cpu0;
    cpu0 = both(nodes);
    const through = await runsLoad({ baseUrl: lb.url, concurrency: CONCURRENCY, seconds });
    const throughCpu = both(nodes) - cpu0;

    const directPhase = phase(direct, directCpu);
    const throughPhase = phase(through, throughCpu);
    const ratio =
      (directPhase.runs_per_s as number) > 0
        ? round((throughPhase.runs_per_s as number) / (directPhase.runs_per_s as number), 2)
        : null;
    const added = round(percentile(forwardedGets, 50) - percentile(directGets, 50), 2);
    return {
      direct_to_owner: directPhase,
      through_balancer: throughPhase,
      ratio_to_direct: ratio,
      hop: {
        direct_get_p50_ms: round(percentile(directGets, 50), 2),
        forwarded_get_p50_ms: round(percentile(forwardedGets, 50), 2),
        added_p50_ms: added,
        redis_commands_per_forward: round((forwardedCounts.sent - directCounts.sent) / MONITOR_SAMPLES, 2),
        redis_commands_per_forward_by_command: perForward,
      },
      ok: ratio !== null && ratio >= 0.85 && added <= 2,
      target: { ratio_to_direct_min: 0.85, added_p50_ms_max: 2 },
    };
  } finally {
    probe?.close();
    await lb?.close();
    for (const node of nodes) await node.stop();
    await redis.stop();
    rmSync(root, { recursive: true, force: true });
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}
