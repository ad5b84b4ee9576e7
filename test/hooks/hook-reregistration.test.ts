import { describe, expect, it } from 'vitest';
import type { HookRequestFrame } from '../../src/protocol/hooks.js';
import type { WebSocketHostRegistry } from '../../src/runtime/policy/host-bridge/websocket-host-registry.js';
import { makeEngine, toolPayload } from './engine-fixtures.js';

/** A host on `connectionId` answering every hook_request with `action`; answered frames are collected. */
function host(
  registry: WebSocketHostRegistry,
  connectionId: string,
  binding: { tenantId: string; principal?: string },
  action: 'continue' | 'block',
): HookRequestFrame[] {
  const frames: HookRequestFrame[] = [];
  registry.attach(
    connectionId,
    (frame) => {
      frames.push(frame);
      setImmediate(() =>
        registry.deliver(connectionId, {
          type: 'hook_response',
          request_id: frame.request_id,
          action,
          ...(action === 'block' ? { reason: `from ${connectionId}` } : {}),
        }),
      );
    },
    { ...binding, sessionId: 's1' },
  );
  return frames;
}

const gate = { toolName: 'bash', args: { command: 'ls' }, sessionId: 's1' };

describe('a host that reconnects registers its hooks again under the same ids', () => {
  it('a websocket hook whose socket closed is replaced by the registration from the new socket, in the same place', async () => {
    const { engine, registry } = makeEngine();
    const old = host(registry, 'conn-old', { tenantId: 'acme', principal: 'alice' }, 'continue');
    engine.register(
      { id: 'first', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-old' } },
      { tenantId: 'acme' },
    );
    engine.register(
      { id: 'second', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-old' } },
      { tenantId: 'acme' },
    );
    registry.detach('conn-old');
    const fresh = host(registry, 'conn-new', { tenantId: 'acme', principal: 'alice' }, 'block');
    const info = engine.register(
      { id: 'first', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-new' } },
      { tenantId: 'acme' },
    );
    expect(info.endpoint).toEqual({ type: 'websocket', connectionId: 'conn-new', connected: true });
    // Still two hooks, "first" still runs first, and it asks the new socket (which blocks).
    expect(engine.list().map((hook) => hook.id)).toEqual(['first', 'second']);
    const outcome = await engine.gate('pre_tool_use', toolPayload('bash', { command: 'ls' }), gate);
    expect(outcome).toMatchObject({ action: 'block', hookId: 'first', reason: 'from conn-new' });
    expect(fresh).toHaveLength(1);
    expect(old).toHaveLength(0);
  });

  it('a live socket of the same tenant and principal is replaced too (the old one may not have noticed its drop yet)', () => {
    const { engine, registry } = makeEngine();
    host(registry, 'conn-old', { tenantId: 'acme', principal: 'alice' }, 'continue');
    host(registry, 'conn-new', { tenantId: 'acme', principal: 'alice' }, 'continue');
    engine.register(
      { id: 'h', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-old' } },
      { tenantId: 'acme' },
    );
    engine.register(
      { id: 'h', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-new' } },
      { tenantId: 'acme' },
    );
    expect(engine.list()).toEqual([
      expect.objectContaining({ id: 'h', endpoint: { type: 'websocket', connectionId: 'conn-new', connected: true } }),
    ]);
  });

  it("another principal's live hook, a webhook hook and a config hook keep their ids (duplicate refused)", () => {
    const { engine, registry } = makeEngine({
      configHooks: [
        { id: 'corp', event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'https://hooks.example.com/x' } },
      ],
    });
    host(registry, 'conn-alice', { tenantId: 'acme', principal: 'alice' }, 'continue');
    host(registry, 'conn-bob', { tenantId: 'acme', principal: 'bob' }, 'continue');
    engine.register(
      { id: 'alice-hook', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-alice' } },
      { tenantId: 'acme' },
    );
    engine.register(
      { id: 'audit', event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'https://hooks.example.com/audit' } },
      { tenantId: 'acme' },
    );
    const ws = (id: string) => () =>
      engine.register(
        { id, event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-bob' } },
        { tenantId: 'acme' },
      );
    expect(ws('alice-hook')).toThrow(/id: a hook "alice-hook" already exists/);
    expect(ws('audit')).toThrow(/id: a hook "audit" already exists/);
    expect(ws('corp')).toThrow(/id: a hook "corp" already exists/);
    expect(engine.list().find((hook) => hook.id === 'alice-hook')?.endpoint).toMatchObject({
      connectionId: 'conn-alice',
    });
  });

  it('a replacement does not count against maxHooks; a new id past it is refused', () => {
    const { engine, registry } = makeEngine({ maxHooks: 1 });
    host(registry, 'conn-1', { tenantId: 'acme' }, 'continue');
    engine.register(
      { id: 'only', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-1' } },
      { tenantId: 'acme' },
    );
    registry.detach('conn-1');
    host(registry, 'conn-2', { tenantId: 'acme' }, 'continue');
    engine.register(
      { id: 'only', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-2' } },
      { tenantId: 'acme' },
    );
    expect(() =>
      engine.register(
        { id: 'more', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-2' } },
        { tenantId: 'acme' },
      ),
    ).toThrow(/at most 1 hooks/);
  });
});
