import { DEFAULT_SOFT_RATIO, type BudgetOptions, type BudgetResource } from '../../../protocol/budget.js';

/** Whose limit decided: the session's, the tenant's (shared by its sessions), or an external budget host. */
export type BudgetScope = 'session' | 'tenant' | 'host';

/**
 * A budget decision: allow; soft (go on, but warn: a limit is near); deny (refuse the call). `used` is what
 * was consumed before this call; `limit` is always set for session and tenant scope, and for host scope
 * only when the host reported one.
 */
export type BudgetDecision =
  | { kind: 'allow' }
  | {
      kind: 'soft' | 'deny';
      resource: BudgetResource;
      reason: string;
      used: number;
      limit: number;
      scope: 'session' | 'tenant';
    }
  | {
      kind: 'soft' | 'deny';
      resource: BudgetResource | string;
      reason: string;
      used: number;
      limit?: number;
      scope: 'host';
    };

/**
 * What the invokers call. Guards in this module never throw: failures deny. `releaseToolCall` undoes the
 * count of the last admitted tool call when a combined guard refused it; `startClock`/`stopClock` bracket
 * the time a run is active (wall-time budgets count only that time).
 */
export interface BudgetGuard {
  beforeLlmCall(estimatedTokens: number, signal?: AbortSignal): Promise<BudgetDecision>;
  recordUsage(totalTokens: number): void;
  beforeToolCall(toolName: string, signal?: AbortSignal): Promise<BudgetDecision>;
  releaseToolCall?(): void;
  startClock?(): void;
  stopClock?(): void;
}

/** Resources consumed so far. */
export interface BudgetUsage {
  tokens: number;
  toolCalls: number;
  wallTimeMs: number;
}

/** The allow decision. */
export const ALLOW: BudgetDecision = Object.freeze({ kind: 'allow' });

const SCOPE_LABEL = { session: 'session', tenant: 'tenant' } as const;

function ratioOf(limits: BudgetOptions): number {
  return limits.softRatio ?? DEFAULT_SOFT_RATIO;
}

function percent(value: number, limit: number): string {
  return `${Math.floor((value / limit) * 100)}%`;
}

/** A non-negative finite number (NaN, negative and infinite estimates count as 0). */
export function sanitizeCount(value: number): number {
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * Tokens before a provider call: deny when the budget is already spent (`used >= limit`) or the estimate
 * would overrun it (`used + estimate > limit`); soft when `used + estimate >= softRatio * limit`.
 */
export function checkTokens(
  used: number,
  estimate: number,
  limits: BudgetOptions | undefined,
  scope: 'session' | 'tenant',
): BudgetDecision {
  const limit = limits?.maxTokens;
  if (limit === undefined || limits === undefined) return ALLOW;
  const next = used + sanitizeCount(estimate);
  const base = { resource: 'llm_tokens' as const, used, limit, scope };
  if (used >= limit || next > limit) {
    return {
      kind: 'deny',
      ...base,
      reason: `${SCOPE_LABEL[scope]} token budget exhausted: ${used} used + ${sanitizeCount(estimate)} estimated > ${limit} (maxTokens)`,
    };
  }
  if (next >= ratioOf(limits) * limit) {
    return {
      kind: 'soft',
      ...base,
      reason: `${SCOPE_LABEL[scope]} token budget at ${percent(next, limit)}: ${used} used + ${sanitizeCount(estimate)} estimated of ${limit} (maxTokens)`,
    };
  }
  return ALLOW;
}

/** Tool calls before a call: deny when `used >= limit` (this call would exceed it); soft when `used + 1 >= softRatio * limit`. */
export function checkToolCalls(
  used: number,
  limits: BudgetOptions | undefined,
  scope: 'session' | 'tenant',
): BudgetDecision {
  const limit = limits?.maxToolCalls;
  if (limit === undefined || limits === undefined) return ALLOW;
  const base = { resource: 'tool_calls' as const, used, limit, scope };
  if (used >= limit)
    return {
      kind: 'deny',
      ...base,
      reason: `${SCOPE_LABEL[scope]} tool call budget exhausted: ${used} of ${limit} calls made (maxToolCalls)`,
    };
  if (used + 1 >= ratioOf(limits) * limit) {
    return {
      kind: 'soft',
      ...base,
      reason: `${SCOPE_LABEL[scope]} tool call budget at ${percent(used + 1, limit)}: call ${used + 1} of ${limit} (maxToolCalls)`,
    };
  }
  return ALLOW;
}

/** Active wall time: deny when `used >= limit`; soft when `used >= softRatio * limit`. */
export function checkWallTime(
  used: number,
  limits: BudgetOptions | undefined,
  scope: 'session' | 'tenant',
): BudgetDecision {
  const limit = limits?.maxWallTimeMs;
  if (limit === undefined || limits === undefined) return ALLOW;
  const base = { resource: 'wall_time' as const, used, limit, scope };
  if (used >= limit)
    return {
      kind: 'deny',
      ...base,
      reason: `${SCOPE_LABEL[scope]} wall time budget exhausted: ${used} ms of ${limit} ms active (maxWallTimeMs)`,
    };
  if (used >= ratioOf(limits) * limit)
    return {
      kind: 'soft',
      ...base,
      reason: `${SCOPE_LABEL[scope]} wall time budget at ${percent(used, limit)}: ${used} ms of ${limit} ms active (maxWallTimeMs)`,
    };
  return ALLOW;
}

/** The strongest decision: the first deny, else the first soft, else allow. */
export function strongestDecision(decisions: readonly BudgetDecision[]): BudgetDecision {
  return decisions.find((d) => d.kind === 'deny') ?? decisions.find((d) => d.kind === 'soft') ?? ALLOW;
}
