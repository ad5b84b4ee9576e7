import { randomUUID } from 'node:crypto';

/** Injected clock and id generator, so a run can be replayed bit-identically. */
export interface HostEnv {
  /** Milliseconds since the epoch. */
  now(): number;
  /** A new unique id with a short type prefix (e.g. "run", "sess", "art"). */
  newId(prefix: string): string;
}

/** The production HostEnv: wall clock and random UUIDs. */
export function createSystemHostEnv(): HostEnv {
  return {
    now: () => Date.now(),
    newId: (prefix) => `${prefix}_${randomUUID().replace(/-/g, '')}`,
  };
}

/** Settings of a replayable HostEnv (SessionOptions.hostEnv). */
export interface ReplayHostEnvOptions {
  sequentialIdPrefix: string;
  fixedTimeMs: number;
  /** Ids already handed out (a restored session continues its sequence, so ids are never reused). */
  startAt?: number;
}

/** A HostEnv for deterministic replay: ids `<prefix>-<type>-<n>` from one counter, and a clock that never moves. */
export function createReplayHostEnv(options: ReplayHostEnvOptions): HostEnv & { readonly issued: number } {
  let counter = options.startAt ?? 0;
  return {
    now: () => options.fixedTimeMs,
    newId: (prefix) => `${options.sequentialIdPrefix}-${prefix}-${++counter}`,
    get issued() {
      return counter;
    },
  };
}
