import { percentile, round } from './bench-stats.js';
import type { LoadFigures } from './driver-protocol.js';

/** Runs/s, latencies, counts and the first error of a closed-loop runs phase, as the cluster rows print them. */
export function loadSummary(figures: LoadFigures): Record<string, unknown> {
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
