import type { ScheduleClock } from '../../src/runtime/schedules/schedule-clock.js';

/** A scheduler clock a test moves by hand: `advance` fires the timers that fall due, in order. */
export class FakeScheduleClock implements ScheduleClock {
  private nowMs: number;
  private nextHandle = 1;
  private readonly timers = new Map<number, { atMs: number; fn: () => void }>();

  constructor(startMs: number) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimer(fn: () => void, ms: number): unknown {
    const handle = this.nextHandle++;
    const timer = { atMs: this.nowMs + Math.max(0, ms), fn };
    this.timers.set(handle, timer);
    // Due already (the clock moved while its setter was busy): it fires on its own, as a real timer would.
    if (ms <= 0)
      setImmediate(() => {
        if (this.timers.get(handle) !== timer) return;
        this.timers.delete(handle);
        fn();
      });
    return handle;
  }

  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** The number of timers waiting. */
  get pending(): number {
    return this.timers.size;
  }

  /** Move the clock to `atMs` (never back) and fire every timer due by then. */
  set(atMs: number): void {
    this.nowMs = Math.max(this.nowMs, atMs);
    const due = [...this.timers.entries()]
      .filter(([, t]) => t.atMs <= this.nowMs)
      .sort((a, b) => a[1].atMs - b[1].atMs);
    for (const [handle, timer] of due) {
      this.timers.delete(handle);
      timer.fn();
    }
  }

  /** Move the clock on by `ms`. */
  advance(ms: number): void {
    this.set(this.nowMs + ms);
  }
}
