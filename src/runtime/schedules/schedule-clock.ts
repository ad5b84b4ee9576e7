/** The scheduler's clock and timers, injected (tests drive a fake one). */
export interface ScheduleClock {
  now(): number;
  /** Call `fn` after `ms`; the handle cancels it. */
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** The wall clock, its timers unref'd (a pending tick keeps no process alive). */
export function systemScheduleClock(): ScheduleClock {
  return {
    now: () => Date.now(),
    setTimer: (fn, ms) => setTimeout(fn, Math.max(0, ms)).unref(),
    clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
}
