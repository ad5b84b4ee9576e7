import { describe, expect, it } from 'vitest';
import { BudgetOptionsSchema, type BudgetOptionsInput } from '../../src/protocol/budget.js';
import {
  checkTokens,
  checkToolCalls,
  checkWallTime,
  type BudgetDecision,
} from '../../src/runtime/policy/budget/budget-decision.js';
import { BuiltinBudgetGuard } from '../../src/runtime/policy/budget/builtin-budget-guard.js';
import { TenantBudgetLedger } from '../../src/runtime/policy/budget/tenant-budget-ledger.js';

/** A manual clock. */
function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

const limits = (input: BudgetOptionsInput) => BudgetOptionsSchema.parse(input);
const kind = (d: BudgetDecision) => (d.kind === 'allow' ? 'allow' : `${d.kind}:${d.scope}:${d.resource}`);

describe('budget rules', () => {
  it.each([
    [0, 10, undefined, 'allow'],
    [0, 79, { maxTokens: 100 }, 'allow'],
    [0, 80, { maxTokens: 100 }, 'soft'],
    [70, 10, { maxTokens: 100 }, 'soft'],
    [90, 10, { maxTokens: 100 }, 'soft'],
    [90, 11, { maxTokens: 100 }, 'deny'],
    [100, 0, { maxTokens: 100 }, 'deny'],
    [0, 101, { maxTokens: 100 }, 'deny'],
    [50, Number.NaN, { maxTokens: 100 }, 'allow'],
    [50, -20, { maxTokens: 100, softRatio: 0.5 }, 'soft'],
    [0, 100, { maxTokens: 100, softRatio: 1 }, 'soft'],
  ])('tokens: %d used + %d estimated with %j -> %s', (used, estimate, options, expected) => {
    expect(checkTokens(used, estimate, options && limits(options), 'session').kind).toBe(expected);
  });

  it.each([
    [0, { maxToolCalls: 10 }, 'allow'],
    [6, { maxToolCalls: 10 }, 'allow'],
    [7, { maxToolCalls: 10 }, 'soft'],
    [9, { maxToolCalls: 10 }, 'soft'],
    [10, { maxToolCalls: 10 }, 'deny'],
    [0, { maxToolCalls: 1 }, 'soft'],
  ])('tool calls: %d used with %j -> %s', (used, options, expected) => {
    expect(checkToolCalls(used, limits(options), 'tenant').kind).toBe(expected);
  });

  it.each([
    [799, { maxWallTimeMs: 1000 }, 'allow'],
    [800, { maxWallTimeMs: 1000 }, 'soft'],
    [1000, { maxWallTimeMs: 1000 }, 'deny'],
  ])('wall time: %d ms with %j -> %s', (used, options, expected) => {
    expect(checkWallTime(used, limits(options), 'session').kind).toBe(expected);
  });

  it('explains decisions with used, limit, scope and the option name', () => {
    expect(checkTokens(95, 10, limits({ maxTokens: 100 }), 'tenant')).toEqual({
      kind: 'deny',
      resource: 'llm_tokens',
      used: 95,
      limit: 100,
      scope: 'tenant',
      reason: 'tenant token budget exhausted: 95 used + 10 estimated > 100 (maxTokens)',
    });
  });
});

describe('BuiltinBudgetGuard (session scope)', () => {
  it('allows everything without limits', async () => {
    const guard = new BuiltinBudgetGuard({ now: clock().now });
    guard.recordUsage(1e9);
    expect(await guard.beforeLlmCall(1e9)).toEqual({ kind: 'allow' });
    expect(await guard.beforeToolCall('bash')).toEqual({ kind: 'allow' });
  });

  it('tokens: allow, soft, deny as usage is recorded', async () => {
    const guard = new BuiltinBudgetGuard({ limits: { maxTokens: 1000 }, now: clock().now });
    expect(kind(await guard.beforeLlmCall(500))).toBe('allow');
    guard.recordUsage(700);
    expect(await guard.beforeLlmCall(150)).toMatchObject({
      kind: 'soft',
      resource: 'llm_tokens',
      used: 700,
      limit: 1000,
      scope: 'session',
    });
    expect(kind(await guard.beforeLlmCall(301))).toBe('deny:session:llm_tokens');
    guard.recordUsage(300);
    expect(kind(await guard.beforeLlmCall(0))).toBe('deny:session:llm_tokens');
    expect(guard.usage().tokens).toBe(1000);
  });

  it('tool calls: counted when admitted, never past the limit, even in parallel', async () => {
    const guard = new BuiltinBudgetGuard({ limits: { maxToolCalls: 5 }, now: clock().now });
    const decisions = await Promise.all(Array.from({ length: 8 }, () => guard.beforeToolCall('bash')));
    expect(decisions.map(kind)).toEqual([
      'allow',
      'allow',
      'allow',
      'soft:session:tool_calls',
      'soft:session:tool_calls',
      'deny:session:tool_calls',
      'deny:session:tool_calls',
      'deny:session:tool_calls',
    ]);
    expect(guard.usage().toolCalls).toBe(5);
    guard.releaseToolCall();
    expect(kind(await guard.beforeToolCall('bash'))).toBe('soft:session:tool_calls');
  });

  it('wall time: only time between startClock and stopClock counts', async () => {
    const c = clock();
    const guard = new BuiltinBudgetGuard({ limits: { maxWallTimeMs: 10_000 }, now: c.now });
    c.advance(60_000); // idle before the first run does not count
    guard.startClock();
    c.advance(5000);
    guard.stopClock();
    c.advance(60_000);
    expect(kind(await guard.beforeToolCall('read'))).toBe('allow');
    guard.startClock();
    guard.startClock(); // idempotent
    c.advance(3500);
    expect(await guard.beforeLlmCall(0)).toMatchObject({
      kind: 'soft',
      resource: 'wall_time',
      used: 8500,
      limit: 10_000,
    });
    c.advance(1500);
    expect(kind(await guard.beforeToolCall('read'))).toBe('deny:session:wall_time');
    expect(kind(await guard.beforeLlmCall(0))).toBe('deny:session:wall_time');
    guard.stopClock();
    guard.stopClock();
    expect(guard.usage().wallTimeMs).toBe(10_000);
  });

  it('refuses bad limits with SESSION_CONFIGURATION_ERROR', () => {
    expect(() => new BuiltinBudgetGuard({ limits: { maxTokens: 0 }, now: clock().now })).toThrow(/budget\.maxTokens/);
  });
});

describe('BuiltinBudgetGuard (tenant scope)', () => {
  function tenantSetup(tenantLimits: BudgetOptionsInput, sessionLimits?: BudgetOptionsInput) {
    const c = clock();
    const ledger = new TenantBudgetLedger({ limits: new Map([['acme', limits(tenantLimits)]]), now: c.now });
    const make = (tenantId = 'acme') =>
      new BuiltinBudgetGuard({ limits: sessionLimits, tenantId, tenantLedger: ledger, now: c.now });
    return { c, ledger, a: make(), b: make(), other: make('globex') };
  }

  it('tokens are shared by the sessions of a tenant', async () => {
    const { a, b, other, ledger } = tenantSetup({ maxTokens: 1000 });
    a.recordUsage(600);
    expect(kind(await b.beforeLlmCall(100))).toBe('allow');
    expect(await b.beforeLlmCall(250)).toMatchObject({
      kind: 'soft',
      scope: 'tenant',
      resource: 'llm_tokens',
      used: 600,
    });
    b.recordUsage(400);
    expect(kind(await a.beforeLlmCall(1))).toBe('deny:tenant:llm_tokens');
    expect(kind(await b.beforeLlmCall(0))).toBe('deny:tenant:llm_tokens');
    // Another tenant has no tenant budget.
    expect(kind(await other.beforeLlmCall(5000))).toBe('allow');
    expect(ledger.usage('acme').tokens).toBe(1000);
    expect(a.usage().tokens).toBe(600);
  });

  it('tool calls are shared by the sessions of a tenant', async () => {
    const { a, b } = tenantSetup({ maxToolCalls: 4 });
    expect(kind(await a.beforeToolCall('bash'))).toBe('allow');
    expect(kind(await b.beforeToolCall('bash'))).toBe('allow');
    expect(kind(await a.beforeToolCall('bash'))).toBe('allow');
    expect(kind(await b.beforeToolCall('bash'))).toBe('soft:tenant:tool_calls');
    expect(await a.beforeToolCall('bash')).toMatchObject({
      kind: 'deny',
      scope: 'tenant',
      resource: 'tool_calls',
      used: 4,
      limit: 4,
    });
    b.releaseToolCall();
    expect(kind(await a.beforeToolCall('bash'))).toBe('soft:tenant:tool_calls');
  });

  it('wall time sums the active time of the tenant sessions, running clocks included', async () => {
    const { a, b, c } = tenantSetup({ maxWallTimeMs: 10_000 });
    a.startClock();
    b.startClock();
    c.advance(3000);
    expect(kind(await a.beforeToolCall('x'))).toBe('allow');
    c.advance(1000);
    expect(await b.beforeLlmCall(0)).toMatchObject({
      kind: 'soft',
      scope: 'tenant',
      resource: 'wall_time',
      used: 8000,
    });
    a.stopClock();
    c.advance(1999);
    expect(kind(await b.beforeToolCall('x'))).toBe('soft:tenant:wall_time');
    c.advance(1);
    expect(kind(await a.beforeLlmCall(0))).toBe('deny:tenant:wall_time');
    b.stopClock();
    c.advance(100_000);
    expect(kind(await a.beforeLlmCall(0))).toBe('deny:tenant:wall_time');
  });

  it('a session limit hit first is reported with session scope', async () => {
    const { a } = tenantSetup({ maxTokens: 10_000 }, { maxTokens: 100 });
    a.recordUsage(100);
    expect(kind(await a.beforeLlmCall(1))).toBe('deny:session:llm_tokens');
  });

  it('accepts a limits function', async () => {
    const ledger = new TenantBudgetLedger({
      limits: (tenantId) => (tenantId === 't' ? limits({ maxToolCalls: 1 }) : undefined),
      now: () => 0,
    });
    const guard = new BuiltinBudgetGuard({ tenantId: 't', tenantLedger: ledger, now: () => 0 });
    expect(kind(await guard.beforeToolCall('x'))).toBe('soft:tenant:tool_calls');
    expect(kind(await guard.beforeToolCall('x'))).toBe('deny:tenant:tool_calls');
  });
});
