// Entry of `npm run bench -- <name> [--seconds N] ...`: runs one benchmark and prints its one JSON line.
import { availableParallelism, loadavg } from 'node:os';
import { parseBenchArgs, type BenchArgs } from './bench-args.js';
import { runAttachmentsBench } from './attachments-bench.js';
import { runChangesBench } from './changes-bench.js';
import { runChaosBench } from './chaos-bench.js';
import { runClusterBench } from './cluster-bench.js';
import { runCompactionBench } from './compaction-bench.js';
import { round } from './bench-stats.js';
import { runDelegationBench } from './delegation-bench.js';
import { runFilesBench } from './files-bench.js';
import { runRunsBench } from './runs-bench.js';
import { runSandboxBench } from './sandbox-bench.js';
import { runSchedulesBench } from './schedules-bench.js';
import { runSearchBench } from './search-bench.js';
import { runSessionsBench } from './sessions-bench.js';
import { runSoakBench } from './soak-bench.js';
import { runWsBench } from './ws-bench.js';

/** Every benchmark by name. */
export const BENCHMARKS: Readonly<Record<string, (args: BenchArgs) => Promise<Record<string, unknown>>>> = {
  runs: runRunsBench,
  ws: runWsBench,
  sessions: runSessionsBench,
  sandbox: runSandboxBench,
  search: runSearchBench,
  delegation: runDelegationBench,
  compaction: runCompactionBench,
  soak: runSoakBench,
  chaos: runChaosBench,
  cluster: runClusterBench,
  files: runFilesBench,
  attachments: runAttachmentsBench,
  changes: runChangesBench,
  schedules: runSchedulesBench,
};

const USAGE = `usage: npm run bench -- <${Object.keys(BENCHMARKS).join('|')}> [--seconds N]
  runs      runs/s and latency at concurrency 1 and 20 (create session + run with one read tool round + 20-chunk answer)
  ws        delivered events/s to 100 WebSocket subscribers; p99 latency at 20,000 delivered events/s
            [--chunks N] [--paced-eps N] [--subscriber-buffer N]
  sessions  POST /v1/sessions/s at concurrency 20; RSS and heap per idle session [--idle N]
  sandbox   ms per host-direct "bash true" call, in the sandbox (bwrap) and without (host_direct none) [--commands N]
  search    ms and server CPU per grep / glob call over a workspace of 2,000 files (sequential host-direct calls)
            [--files N] [--calls N]
  delegation parent runs/s, latency and server CPU per child at concurrency 1 and 4 (parallel_task with 8 children,
            each a read tool round + 5-chunk answer), against the server CPU of a plain runs run at concurrency 20
  compaction server CPU of the compaction step and run latency before / after, on a ~2,000-message, ~150k-token
            history crossing the autoCompact threshold [--rounds N] [--messages N] [--tokens N]
  soak      a built server process under mixed load (create, events WebSocket, run with a bash tool round, close);
            RSS, heap, fds and child processes every 15 s, then after settling; targets: RSS within 10% of start,
            fds and children back to start, 0 errors [--minutes N (default 5, fractions allowed)] [--concurrency N]
            [--settle-seconds N] [--warmup-seconds N]
  chaos     redis-server + server processes A and B; runs of 4 bash rounds on A, SIGKILL of A after a checkpoint,
            resume on B; tool rounds re-run, events lost/duplicated on a WebSocket through B, kill-to-first-event
            p50/p99 [--runs N (default 10)] [--rounds N (default 4)]
  cluster   the runs workload (concurrency 20) on the memory, file, Redis and local Redis Cluster stores in turn;
            runs/s, p50 and ratios, Redis commands and bytes per run, Redis bytes per session;
            and "balancer": two nodes behind nginx against direct calls to the owners, the p50 a hop adds and
            its Redis commands; targets: Redis >= 50% of memory runs/s, balancer >= 0.85x and <= 2 ms added
            [--seconds N] [--stores memory,file,redis,redis-cluster,balancer]
  files     µs per confined open of a depth-5 workspace file (walk from the held workspace descriptor, O_NOFOLLOW open,
            fstat) against a plain open by name, the walk alone, and a whole read tool call [--calls N] [--rounds N]
  attachments a run with a 5 MiB image uploaded first (file store; a read tool round, so two provider calls): server CPU
            of the upload and the run, peak heap + off-heap over the level before the run (in image sizes), bytes
            retained after the run; target: retained <= 64 KiB [--runs N] [--bytes N]
  changes   ms per run of change capture (base, 3 files changed, result with its diff) on workspaces of 2,000 and
            50,000 files in the sandbox, git's stat cache warm; sandbox start, server and git CPU beside;
            goals without the sandbox starts: <= 20 ms and <= 300 ms [--runs N] [--files 2000,50000]
  schedules how late one-minute schedules' ticks start their runs (drift) under the runs workload at concurrency 20,
            across at least two minute boundaries; target: max drift <= 1000 ms [--seconds N (default 130)] [--schedules N]
`;

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  const bench = name === undefined ? undefined : BENCHMARKS[name];
  if (!bench) {
    process.stderr.write(name === undefined ? USAGE : `unknown benchmark: ${name}\n${USAGE}`);
    return 2;
  }
  let args: BenchArgs;
  try {
    args = parseBenchArgs(rest);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  const loadBefore = loadavg()[0] ?? 0;
  const figures = await bench(args);
  // Other work on the machine skews every figure; say how busy it was.
  const host = {
    cpus: availableParallelism(),
    loadavg_1m_before: round(loadBefore),
    loadavg_1m_after: round(loadavg()[0] ?? 0),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify({ ...figures, host })}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
