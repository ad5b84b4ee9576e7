import type { BudgetOptions, BudgetOptionsInput } from '../../../protocol/budget.js';
import {
  checkTokens,
  checkToolCalls,
  checkWallTime,
  sanitizeCount,
  strongestDecision,
  type BudgetDecision,
  type BudgetGuard,
  type BudgetUsage,
} from './budget-decision.js';
import { parseBudgetOptions } from './parse-budget-options.js';
import type { TenantBudgetLedger } from './tenant-budget-ledger.js';
import { UsageMeter } from './usage-meter.js';

/** What a BuiltinBudgetGuard enforces: the session's limits and, with a ledger, its tenant's shared limits. */
export interface BuiltinBudgetGuardOptions {
  /** Session limits (SessionOptions.budget); parsed here, so a bad value throws SESSION_CONFIGURATION_ERROR. */
  limits?: BudgetOptionsInput;
  tenantId?: string;
  /** Shared by every session of the server; tenant limits apply when it has limits for tenantId. */
  tenantLedger?: TenantBudgetLedger;
  now: () => number;
}

/**
 * The in-process budget guard. Tokens: checked before each provider call against `used + estimate` and
 * recorded afterwards with recordUsage (concurrent sessions of one tenant may each overshoot the tenant
 * limit by at most one call, since estimates are not reserved). Tool calls: counted when admitted (allow
 * or soft), synchronously, so parallel calls cannot slip past the limit. Wall time: the time between
 * startClock and stopClock, which the run loop calls around each run. Never throws after construction.
 */
export class BuiltinBudgetGuard implements BudgetGuard {
  private readonly meter: UsageMeter;
  private readonly limits: BudgetOptions | undefined;
  private stopTenantClock: (() => void) | undefined;

  constructor(private readonly options: BuiltinBudgetGuardOptions) {
    this.limits = parseBudgetOptions(options.limits);
    this.meter = new UsageMeter(options.now);
  }

  /** Check tokens and wall time (session, then tenant) before a provider call. */
  async beforeLlmCall(estimatedTokens: number): Promise<BudgetDecision> {
    const session = this.meter.usage();
    const tenant = this.tenant();
    return strongestDecision([
      checkTokens(session.tokens, estimatedTokens, this.limits, 'session'),
      checkWallTime(session.wallTimeMs, this.limits, 'session'),
      ...(tenant
        ? [
            checkTokens(tenant.usage.tokens, estimatedTokens, tenant.limits, 'tenant'),
            checkWallTime(tenant.usage.wallTimeMs, tenant.limits, 'tenant'),
          ]
        : []),
    ]);
  }

  /** Record the tokens a provider call used (session and tenant). */
  recordUsage(totalTokens: number): void {
    const tokens = sanitizeCount(totalTokens);
    this.meter.addTokens(tokens);
    if (this.options.tenantLedger && this.options.tenantId !== undefined)
      this.options.tenantLedger.addTokens(this.options.tenantId, tokens);
  }

  /** Check tool calls and wall time (session, then tenant); an admitted call is counted at once. */
  async beforeToolCall(_toolName: string): Promise<BudgetDecision> {
    const session = this.meter.usage();
    const tenant = this.tenant();
    const decision = strongestDecision([
      checkToolCalls(session.toolCalls, this.limits, 'session'),
      checkWallTime(session.wallTimeMs, this.limits, 'session'),
      ...(tenant
        ? [
            checkToolCalls(tenant.usage.toolCalls, tenant.limits, 'tenant'),
            checkWallTime(tenant.usage.wallTimeMs, tenant.limits, 'tenant'),
          ]
        : []),
    ]);
    if (decision.kind !== 'deny') this.countToolCalls(1);
    return decision;
  }

  /** Give back the count of an admitted tool call that did not run (a combined guard refused it). */
  releaseToolCall(): void {
    this.countToolCalls(-1);
  }

  /** Start counting active wall time (session and tenant); no-op when running. */
  startClock(): void {
    if (this.meter.running) return;
    this.meter.startClock();
    if (this.options.tenantLedger && this.options.tenantId !== undefined)
      this.stopTenantClock = this.options.tenantLedger.startClock(this.options.tenantId);
  }

  /** Stop counting active wall time; no-op when stopped. */
  stopClock(): void {
    this.meter.stopClock();
    this.stopTenantClock?.();
    this.stopTenantClock = undefined;
  }

  /** What this session has used. */
  usage(): BudgetUsage {
    return this.meter.usage();
  }

  private countToolCalls(delta: number): void {
    this.meter.addToolCalls(delta);
    if (this.options.tenantLedger && this.options.tenantId !== undefined)
      this.options.tenantLedger.addToolCalls(this.options.tenantId, delta);
  }

  private tenant() {
    const { tenantLedger, tenantId } = this.options;
    if (!tenantLedger || tenantId === undefined) return undefined;
    const limits = tenantLedger.limitsFor(tenantId);
    return limits ? { limits, usage: tenantLedger.usage(tenantId) } : undefined;
  }
}
