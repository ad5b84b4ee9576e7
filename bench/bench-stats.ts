/** The p-th percentile (0..100) of samples by nearest rank; NaN when empty. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** The p-th percentile (0..100) of a histogram whose bucket index is the value. */
export function histogramPercentile(histogram: readonly number[], p: number): number {
  const total = histogram.reduce((sum, n) => sum + n, 0);
  if (total === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [value, count] of histogram.entries()) {
    seen += count;
    if (seen >= rank) return value;
  }
  return histogram.length - 1;
}

/** Adds one histogram into another, bucket by bucket. */
export function addHistogram(into: number[], from: readonly number[]): void {
  for (const [index, count] of from.entries()) into[index] = (into[index] ?? 0) + count;
}

/** Rounds to a fixed number of decimals, for readable JSON. */
export function round(value: number, decimals = 2): number {
  if (!Number.isFinite(value)) return value;
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}
