import { describe, expect, it } from 'vitest';
import { isCodeError } from '../../src/errors.js';
import type { HookRequestFrame } from '../../src/protocol/hooks.js';
import type { HookEngine } from '../../src/runtime/policy/hooks/hook-engine.js';
import { WebSocketHostRegistry } from '../../src/runtime/policy/host-bridge/websocket-host-registry.js';
import { makeEngine, toolPayload } from './engine-fixtures.js';

/** An in-memory WebSocket host: answers each hook_request (asynchronously, like a real client) via deliver. */
function attachHost(
  registry: WebSocketHostRegistry,
  connectionId: string,
  tenantId: string,
  answer: (frame: HookRequestFrame) => Record<string, unknown> | undefined,
): HookRequestFrame[] {
  const frames: HookRequestFrame[] = [];
  registry.attach(
    connectionId,
    (frame) => {
      frames.push(frame);
      const reply = answer(frame);
      if (reply)
        setImmediate(() =>
          registry.deliver(connectionId, { type: 'hook_response', request_id: frame.request_id, ...reply }),
        );
    },
    { tenantId },
  );
  return frames;
}

function codeOf(fn: () => unknown): { code: string | undefined; message: string } {
  try {
    fn();
  } catch (error) {
    return { code: isCodeError(error) ? error.code : undefined, message: (error as Error).message };
  }
  return { code: undefined, message: '' };
}

async function gateBash(engine: HookEngine, command: string) {
  return engine.gate('pre_tool_use', toolPayload('bash', { command }), {
    toolName: 'bash',
    args: { command },
    sessionId: 's1',
  });
}

describe('HookEngine with WebSocket hosts', () => {
  it('sends hook_request frames and acts on hook_response answers', async () => {
    const { engine, registry } = makeEngine();
    const frames = attachHost(registry, 'conn-1', 'acme', (frame) =>
      String((frame.payload.args as { command: string }).command).startsWith('rm')
        ? { action: 'block', reason: 'no rm' }
        : { action: 'continue' },
    );
    const info = engine.register(
      { id: 'ws', event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'conn-1' } },
      { tenantId: 'acme' },
    );
    expect(info.endpoint).toEqual({ type: 'websocket', connectionId: 'conn-1', connected: true });
    await expect(gateBash(engine, 'ls')).resolves.toMatchObject({ action: 'continue' });
    await expect(gateBash(engine, 'rm -rf /')).resolves.toMatchObject({
      action: 'block',
      reason: 'no rm',
      hookId: 'ws',
    });
    expect(frames[0]).toMatchObject({
      type: 'hook_request',
      kind: 'pre_tool_use',
      payload: { session_id: 's1', tool: 'bash', args: { command: 'ls' }, hook_id: 'ws' },
    });
  });

  it('fails closed on timeout and when the socket goes away; the hook stays, shown as disconnected', async () => {
    const { engine, registry } = makeEngine();
    attachHost(registry, 'silent', 'acme', () => undefined);
    engine.register(
      { id: 'mute', event: 'pre_tool_use', timeoutMs: 50, endpoint: { type: 'websocket', connectionId: 'silent' } },
      { tenantId: 'acme' },
    );
    const timedOut = await gateBash(engine, 'ls');
    expect(timedOut).toMatchObject({ action: 'block', hookId: 'mute', failed: true });
    expect(timedOut.reason).toMatch(/hook mute \(pre_tool_use\) failed.*within 50 ms/);

    const { engine: other, registry: otherRegistry } = makeEngine();
    attachHost(otherRegistry, 'leaving', 'acme', () => undefined);
    other.register(
      {
        id: 'gone',
        event: 'pre_tool_use',
        timeoutMs: 30_000,
        endpoint: { type: 'websocket', connectionId: 'leaving' },
      },
      { tenantId: 'acme' },
    );
    const started = Date.now();
    const pending = gateBash(other, 'ls');
    await new Promise((resolve) => setImmediate(resolve));
    otherRegistry.detach('leaving');
    const outcome = await pending;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(outcome).toMatchObject({
      action: 'block',
      failed: true,
      reason: expect.stringMatching(/closed before answering/),
    });
    expect(other.list()[0].endpoint).toEqual({ type: 'websocket', connectionId: 'leaving', connected: false });
    // Still blocking: a policy hook never silently disappears with its socket.
    await expect(gateBash(other, 'ls')).resolves.toMatchObject({
      action: 'block',
      failed: true,
      reason: expect.stringMatching(/no WebSocket host connection leaving/),
    });
  });

  it('needs the connection id of a socket of the same tenant', () => {
    const { engine, registry } = makeEngine();
    attachHost(registry, 'mine', 'acme', () => ({ action: 'continue' }));
    attachHost(registry, 'theirs', 'globex', () => ({ action: 'continue' }));
    const missing = codeOf(() =>
      engine.register({ event: 'pre_tool_use', endpoint: { type: 'websocket' } }, { tenantId: 'acme' }),
    );
    expect(missing.code).toBe('VALIDATION_ERROR');
    expect(missing.message).toMatch(/^endpoint\.connectionId: required .*"host_registered" frame/);
    const foreign = codeOf(() =>
      engine.register(
        { event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'theirs' } },
        { tenantId: 'acme' },
      ),
    );
    const unknown = codeOf(() =>
      engine.register(
        { event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'nobody' } },
        { tenantId: 'acme' },
      ),
    );
    // Same answer for another tenant's socket and an unknown one: no probing.
    expect(foreign).toEqual(unknown);
    expect(foreign.message).toMatch(/^endpoint\.connectionId: no open events WebSocket/);
    // A registration arriving on the socket itself may omit the id.
    expect(
      engine.register(
        { event: 'pre_tool_use', endpoint: { type: 'websocket' } },
        { tenantId: 'acme', connectionId: 'mine' },
      ).endpoint,
    ).toEqual({ type: 'websocket', connectionId: 'mine', connected: true });
    expect(engine.list()).toHaveLength(1);
  });
});

describe('HookEngine observing hooks', () => {
  it('never blocks or waits, even when hooks fail or hang; failures go to onError', async () => {
    const { engine, registry, failures } = makeEngine();
    attachHost(registry, 'ok', 'acme', () => ({ action: 'block', reason: 'ignored for observers' }));
    attachHost(registry, 'hangs', 'acme', () => undefined);
    engine.register(
      { id: 'obs-ok', event: 'post_tool_use', endpoint: { type: 'websocket', connectionId: 'ok' } },
      { tenantId: 'acme' },
    );
    engine.register(
      { id: 'obs-hang', event: 'post_tool_use', timeoutMs: 80, endpoint: { type: 'websocket', connectionId: 'hangs' } },
      { tenantId: 'acme' },
    );
    engine.register(
      { id: 'obs-missing', event: 'post_tool_use', endpoint: { type: 'websocket', connectionId: 'ok' } },
      { tenantId: 'acme' },
    );
    registry.detach('ok');
    const payload = { ...toolPayload('bash', { command: 'ls' }), result: { output: 'a\nb', exit_code: 0 } };
    const started = Date.now();
    const returned = engine.observe('post_tool_use', payload, {
      toolName: 'bash',
      args: { command: 'ls' },
      sessionId: 's1',
    });
    expect(returned).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(100);
    await engine.idle();
    expect(failures.map((f) => [f.hookId, f.failure]).sort()).toEqual([
      ['obs-hang', 'timeout'],
      ['obs-missing', 'unknown_connection'],
      ['obs-ok', 'unknown_connection'],
    ]);
  });

  it('bounds concurrency and backlog of asyncExecution hooks; dropped observations are reported', async () => {
    const { engine, registry, failures } = makeEngine({ observeConcurrency: 1, maxQueuedObservations: 1 });
    let inFlight = 0;
    let maxInFlight = 0;
    registry.attach(
      'slow',
      (frame) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => {
          inFlight -= 1;
          registry.deliver('slow', { type: 'hook_response', request_id: frame.request_id, action: 'continue' });
        }, 20);
      },
      { tenantId: 'acme' },
    );
    for (const id of ['a', 'b', 'c'])
      engine.register(
        { id, event: 'session_start', asyncExecution: true, endpoint: { type: 'websocket', connectionId: 'slow' } },
        { tenantId: 'acme' },
      );
    engine.observe('session_start', { session_id: 's1' }, { sessionId: 's1' });
    await engine.idle();
    expect(maxInFlight).toBe(1);
    expect(failures).toEqual([
      expect.objectContaining({
        hookId: 'c',
        failure: 'dropped',
        message: expect.stringMatching(/maxQueuedObservations/),
      }),
    ]);
  });

  it('matches observing hooks like gating ones and survives a throwing onError', async () => {
    const registry = new WebSocketHostRegistry();
    const { engine } = makeEngine({
      registry,
      onError: () => {
        throw new Error('callback bug');
      },
    });
    const frames: HookRequestFrame[] = [];
    registry.attach('c', (frame) => frames.push(frame), { tenantId: 'acme' });
    engine.register(
      {
        event: 'on_error',
        matcher: { sessionId: 's2' },
        timeoutMs: 20,
        endpoint: { type: 'websocket', connectionId: 'c' },
      },
      { tenantId: 'acme' },
    );
    engine.observe('on_error', { session_id: 's1', error_type: 'other', error_message: 'x' }, { sessionId: 's1' });
    engine.observe('on_error', { session_id: 's2', error_type: 'other', error_message: 'x' }, { sessionId: 's2' });
    await engine.idle();
    expect(frames.map((f) => f.payload.session_id)).toEqual(['s2']);
  });

  it('drops observations after close', async () => {
    const { engine, registry } = makeEngine();
    const frames: HookRequestFrame[] = [];
    registry.attach('c', (frame) => frames.push(frame), { tenantId: 'acme' });
    engine.register({ event: 'session_end', endpoint: { type: 'websocket', connectionId: 'c' } }, { tenantId: 'acme' });
    engine.close();
    engine.observe('session_end', { session_id: 's1' }, { sessionId: 's1' });
    await engine.idle();
    expect(frames).toEqual([]);
  });
});
