import type { BudgetDecision, BudgetGuard } from './budget-decision.js';
import { combineGuards } from './combine-guards.js';

/**
 * The session's budget guard: its built-in limits, plus an external budget host that can be set, replaced
 * or removed while the session lives (a WebSocket host connects after the session exists).
 */
export class SwitchableBudgetGuard implements BudgetGuard {
  private combined: BudgetGuard;
  private host: BudgetGuard | undefined;

  constructor(
    private readonly builtin: BudgetGuard,
    host?: BudgetGuard,
  ) {
    this.host = host;
    this.combined = host ? combineGuards(builtin, host) : builtin;
  }

  /** Use this host from the next check on (undefined: built-in limits only). */
  setHost(host: BudgetGuard | undefined): void {
    this.host = host;
    this.combined = host ? combineGuards(this.builtin, host) : this.builtin;
  }

  /** True when an external host is consulted. */
  get hasHost(): boolean {
    return this.host !== undefined;
  }

  beforeLlmCall(estimatedTokens: number, signal?: AbortSignal): Promise<BudgetDecision> {
    return this.combined.beforeLlmCall(estimatedTokens, signal);
  }

  recordUsage(totalTokens: number): void {
    this.combined.recordUsage(totalTokens);
  }

  beforeToolCall(toolName: string, signal?: AbortSignal): Promise<BudgetDecision> {
    return this.combined.beforeToolCall(toolName, signal);
  }

  releaseToolCall(): void {
    this.combined.releaseToolCall?.();
  }

  startClock(): void {
    this.combined.startClock?.();
  }

  stopClock(): void {
    this.combined.stopClock?.();
  }
}
