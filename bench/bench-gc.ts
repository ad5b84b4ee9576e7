import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A full garbage collection, and how it was obtained. */
export interface BenchGc {
  /** `expose-gc` when node ran with --expose-gc, `v8-flag` when enabled at run time, `none` otherwise. */
  source: 'expose-gc' | 'v8-flag' | 'none';
  /** Collects garbage (twice, so finalizers' garbage goes too); a no-op when unavailable. */
  collect(): void;
}

/** Finds a gc function: --expose-gc if given, else by setting the V8 flag and reading it from a fresh context. */
export function obtainGc(): BenchGc {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return { source: 'expose-gc', collect: twice(exposed) };
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    if (typeof gc === 'function') return { source: 'v8-flag', collect: twice(gc as () => void) };
  } catch {
    // Fall through: the figures are then noisier and say so.
  }
  return { source: 'none', collect: () => undefined };
}

function twice(gc: () => void): () => void {
  return () => {
    gc();
    gc();
  };
}
