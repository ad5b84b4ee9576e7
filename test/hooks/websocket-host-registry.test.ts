import { describe, expect, it } from 'vitest';
import type { HookRequestFrame } from '../../src/protocol/hooks.js';
import { WebSocketHostRegistry } from '../../src/runtime/policy/host-bridge/websocket-host-registry.js';
import { hostFailure } from './engine-fixtures.js';

function counterIds(): () => string {
  let n = 0;
  return () => `req-${++n}`;
}

function attachRecorder(registry: WebSocketHostRegistry, connectionId: string): HookRequestFrame[] {
  const frames: HookRequestFrame[] = [];
  registry.attach(connectionId, (frame) => frames.push(frame), { tenantId: 't1' });
  return frames;
}

describe('WebSocketHostRegistry', () => {
  it('sends a hook_request frame and resolves with the hook_response fields', async () => {
    const registry = new WebSocketHostRegistry({ newRequestId: counterIds() });
    const frames = attachRecorder(registry, 'c1');
    const answer = registry.request('c1', 'pre_tool_use', { tool: 'bash' }, 1000);
    expect(frames).toEqual([
      { type: 'hook_request', request_id: 'req-1', kind: 'pre_tool_use', payload: { tool: 'bash' } },
    ]);
    expect(registry.pendingCount('c1')).toBe(1);
    expect(registry.deliver('c1', { type: 'hook_response', request_id: 'req-1', action: 'block', reason: 'no' })).toBe(
      true,
    );
    await expect(answer).resolves.toEqual({ action: 'block', reason: 'no' });
    expect(registry.pendingCount('c1')).toBe(0);
  });

  it('ignores unknown request ids, invalid messages, unknown connections and answers from another connection', async () => {
    const registry = new WebSocketHostRegistry({ newRequestId: counterIds() });
    attachRecorder(registry, 'c1');
    attachRecorder(registry, 'c2');
    const answer = registry.request('c1', 'pre_prompt', {}, 1000);
    expect(registry.deliver('c1', { type: 'hook_response', request_id: 'nope', action: 'continue' })).toBe(false);
    expect(registry.deliver('c1', { type: 'hook_response' })).toBe(false);
    expect(registry.deliver('c1', { type: 'other', request_id: 'req-1' })).toBe(false);
    expect(registry.deliver('c1', 'garbage')).toBe(false);
    expect(registry.deliver('ghost', { type: 'hook_response', request_id: 'req-1', action: 'continue' })).toBe(false);
    expect(registry.deliver('c2', { type: 'hook_response', request_id: 'req-1', action: 'block' })).toBe(false);
    expect(registry.pendingCount('c1')).toBe(1);
    expect(registry.deliver('c1', { type: 'hook_response', request_id: 'req-1', action: 'continue' })).toBe(true);
    await expect(answer).resolves.toEqual({ action: 'continue' });
    // A second answer to the same request is ignored.
    expect(registry.deliver('c1', { type: 'hook_response', request_id: 'req-1', action: 'block' })).toBe(false);
  });

  it('fails pending requests at once when the connection detaches', async () => {
    const registry = new WebSocketHostRegistry();
    attachRecorder(registry, 'c1');
    const started = Date.now();
    const pending = [
      registry.request('c1', 'pre_tool_use', {}, 30_000),
      registry.request('c1', 'budget_check', {}, 30_000),
    ];
    registry.detach('c1');
    for (const request of pending) expect((await hostFailure(request)).failure).toBe('disconnected');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(registry.has('c1')).toBe(false);
    expect((await hostFailure(registry.request('c1', 'pre_tool_use', {}, 1000))).failure).toBe('unknown_connection');
    registry.detach('c1');
  });

  it('times out, and a late answer is ignored', async () => {
    const registry = new WebSocketHostRegistry({ newRequestId: counterIds() });
    attachRecorder(registry, 'c1');
    const error = await hostFailure(registry.request('c1', 'pre_tool_use', {}, 30));
    expect(error.failure).toBe('timeout');
    expect(error.message).toContain('30 ms');
    expect(registry.deliver('c1', { type: 'hook_response', request_id: 'req-1', action: 'continue' })).toBe(false);
  });

  it('honours the caller abort signal, before and during the request', async () => {
    const registry = new WebSocketHostRegistry();
    attachRecorder(registry, 'c1');
    const controller = new AbortController();
    const pending = registry.request('c1', 'pre_tool_use', {}, 30_000, controller.signal);
    controller.abort();
    expect((await hostFailure(pending)).failure).toBe('aborted');
    expect((await hostFailure(registry.request('c1', 'pre_tool_use', {}, 30_000, controller.signal))).failure).toBe(
      'aborted',
    );
    expect(registry.pendingCount('c1')).toBe(0);
  });

  it('bounds pending requests per connection', async () => {
    const registry = new WebSocketHostRegistry({ maxPendingPerConnection: 2 });
    attachRecorder(registry, 'c1');
    attachRecorder(registry, 'c2');
    const held = [registry.request('c1', 'k', {}, 30_000), registry.request('c1', 'k', {}, 30_000)];
    const refused = await hostFailure(registry.request('c1', 'k', {}, 30_000));
    expect(refused.failure).toBe('overloaded');
    expect(refused.message).toContain('maxPendingPerConnection');
    // Another connection has its own bound.
    const other = registry.request('c2', 'k', {}, 30_000);
    registry.detach('c1');
    registry.detach('c2');
    await Promise.allSettled([...held, other]);
  });

  it('fails a request whose send throws, and refuses duplicate attachment', async () => {
    const registry = new WebSocketHostRegistry();
    registry.attach('c1', () => {
      throw new Error('socket closed');
    });
    const error = await hostFailure(registry.request('c1', 'k', {}, 30_000));
    expect(error.failure).toBe('send_failed');
    expect(error.message).toContain('socket closed');
    expect(registry.pendingCount('c1')).toBe(0);
    expect(() => registry.attach('c1', () => undefined)).toThrow(/already attached/);
  });

  it('keeps the binding of each connection', () => {
    const registry = new WebSocketHostRegistry();
    registry.attach('c1', () => undefined, { tenantId: 'acme', sessionId: 's1' });
    registry.attach('c2', () => undefined);
    expect(registry.bindingOf('c1')).toEqual({ tenantId: 'acme', sessionId: 's1' });
    expect(registry.bindingOf('c2')).toBeUndefined();
    expect(registry.bindingOf('c3')).toBeUndefined();
  });
});
