import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combineGuards } from '../../src/runtime/policy/budget/combine-guards.js';
import { BuiltinBudgetGuard } from '../../src/runtime/policy/budget/builtin-budget-guard.js';
import type { BudgetDecision, BudgetGuard } from '../../src/runtime/policy/budget/budget-decision.js';
import { HostBudgetGuard } from '../../src/runtime/policy/budget/host-budget-guard.js';
import { WebSocketHostRegistry } from '../../src/runtime/policy/host-bridge/websocket-host-registry.js';
import type { GovernanceBudget } from '../../src/runtime/policy/session-governance.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';

let host: WebhookServer;

beforeAll(async () => {
  host = await startWebhookServer({
    '/allow': { body: { decision: 'allow' } },
    '/soft': { body: { decision: 'soft', resource: 'tokens', reason: 'tenant at 90%', limit: 1000 } },
    '/deny': { body: { decision: 'deny', reason: 'monthly quota spent' } },
    '/hang': { body: { decision: 'allow' }, delayMs: 5000 },
    '/error': { status: 500, body: { error: 'down' } },
    '/garbage': { body: { decision: 'maybe' } },
    '/seed-null': { body: 'null' },
    '/seed-soft': {
      body: { decision: 'soft', resource: 'usd_cost', consumed: 8.5, limit: 10, message: 'tenant spend at 85%' },
    },
    '/seed-deny': { body: { decision: 'deny', resource: 'llm_tokens', reason: 'tenant tokens spent' } },
    '/neither': { body: { allow: true } },
    '/number': { body: 42 },
    '/by-phase': (body) => ({
      body:
        body.phase === 'tool' && body.tool === 'bash'
          ? { decision: 'deny', reason: 'no shell' }
          : { decision: 'allow' },
    }),
  });
});

afterAll(async () => {
  await host.close();
});

function hostGuard(path: string, timeoutMs = 2000): HostBudgetGuard {
  let n = 0;
  return new HostBudgetGuard({
    endpoint: { kind: 'webhook', url: host.url(path), allowPrivateNetworks: true },
    sessionId: 's1',
    tenantId: 'acme',
    timeoutMs,
    now: () => 0,
    newId: (p) => `${p}-${++n}`,
  });
}

describe('HostBudgetGuard', () => {
  it('allows, and tells the host the phase, estimate and usage', async () => {
    const guard = hostGuard('/allow');
    guard.recordUsage(1234);
    expect(await guard.beforeLlmCall(56.4)).toEqual({ kind: 'allow' });
    expect(await guard.beforeToolCall('read')).toEqual({ kind: 'allow' });
    const [llm, tool] = host
      .on('/allow')
      .slice(-2)
      .map((r) => r.body);
    expect(llm).toEqual({
      kind: 'budget_check',
      request_id: 'breq-1',
      session_id: 's1',
      tenant_id: 'acme',
      phase: 'llm',
      estimated_tokens: 56,
      used: { tokens: 1234, tool_calls: 0, wall_time_ms: 0 },
    });
    expect(tool).toMatchObject({ phase: 'tool', tool: 'read', used: { tokens: 1234, tool_calls: 0 } });
    expect(guard.usage().toolCalls).toBe(1);
  });

  it('reports soft and deny answers with host scope', async () => {
    expect(await hostGuard('/soft').beforeLlmCall(10)).toEqual({
      kind: 'soft',
      resource: 'llm_tokens',
      reason: 'tenant at 90%',
      used: 0,
      limit: 1000,
      scope: 'host',
    });
    const denied = hostGuard('/deny');
    expect(await denied.beforeToolCall('bash')).toEqual({
      kind: 'deny',
      resource: 'tool_calls',
      reason: 'monthly quota spent',
      used: 0,
      scope: 'host',
    });
    expect(denied.usage().toolCalls).toBe(0);
  });

  it.each([
    ['/hang', 300, /no answer within 300 ms/],
    ['/error', 2000, /HTTP 500/],
    ['/garbage', 2000, /invalid answer.*decision/],
  ])('denies when the host %s', async (path, timeoutMs, reason) => {
    const started = Date.now();
    const decision = await hostGuard(path, timeoutMs).beforeLlmCall(10);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(decision).toMatchObject({ kind: 'deny', resource: 'llm_tokens', scope: 'host' });
    expect(decision.kind !== 'allow' && decision.reason).toMatch(reason);
  });

  it("takes the seed's bridge shape: null allows, soft carries consumed/limit/message, deny names resource and reason", async () => {
    expect(await hostGuard('/seed-null').beforeLlmCall(10)).toEqual({ kind: 'allow' });
    expect(await hostGuard('/seed-soft').beforeToolCall('bash')).toEqual({
      kind: 'soft',
      resource: 'usd_cost',
      reason: 'tenant spend at 85%',
      used: 8.5,
      limit: 10,
      scope: 'host',
    });
    expect(await hostGuard('/seed-deny').beforeToolCall('bash')).toEqual({
      kind: 'deny',
      resource: 'llm_tokens',
      reason: 'tenant tokens spent',
      used: 0,
      scope: 'host',
    });
  });

  it.each(['/neither', '/number'])(
    'denies an answer in neither shape (%s): fail closed, stricter than the seed',
    async (path) => {
      const decision = await hostGuard(path).beforeToolCall('bash');
      expect(decision).toMatchObject({ kind: 'deny', resource: 'tool_calls', scope: 'host' });
      expect(decision.kind !== 'allow' && decision.reason).toMatch(/invalid answer/);
    },
  );

  it('denies when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = hostGuard('/hang', 10_000).beforeToolCall('bash', controller.signal);
    controller.abort();
    await expect(pending).resolves.toMatchObject({ kind: 'deny', reason: expect.stringMatching(/aborted/) });
  });

  it('asks a WebSocket host through the registry', async () => {
    const registry = new WebSocketHostRegistry();
    registry.attach('c1', (frame) =>
      setImmediate(() =>
        registry.deliver('c1', {
          type: 'hook_response',
          request_id: frame.request_id,
          decision: frame.kind === 'budget_check' ? 'deny' : 'allow',
          resource: 'wall_time',
        }),
      ),
    );
    const guard = new HostBudgetGuard({
      endpoint: { kind: 'websocket', connectionId: 'c1' },
      registry,
      sessionId: 's1',
      tenantId: 'acme',
      now: () => 0,
    });
    expect(await guard.beforeLlmCall(1)).toMatchObject({
      kind: 'deny',
      resource: 'wall_time',
      scope: 'host',
      reason: 'budget host answered deny',
    });
    registry.detach('c1');
    expect(await guard.beforeLlmCall(1)).toMatchObject({
      kind: 'deny',
      reason: expect.stringMatching(/no WebSocket host connection c1/),
    });
  });
});

/** A scripted guard that records what it was asked. */
function scripted(decision: BudgetDecision): BudgetGuard & { calls: string[]; released: number; tokens: number } {
  const guard = {
    calls: [] as string[],
    released: 0,
    tokens: 0,
    async beforeLlmCall() {
      guard.calls.push('llm');
      return decision;
    },
    recordUsage(n: number) {
      guard.tokens += n;
    },
    async beforeToolCall(name: string) {
      guard.calls.push(name);
      return decision;
    },
    releaseToolCall() {
      guard.released += 1;
    },
  };
  return guard;
}

const soft: BudgetDecision = {
  kind: 'soft',
  resource: 'llm_tokens',
  reason: 'near',
  used: 8,
  limit: 10,
  scope: 'session',
};
const deny: BudgetDecision = {
  kind: 'deny',
  resource: 'llm_tokens',
  reason: 'spent',
  used: 10,
  limit: 10,
  scope: 'tenant',
};

describe('combineGuards', () => {
  it('deny wins, then soft, else allow', async () => {
    expect(await combineGuards(scripted({ kind: 'allow' }), scripted({ kind: 'allow' })).beforeLlmCall(1)).toEqual({
      kind: 'allow',
    });
    expect(await combineGuards(scripted({ kind: 'allow' }), scripted(soft)).beforeLlmCall(1)).toEqual(soft);
    expect(await combineGuards(scripted(soft), scripted(deny)).beforeLlmCall(1)).toEqual(deny);
    expect(await combineGuards().beforeToolCall('x')).toEqual({ kind: 'allow' });
  });

  it('stops at the first deny and releases the tool call counted by earlier guards', async () => {
    const first = scripted(soft);
    const second = scripted(deny);
    const third = scripted({ kind: 'allow' });
    expect(await combineGuards(first, second, third).beforeToolCall('bash')).toEqual(deny);
    expect(third.calls).toEqual([]);
    expect([first.released, second.released, third.released]).toEqual([1, 0, 0]);
  });

  it('fans usage out to every guard', () => {
    const a = scripted({ kind: 'allow' });
    const b = scripted({ kind: 'allow' });
    combineGuards(a, b).recordUsage(42);
    expect([a.tokens, b.tokens]).toEqual([42, 42]);
  });

  it('combines a builtin and a host guard: the host is not asked once the builtin denies, and counts stay true', async () => {
    const builtin = new BuiltinBudgetGuard({ limits: { maxToolCalls: 2 }, now: () => 0 });
    const combined = combineGuards(builtin, hostGuard('/by-phase'));
    const before = host.on('/by-phase').length;
    expect(await combined.beforeToolCall('read')).toEqual({ kind: 'allow' });
    expect(await combined.beforeToolCall('bash')).toMatchObject({ kind: 'deny', scope: 'host', reason: 'no shell' });
    // The host's deny gave back the builtin's count: one call ran.
    expect(builtin.usage().toolCalls).toBe(1);
    expect(await combined.beforeToolCall('read')).toMatchObject({ kind: 'soft', scope: 'session' });
    expect(await combined.beforeToolCall('read')).toMatchObject({
      kind: 'deny',
      scope: 'session',
      resource: 'tool_calls',
    });
    expect(host.on('/by-phase').length - before).toBe(3);
  });

  it('fits the invokers governance interface', () => {
    const asGovernance: GovernanceBudget = combineGuards(new BuiltinBudgetGuard({ now: () => 0 }));
    expect(typeof asGovernance.beforeToolCall).toBe('function');
  });
});
