import { describe, expect, it } from 'vitest';
import { BudgetOptionsSchema } from '../../src/protocol/budget.js';
import { parseBudgetOptions } from '../../src/runtime/policy/budget/parse-budget-options.js';

describe('BudgetOptionsSchema', () => {
  it('defaults softRatio and is strict', () => {
    expect(BudgetOptionsSchema.parse({ maxTokens: 10 })).toEqual({ maxTokens: 10, softRatio: 0.8 });
    for (const [body, path] of [
      [{ maxTokens: 0 }, 'maxTokens'],
      [{ maxToolCalls: 1.5 }, 'maxToolCalls'],
      [{ maxWallTimeMs: -1 }, 'maxWallTimeMs'],
      [{ softRatio: 0 }, 'softRatio'],
      [{ softRatio: 1.01 }, 'softRatio'],
    ] as const) {
      const result = BudgetOptionsSchema.safeParse(body);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0].path).toEqual([path]);
    }
    expect(BudgetOptionsSchema.safeParse({ softRatio: 1 }).success).toBe(true);
    expect(BudgetOptionsSchema.safeParse({ maxCost: 3 }).success).toBe(false);
  });

  it('names the field when a guard is configured badly', () => {
    expect(() => parseBudgetOptions({ maxTokens: -5 })).toThrow(/^budget\.maxTokens: /);
    expect(parseBudgetOptions(undefined)).toBeUndefined();
  });
});
