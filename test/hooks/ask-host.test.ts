import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askHost } from '../../src/runtime/policy/host-bridge/ask-host.js';
import { linkSignals } from '../../src/runtime/policy/host-bridge/linked-signal.js';
import { MAX_WEBHOOK_RESPONSE_BYTES } from '../../src/runtime/policy/host-bridge/webhook-client.js';
import { WebSocketHostRegistry } from '../../src/runtime/policy/host-bridge/websocket-host-registry.js';
import { hostFailure } from './engine-fixtures.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';

let host: WebhookServer;

beforeAll(async () => {
  host = await startWebhookServer({
    '/echo': (body) => ({ body: { received: body } }),
    '/huge': { body: { blob: 'x'.repeat(MAX_WEBHOOK_RESPONSE_BYTES + 10) } },
    '/empty': { status: 204, body: '' },
  });
});

afterAll(async () => {
  await host.close();
});

describe('askHost', () => {
  it('posts kind and request_id beside the payload; the payload cannot override them', async () => {
    const answer = await askHost(
      { kind: 'webhook', allowPrivateNetworks: true, url: host.url('/echo') },
      'budget_check',
      { session_id: 's1', kind: 'spoofed', request_id: 'spoofed' },
      { timeoutMs: 2000, newRequestId: () => 'r-1' },
    );
    expect(answer).toEqual({ received: { session_id: 's1', kind: 'budget_check', request_id: 'r-1' } });
  });

  it('bounds the answer size and rejects an empty body as invalid JSON', async () => {
    const huge = await hostFailure(
      askHost({ kind: 'webhook', allowPrivateNetworks: true, url: host.url('/huge') }, 'k', {}, { timeoutMs: 5000 }),
    );
    expect(huge.failure).toBe('bad_response');
    expect(huge.message).toMatch(/MAX_WEBHOOK_RESPONSE_BYTES/);
    expect(
      (
        await hostFailure(
          askHost(
            { kind: 'webhook', allowPrivateNetworks: true, url: host.url('/empty') },
            'k',
            {},
            { timeoutMs: 2000 },
          ),
        )
      ).failure,
    ).toBe('bad_response');
  });

  it('refuses non-http URLs without sending anything', async () => {
    const error = await hostFailure(
      askHost({ kind: 'webhook', url: 'file:///etc/passwd' }, 'k', {}, { timeoutMs: 2000 }),
    );
    expect(error.failure).toBe('invalid_endpoint');
  });

  it('routes WebSocket endpoints through the registry', async () => {
    const registry = new WebSocketHostRegistry();
    registry.attach('c1', (frame) =>
      setImmediate(() =>
        registry.deliver('c1', { type: 'hook_response', request_id: frame.request_id, decision: 'allow' }),
      ),
    );
    await expect(
      askHost({ kind: 'websocket', connectionId: 'c1' }, 'budget_check', {}, { timeoutMs: 1000, registry }),
    ).resolves.toEqual({ decision: 'allow' });
    expect(
      (await hostFailure(askHost({ kind: 'websocket', connectionId: 'c1' }, 'k', {}, { timeoutMs: 1000 }))).failure,
    ).toBe('unknown_connection');
  });
});

describe('linkSignals', () => {
  it('follows its sources and leaves no listener behind', async () => {
    const longLived = new AbortController();
    for (let i = 0; i < 50; i++) {
      await askHost(
        { kind: 'webhook', allowPrivateNetworks: true, url: host.url('/echo') },
        'k',
        {},
        { timeoutMs: 2000, signal: longLived.signal },
      );
    }
    expect(getEventListeners(longLived.signal, 'abort')).toHaveLength(0);
    const link = linkSignals([longLived.signal, undefined]);
    expect(getEventListeners(longLived.signal, 'abort')).toHaveLength(1);
    longLived.abort(new Error('stop'));
    expect(link.signal.aborted).toBe(true);
    expect((link.signal.reason as Error).message).toBe('stop');
    link.dispose();
    expect(linkSignals([longLived.signal]).signal.aborted).toBe(true);
  });
});
