import { describe, expect, it } from 'vitest';
import { ClusterEventSchema } from '../../src/protocol/cluster-event.js';
import { parseClusterEvent } from '../../src/cluster/cluster-events.js';

describe('cluster events', () => {
  it('accepts each host-injected event type', () => {
    const events = [
      { type: 'budget_threshold_hit', payload: { resource: 'llm_tokens', kind: 'hard', consumed: 1200, limit: 1000, scope: 'tenant' } },
      { type: 'budget_threshold_hit', payload: { resource: 'usd_cost', kind: 'soft', consumed: 8.5, limit: 10, message: 'tenant spend at 85%' } },
      { type: 'passivation_requested', payload: { reason: 'host-rebalance' } },
      { type: 'peer_invocation', payload: { from_session_id: 's-3' } },
      { type: 'passivation_requested', payload: { reason: 'node_drain', deadline_ms: 30_000 } },
      { type: 'peer_invocation', payload: { from_session_id: 's-2', from_tenant_id: 'tenant-b', correlation_id: 'c-1' } },
    ];
    for (const raw of events) expect(parseClusterEvent(raw)).toEqual(raw);
    expect(ClusterEventSchema.safeParse(events[4]).success).toBe(true);
  });

  it('names the failing fields', () => {
    const cases: Array<[unknown, string]> = [
      [{ type: 'reboot', payload: {} }, 'body.type: '],
      [{ type: 'passivation_requested', payload: { reason: '', deadline_ms: 10 } }, 'body.payload.reason: '],
      [{ type: 'passivation_requested', payload: { reason: 'manual', deadline_ms: 1.5 } }, 'body.payload.deadline_ms: '],
      [{ type: 'budget_threshold_hit', payload: { resource: 'llm_tokens', kind: 'maybe', consumed: 1, limit: 2 } }, 'body.payload.kind: '],
      [{ type: 'budget_threshold_hit', payload: { resource: 'llm_tokens', kind: 'soft', limit: 2 } }, 'body.payload.consumed: '],
      [{ type: 'peer_invocation', payload: { correlation_id: 'c-1' } }, 'body.payload.from_session_id: '],
      [{ type: 'peer_invocation', payload: { from_session_id: 's-2', from_tenant_id: 't', correlation_id: 'c', extra: 1 } }, 'body.payload.extra: unknown key'],
      [{ type: 'passivation_requested', payload: { reason: 'manual', deadline_ms: 5 }, note: 'x' }, 'body.note: unknown key'],
    ];
    for (const [raw, named] of cases) {
      let thrown: unknown;
      try {
        parseClusterEvent(raw);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(raw)).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining(named) });
      expect((thrown as { details: { issues: Array<{ path: string }> } }).details.issues[0]?.path).toBe(named.split(':')[0]);
    }
  });
});
