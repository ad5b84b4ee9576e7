import { numberFlag, type BenchArgs } from './bench-args.js';
import { startBenchServer } from './bench-server.js';
import { percentile, round } from './bench-stats.js';

const WARMUP_COMMANDS = 10;

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Mean and p50/p99 ms of `count` sequential host-direct `bash true` calls on a server with this sandbox config. */
async function measure(
  sandbox: Record<string, unknown>,
  count: number,
): Promise<{ mean: number; p50: number; p99: number; kind: unknown }> {
  // No run is started: the provider is never called.
  const bench = await startBenchServer({ providerBaseUrl: 'http://127.0.0.1:9/v1', sandbox });
  try {
    const created = await post(`${bench.url}/v1/sessions`, {});
    const id = (created.session as { id: string }).id;
    const call = async (): Promise<{ ms: number; kind: unknown }> => {
      const started = performance.now();
      const result = await post(`${bench.url}/v1/sessions/${id}/tools/bash`, { args: { command: 'true' } });
      if (result.exitCode !== 0) throw new Error(`bash true failed: ${JSON.stringify(result)}`);
      return {
        ms: performance.now() - started,
        kind: (result.metadata as Record<string, unknown> | undefined)?.sandbox ?? 'none',
      };
    };
    for (let i = 0; i < WARMUP_COMMANDS; i += 1) await call();
    const times: number[] = [];
    let kind: unknown = 'none';
    for (let i = 0; i < count; i += 1) {
      const one = await call();
      times.push(one.ms);
      kind = one.kind;
    }
    times.sort((a, b) => a - b);
    return {
      mean: times.reduce((a, b) => a + b, 0) / times.length,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      kind,
    };
  } finally {
    await bench.close();
  }
}

/**
 * `sandbox`: the per-command overhead of the sandbox: sequential host-direct `bash true` calls over HTTP,
 * with host_direct "sandbox" (bwrap when it works) and "none" (spawned directly); the difference is the
 * sandbox's cost (bwrap, namespaces, cgroup setup and teardown).
 */
export async function runSandboxBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const count = Math.round(numberFlag(args, 'commands', 200));
  const sandboxed = await measure({ hostDirect: 'sandbox' }, count);
  const none = await measure({ hostDirect: 'none' }, count);
  return {
    bench: 'sandbox',
    commands: count,
    sandbox: sandboxed.kind,
    sandbox_ms_per_command: round(sandboxed.mean),
    sandbox_p50_ms: round(sandboxed.p50),
    sandbox_p99_ms: round(sandboxed.p99),
    none_ms_per_command: round(none.mean),
    none_p50_ms: round(none.p50),
    none_p99_ms: round(none.p99),
    overhead_ms_per_command: round(sandboxed.mean - none.mean),
  };
}
