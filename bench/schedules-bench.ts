import type { BenchArgs } from './bench-args.js';
import { numberFlag } from './bench-args.js';
import { startBenchServer } from './bench-server.js';
import { percentile, round } from './bench-stats.js';
import { startDriver } from './driver-client.js';
import { RUNS_PROVIDER } from './runs-bench.js';
import type { RunRecord } from '../src/protocol/run-record.js';
import type { Schedule } from '../src/protocol/schedules.js';

/** The key a tick's run carries: `schedule:<id>:<tick time ISO 8601>`. */
const TICK_KEY = /^schedule:[^:]+:(\d{4}-\d\d-\d\dT.+Z)$/;

/**
 * `schedules`: one-minute schedules ticking while the `runs` workload (concurrency 20) keeps the server busy for
 * long enough to cross minute boundaries; prints how late each tick's run was admitted after its cron time (drift).
 */
export async function runSchedulesBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const count = numberFlag(args, 'schedules', 10);
  // At least two minute boundaries fall in the load (`--seconds`, default 130).
  const seconds = Math.max(numberFlag(args, 'seconds', 130), 61);
  const driver = await startDriver();
  try {
    const { baseUrl } = await driver.call('start-provider', RUNS_PROVIDER);
    const bench = await startBenchServer({ providerBaseUrl: baseUrl });
    try {
      const schedules: Schedule[] = [];
      for (let i = 0; i < count; i++) {
        const res = await fetch(`${bench.url}/v1/schedules`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `drift-${i}`, cron: '* * * * *', input: 'scheduled', overlap: 'enqueue' }),
        });
        if (res.status !== 201) throw new Error(`POST /v1/schedules answered ${res.status}: ${await res.text()}`);
        schedules.push(((await res.json()) as { schedule: Schedule }).schedule);
      }
      const load = await driver.call('runs-load', { baseUrl: bench.url, concurrency: 20, seconds });
      const drifts: number[] = [];
      for (const schedule of schedules) {
        const res = await fetch(`${bench.url}/v1/sessions/${encodeURIComponent(schedule.sessionId)}/runs`);
        if (res.status === 404) continue;
        const { runs } = (await res.json()) as { runs: RunRecord[] };
        for (const run of runs) {
          const tick = TICK_KEY.exec(run.idempotencyKey ?? '')?.[1];
          if (tick !== undefined) drifts.push(run.createdAtMs - Date.parse(tick));
        }
      }
      drifts.sort((a, b) => a - b);
      return {
        bench: 'schedules',
        schedules: count,
        load_seconds: seconds,
        load_runs_per_s: round(load.count / seconds, 1),
        ticks: drifts.length,
        drift_ms: {
          min: drifts[0] ?? null,
          p50: drifts.length ? percentile(drifts, 50) : null,
          p99: drifts.length ? percentile(drifts, 99) : null,
          max: drifts.at(-1) ?? null,
        },
        target: { drift_max_ms: 1000 },
        note: 'drift = a tick run’s createdAtMs minus its cron time (from its Idempotency-Key schedule:<id>:<tick>), for one-minute schedules (overlap enqueue) while the runs workload runs at concurrency 20 in the driver process',
      };
    } finally {
      await bench.close();
    }
  } finally {
    await driver.close();
  }
}
