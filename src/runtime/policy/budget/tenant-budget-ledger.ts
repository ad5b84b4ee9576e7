import type { BudgetOptions } from '../../../protocol/budget.js';
import type { BudgetUsage } from './budget-decision.js';

/** Where a ledger finds each tenant's limits (CodeConfig, later wiring). */
export type TenantLimits = ReadonlyMap<string, BudgetOptions> | ((tenantId: string) => BudgetOptions | undefined);

interface TenantCounters {
  tokens: number;
  toolCalls: number;
  retiredMs: number;
  /** Start times of the clocks of this tenant's sessions that are running now. */
  running: Set<{ startedAt: number }>;
}

/**
 * Usage shared by every session of a tenant, so tenant limits hold across sessions. One ledger per
 * server (built in the runtime context, not a module singleton). Wall time is the sum of the active
 * time of the tenant's sessions, running clocks included.
 */
export class TenantBudgetLedger {
  private readonly tenants = new Map<string, TenantCounters>();

  constructor(private readonly options: { limits: TenantLimits; now: () => number }) {}

  /** The tenant's limits (undefined: no tenant budget). */
  limitsFor(tenantId: string): BudgetOptions | undefined {
    const { limits } = this.options;
    return typeof limits === 'function' ? limits(tenantId) : limits.get(tenantId);
  }

  /** What the tenant's sessions have used so far. */
  usage(tenantId: string): BudgetUsage {
    const counters = this.tenants.get(tenantId);
    if (!counters) return { tokens: 0, toolCalls: 0, wallTimeMs: 0 };
    const now = this.options.now();
    let live = 0;
    for (const clock of counters.running) live += Math.max(0, now - clock.startedAt);
    return { tokens: counters.tokens, toolCalls: counters.toolCalls, wallTimeMs: counters.retiredMs + live };
  }

  /** Add provider tokens to the tenant. */
  addTokens(tenantId: string, count: number): void {
    this.counters(tenantId).tokens += count;
  }

  /** Add (or give back) tool calls; never below zero. */
  addToolCalls(tenantId: string, delta: number): void {
    const counters = this.counters(tenantId);
    counters.toolCalls = Math.max(0, counters.toolCalls + delta);
  }

  /** Start one session's clock for the tenant; the returned function stops it (idempotent). */
  startClock(tenantId: string): () => void {
    const counters = this.counters(tenantId);
    const clock = { startedAt: this.options.now() };
    counters.running.add(clock);
    return () => {
      if (!counters.running.delete(clock)) return;
      counters.retiredMs += Math.max(0, this.options.now() - clock.startedAt);
    };
  }

  private counters(tenantId: string): TenantCounters {
    let counters = this.tenants.get(tenantId);
    if (!counters) {
      counters = { tokens: 0, toolCalls: 0, retiredMs: 0, running: new Set() };
      this.tenants.set(tenantId, counters);
    }
    return counters;
  }
}
