import type { BudgetUsage } from './budget-decision.js';

/**
 * Counters of one session: tokens, admitted tool calls and active wall time. Wall time accumulates
 * between startClock and stopClock (both idempotent), measured with the injected clock.
 */
export class UsageMeter {
  private tokens = 0;
  private toolCalls = 0;
  private retiredMs = 0;
  private startedAt: number | undefined;

  constructor(private readonly now: () => number) {}

  /** Add provider tokens. */
  addTokens(count: number): void {
    this.tokens += count;
  }

  /** Add (or, with a negative delta, give back) tool calls; never below zero. */
  addToolCalls(delta: number): void {
    this.toolCalls = Math.max(0, this.toolCalls + delta);
  }

  /** Start counting active time; no-op when already running. */
  startClock(): void {
    if (this.startedAt === undefined) this.startedAt = this.now();
  }

  /** Stop counting active time; no-op when not running. */
  stopClock(): void {
    if (this.startedAt === undefined) return;
    this.retiredMs += Math.max(0, this.now() - this.startedAt);
    this.startedAt = undefined;
  }

  /** True while the clock runs. */
  get running(): boolean {
    return this.startedAt !== undefined;
  }

  /** What has been used so far (wall time includes the running stretch). */
  usage(): BudgetUsage {
    const live = this.startedAt === undefined ? 0 : Math.max(0, this.now() - this.startedAt);
    return { tokens: this.tokens, toolCalls: this.toolCalls, wallTimeMs: this.retiredMs + live };
  }
}
