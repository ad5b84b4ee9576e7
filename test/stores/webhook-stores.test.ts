import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredWebhookDelivery } from '../../src/protocol/webhooks.js';
import type { WebhookStore } from '../../src/runtime/ports/webhook-store.js';
import { FileWebhookStore } from '../../src/stores/file-webhook-store.js';
import { MemoryWebhookStore } from '../../src/stores/memory-webhook-store.js';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { RedisWebhookStore } from '../../src/stores/redis-webhook-store.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { connectRedisTarget } from '../support/redis-target.js';
import { keysWithPrefix, randomKeyPrefix } from './redis-test-client.js';

const S = sessionKey('tenant-a', 's1');
const OTHER = sessionKey('tenant-b', 's1');

function delivery(id: string, over: Partial<StoredWebhookDelivery> = {}): StoredWebhookDelivery {
  return {
    deliveryId: id,
    event: 'run_completed',
    sessionId: 's1',
    runId: 'run_1',
    url: 'https://example.com/hook',
    status: 'pending',
    attempts: 0,
    createdAtMs: 1000,
    nextAttemptAtMs: 1000,
    lastAttemptAtMs: null,
    lastStatus: null,
    lastError: null,
    deliveredAtMs: null,
    tenantId: 'tenant-a',
    body: '{"type":"run_completed"}',
    allowPrivate: false,
    ...over,
  };
}

interface Made {
  store: WebhookStore;
  /** A second store over the same storage (another process or node), when the kind has one. */
  again?: () => WebhookStore;
  keys?: () => Promise<string[]>;
  dispose(): Promise<void>;
}

const kinds: Array<[string, () => Promise<Made>]> = [
  ['memory', async () => ({ store: new MemoryWebhookStore(), dispose: async () => undefined })],
  [
    'file',
    async () => {
      const root = await mkdtemp(path.join(tmpdir(), 'a3s-webhooks-'));
      const dir = path.join(root, 'webhooks');
      return {
        store: new FileWebhookStore(dir),
        again: () => new FileWebhookStore(dir),
        dispose: () => rm(root, { recursive: true, force: true }),
      };
    },
  ],
  [
    'redis',
    async () => {
      const redis: RedisClient = connectRedisTarget();
      const prefix = randomKeyPrefix();
      return {
        store: new RedisWebhookStore(redis, prefix),
        again: () => new RedisWebhookStore(redis, prefix),
        keys: () => keysWithPrefix(redis, prefix),
        dispose: async () => {
          for (const key of await keysWithPrefix(redis, prefix)) await redis.del(key);
          await redis.quit();
        },
      };
    },
  ],
];

describe.each(kinds)('WebhookStore (%s)', (kind, make) => {
  let made: Made | undefined;
  afterEach(async () => {
    await made?.dispose();
    made = undefined;
  });

  it('keeps the first record of a delivery id, and a run webhook per run', async () => {
    made = await make();
    const { store } = made;
    expect(await store.createDelivery(S, delivery('whd_a'))).toMatchObject({ body: '{"type":"run_completed"}' });
    const second = await store.createDelivery(S, delivery('whd_a', { body: '{"other":true}', createdAtMs: 2000 }));
    expect(second).toMatchObject({ body: '{"type":"run_completed"}', createdAtMs: 1000 });
    expect(await store.listDeliveries(S)).toHaveLength(1);
    expect(await store.listDeliveries(OTHER)).toEqual([]);
    const hook = {
      url: 'https://example.com/h',
      events: ['run_completed' as const],
      allowPrivate: false,
      originRunId: 'r1',
    };
    await store.putRunWebhook(S, 'r2', hook);
    expect(await store.getRunWebhook(S, 'r2')).toEqual(hook);
    expect(await store.getRunWebhook(OTHER, 'r2')).toBeUndefined();
    expect(await store.getRunWebhook(S, 'r3')).toBeUndefined();
  });

  it('lists due pending deliveries only, and forgets delivered ones', async () => {
    made = await make();
    const { store } = made;
    await store.createDelivery(S, delivery('whd_now', { nextAttemptAtMs: 1000 }));
    await store.createDelivery(S, delivery('whd_later', { nextAttemptAtMs: 9000 }));
    await store.createDelivery(OTHER, delivery('whd_other', { nextAttemptAtMs: 500 }));
    const due = await store.due(2000, 10);
    expect(due.map((d) => `${d.session}|${d.deliveryId}`).sort()).toEqual([`${S}|whd_now`, `${OTHER}|whd_other`]);
    await store.updateDelivery(S, delivery('whd_now', { status: 'delivered', attempts: 1, nextAttemptAtMs: null }));
    expect((await store.due(2000, 10)).map((d) => d.deliveryId)).toEqual(['whd_other']);
    expect((await store.due(10_000, 10)).map((d) => d.deliveryId).sort()).toEqual(['whd_later', 'whd_other']);
    expect(await store.due(10_000, 1)).toHaveLength(1);
    expect((await store.getDelivery(S, 'whd_now'))?.status).toBe('delivered');
  });

  it('gives a claim to one owner at a time until it is released or lapses', async () => {
    made = await make();
    const { store } = made;
    const peer = made.again?.() ?? store;
    expect(await store.claim(S, 'whd_a', 'node-a', 400)).toBe(true);
    expect(await store.claim(S, 'whd_a', 'node-b', 400)).toBe(false);
    // On Redis every node sees the claim; the file and memory stores belong to one process (one node).
    if (kind === 'redis') expect(await peer.claim(S, 'whd_a', 'node-b', 400)).toBe(false);
    await store.release(S, 'whd_a', 'node-b');
    expect(await store.claim(S, 'whd_a', 'node-c', 400)).toBe(false);
    await store.release(S, 'whd_a', 'node-a');
    expect(await store.claim(S, 'whd_a', 'node-c', 400)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await store.claim(S, 'whd_a', 'node-d', 400)).toBe(true);
  });

  it('a purge removes everything of the session; an attempt finishing later brings nothing back', async () => {
    made = await make();
    const { store } = made;
    await store.createDelivery(S, delivery('whd_a'));
    await store.createDelivery(OTHER, delivery('whd_b'));
    await store.putRunWebhook(S, 'r1', {
      url: 'https://x.test/',
      events: ['run_failed'],
      allowPrivate: false,
      originRunId: 'r1',
    });
    await store.deleteSession(S);
    await store.updateDelivery(S, delivery('whd_a', { attempts: 1, nextAttemptAtMs: 1500 }));
    expect(await store.listDeliveries(S)).toEqual([]);
    expect(await store.getRunWebhook(S, 'r1')).toBeUndefined();
    expect((await store.due(10_000, 10)).map((d) => d.deliveryId)).toEqual(['whd_b']);
    if (made.keys) expect((await made.keys()).filter((k) => k.includes('tenant-a'))).toEqual([]);
  });

  it.runIf(kind !== 'memory')('a second store over the same storage reads what the first wrote', async () => {
    made = await make();
    await made.store.createDelivery(S, delivery('whd_a'));
    const reopened = made.again!();
    expect((await reopened.getDelivery(S, 'whd_a'))?.deliveryId).toBe('whd_a');
    expect((await reopened.due(2000, 10)).map((d) => d.deliveryId)).toEqual(['whd_a']);
  });
});
