import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { numberFlag, type BenchArgs } from './bench-args.js';
import { startBenchProvider } from './bench-provider.js';
import { round } from './bench-stats.js';
import WebSocket from 'ws';
import { A3sClient, type EventStream } from '../src/client/index.js';
import { procStats } from './proc-stats.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/** One sample of the server process. */
interface Sample {
  t_s: number;
  rss_mb: number;
  heap_used_mb: number | null;
  /** V8's committed heap (nodejs_heap_size_total_bytes): RSS minus it is what lives outside the JS heap. */
  heap_total_mb: number | null;
  fds: number;
  children: number;
  iterations: number;
  errors: number;
}

const SAMPLE_EVERY_MS = 15_000;
const ANSWER = 'soak answer ';

/**
 * `soak`: a built server process under mixed load for `--minutes N` at `--concurrency C`: each iteration
 * creates a session, follows its events on a WebSocket, runs one `bash` tool round and closes the session.
 * Samples the server's RSS, heap, open fds and descendant processes every 15 s, waits up to `--settle-seconds` (default 120)
 * after the load until they are back (after a `--warmup-seconds` warm-up, default 10), and checks RSS is back within 10% of its start, fds and children back to start, 0 errors.
 */
export async function runSoakBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const minutes = numberFlag(args, 'minutes', 5);
  const concurrency = Math.floor(numberFlag(args, 'concurrency', 16));
  const settleSeconds = numberFlag(args, 'settle-seconds', 120);
  const warmupSeconds = numberFlag(args, 'warmup-seconds', 10);
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-soak-ws-')));
  const dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-soak-data-')));
  const configFile = join(dataDir, 'soak-config.json');
  writeFileSync(configFile, JSON.stringify({ defaultPermissionPolicy: { enabled: false } }));
  const provider = await startBenchProvider({
    answerChunks: 4,
    chunkText: ANSWER,
    toolCall: { name: 'bash', arguments: { command: 'echo soak' } },
  });
  let server: ServerProcess | undefined;
  try {
    server = await startServerProcess({
      OPENAI_API_KEY: 'sk-soak',
      OPENAI_BASE_URL: provider.baseUrl,
      A3S_MODEL: 'openai/soak-model',
      A3S_STORAGE_BACKEND: 'memory',
      A3S_DATA_DIR: dataDir,
      A3S_WORKSPACE_ROOTS: root,
      A3S_CONFIG: configFile,
    });
    const live = server;
    const client = new A3sClient({ baseUrl: live.url, WebSocket });
    const boot = await sample(live, 0, 0, 0);
    const errors: string[] = [];
    let iterations = 0;
    const iteration = async (): Promise<void> => {
      try {
        await soakIteration(client);
        iterations += 1;
      } catch (error) {
        errors.push(error instanceof Error ? error.message : String(error));
      }
    };
    // Warm up (JIT, pools, first sandbox spawns) so "start" is the server as it runs, not as it boots.
    const warmupEnd = performance.now() + warmupSeconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < warmupEnd && live.exitStatus() === undefined) await iteration();
      }),
    );
    await sleep(5000);
    const t0 = performance.now();
    const elapsed = (): number => (performance.now() - t0) / 1000;
    const start = await sample(live, 0, iterations, errors.length);
    const timeline: Sample[] = [start];
    const warmupIterations = iterations;
    const warmupErrors = errors.length;
    const deadline = t0 + minutes * 60_000;
    const sampler = setInterval(() => {
      void sample(live, elapsed(), iterations, errors.length).then((s) => {
        timeline.push(s);
        process.stderr.write(`soak ${JSON.stringify(s)}\n`);
      });
    }, SAMPLE_EVERY_MS);
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline && live.exitStatus() === undefined) await iteration();
      }),
    );
    clearInterval(sampler);
    const loadEnd = await sample(live, elapsed(), iterations, errors.length);
    timeline.push(loadEnd);
    const loadSeconds = elapsed();
    // The server cannot be made to collect garbage from outside: let it idle and sample as it settles, until
    // it is back (V8's memory reducer shrinks the heap some seconds after the allocation rate drops) or the
    // settle time is over.
    const settle: Sample[] = [];
    const settled = (s: Sample): boolean =>
      s.rss_mb <= start.rss_mb * 1.1 && s.fds <= start.fds && s.children <= start.children;
    for (let waited = 0; waited < settleSeconds && !settle.some(settled); waited += 2) {
      await sleep(2000);
      settle.push(await sample(live, elapsed(), iterations, errors.length));
    }
    const end = settle.at(-1) ?? loadEnd;
    timeline.push(end);
    const crashed = live.exitStatus();
    const peak = (key: 'rss_mb' | 'fds' | 'children'): number => Math.max(...timeline.map((s) => s[key]));
    const peakHeap = Math.max(...timeline.map((s) => s.heap_used_mb ?? 0));
    const targets = {
      rss_back_within_10pct: end.rss_mb <= start.rss_mb * 1.1,
      fds_back_to_start: end.fds <= start.fds,
      children_back_to_start: end.children <= start.children,
      zero_errors: errors.length === 0 && crashed === undefined,
    };
    return {
      bench: 'soak',
      ok: Object.values(targets).every(Boolean),
      targets,
      minutes,
      concurrency,
      load_seconds: round(loadSeconds, 1),
      warmup_seconds: warmupSeconds,
      settle_seconds: settleSeconds,
      // Idle seconds after the load until RSS, fds and children were back (null: not within settle_seconds).
      settled_after_s: settle.some(settled) ? round(end.t_s - loadEnd.t_s, 1) : null,
      iterations: iterations - warmupIterations,
      iterations_per_s: round((iterations - warmupIterations) / loadSeconds, 1),
      errors: errors.length,
      warmup_errors: warmupErrors,
      error_sample: [...new Set(errors)].slice(0, 5).map((e) => e.slice(0, 300)),
      server_exit: crashed ?? null,
      rss_mb: {
        boot: boot.rss_mb,
        start: start.rss_mb,
        peak: peak('rss_mb'),
        load_end: loadEnd.rss_mb,
        end: end.rss_mb,
        growth_pct: round(((end.rss_mb - start.rss_mb) / start.rss_mb) * 100, 1),
      },
      heap_used_mb: { start: start.heap_used_mb, peak: round(peakHeap), end: end.heap_used_mb },
      // RSS outside V8's committed heap (native buffers, sockets, code): flat means the RSS growth is the JS heap's size.
      rss_outside_heap_mb: outsideHeap(start, end),
      fds: { boot: boot.fds, start: start.fds, peak: peak('fds'), end: end.fds, growth: end.fds - start.fds },
      children: {
        start: start.children,
        peak: peak('children'),
        end: end.children,
        growth: end.children - start.children,
      },
      timeline,
      settle,
      note: `one iteration (through the typed client) = client.session() (POST /v1/sessions) + session.events({after: 0}) (events WebSocket) + session.send() (POST runs {wait:true}) (model: one bash "echo soak" round, then a 4-chunk answer; agent_end checked on the socket) + session.close() (DELETE); start = after ${warmupSeconds} s of the same load (warm-up) and 5 s idle; end = idle until back or ${settleSeconds} s (GC cannot be forced from outside; V8 shrinks its heap once the allocation rate drops); heap from /metrics nodejs_heap_size_used_bytes; fds = /proc/<pid>/fd; children = descendant processes in /proc; server = dist/src/main.js in its own process, memory store, clients and provider in the bench process`,
    };
  } finally {
    await server?.stop();
    await provider.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Create a session, follow it, run one tool round to completion, see agent_end on the socket, close it:
 * through the typed client, as a user of the server would write it.
 */
async function soakIteration(client: A3sClient): Promise<void> {
  const session = await client.session();
  const events = session.events({ after: 0 });
  let failure: unknown;
  try {
    const result = await session.send('soak');
    if (result.toolCallsCount !== 1 || result.text !== ANSWER.repeat(4))
      throw new Error(`run: ${JSON.stringify(result).slice(0, 300)}`);
    await seeAgentEnd(events, 10_000);
  } catch (error) {
    failure = error;
  }
  // Close whatever happened, so a failed iteration does not leave a live session behind.
  events.close();
  const closed = await session.close().catch((error: unknown) => error);
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
  if (closed !== true) throw new Error(`close: ${closed instanceof Error ? closed.message : String(closed)}`);
}

/** Read the session's event stream until its agent_end, or fail after timeoutMs. */
async function seeAgentEnd(events: EventStream, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no agent_end on the events socket within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([
      (async () => {
        for (let event = await events.nextEvent(); event !== null; event = await events.nextEvent())
          if (event.type === 'agent_end') return;
        throw new Error('the events socket ended before agent_end');
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function sample(server: ServerProcess, tSeconds: number, iterations: number, errors: number): Promise<Sample> {
  const stats = procStats(server.pid);
  let heap: number | null = null;
  let heapTotal: number | null = null;
  try {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const gauge = (name: string): number | null => {
      const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text);
      return match?.[1] !== undefined ? round(Number(match[1]) / 2 ** 20) : null;
    };
    heap = gauge('nodejs_heap_size_used_bytes');
    heapTotal = gauge('nodejs_heap_size_total_bytes');
  } catch {
    heap = null;
  }
  return {
    t_s: round(tSeconds, 1),
    rss_mb: round(stats.rssBytes / 2 ** 20),
    heap_used_mb: heap,
    heap_total_mb: heapTotal,
    fds: stats.fds,
    children: stats.descendants,
    iterations,
    errors,
  };
}

/** RSS minus V8's committed heap at start and end, and its growth (null without the heap gauge). */
function outsideHeap(start: Sample, end: Sample): { start: number; end: number; growth_pct: number } | null {
  if (start.heap_total_mb === null || end.heap_total_mb === null) return null;
  const before = start.rss_mb - start.heap_total_mb;
  const after = end.rss_mb - end.heap_total_mb;
  return { start: round(before), end: round(after), growth_pct: round(((after - before) / before) * 100, 1) };
}
