import type { MemoryItem } from '../../protocol/memory.js';

const DAY_MS = 86_400_000;

/** The seed's relevance: importance·0.7 + exp(−age_days/30)·0.3, at time `nowMs`. */
export function memoryRelevance(item: Pick<MemoryItem, 'importance' | 'timestamp'>, nowMs: number): number {
  const ageDays = Math.max(0, nowMs - item.timestamp) / DAY_MS;
  return item.importance * 0.7 + Math.exp(-ageDays / 30) * 0.3;
}
