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
