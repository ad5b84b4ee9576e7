import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeRegistry } from '../../src/cluster/node-identity.js';
import { SessionLeases, type LeaseAcquisition, type SessionLeasesOptions } from '../../src/cluster/session-lease.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { RedisSessionStore } from '../../src/stores/redis-session-store.js';
import { makeSnapshot } from '../support/snapshot-fixtures.js';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { deleteKeysWithPrefix, dropConnection, randomKeyPrefix } from '../stores/redis-test-client.js';
import { connectRedisTarget } from '../support/redis-target.js';
import { sleep, waitUntil } from './wait-until.js';

const TTL_MS = 300;
/** The sessions of these tests: ids are per tenant, so leases are keyed by tenant and id. */
const s1 = sessionKey('tenant-a', 's1');
const s2 = sessionKey('tenant-a', 's2');

describe('SessionLeases', () => {
  let redis: RedisClient;
  let keyPrefix: string;
  const extraClients: RedisClient[] = [];
  const leaseSets: SessionLeases[] = [];

  beforeEach(() => {
    redis = connectRedisTarget();
    keyPrefix = randomKeyPrefix();
  });

  afterEach(async () => {
    await Promise.all(leaseSets.splice(0).map((leases) => leases.stop()));
    await deleteKeysWithPrefix(redis, keyPrefix);
    await redis.quit();
    // Some tests drop a node's connection on purpose; disconnect() works in every state.
    for (const client of extraClients.splice(0)) client.disconnect();
  });

  // Each "node" gets its own connection, as separate processes would.
  function node(nodeId: string, options: Partial<SessionLeasesOptions> = {}): SessionLeases {
    const client = connectRedisTarget();
    extraClients.push(client);
    const leases = new SessionLeases({ redis: client, keyPrefix, nodeId, ttlMs: TTL_MS, ...options });
    leaseSets.push(leases);
    return leases;
  }

  it('acquires with epoch 1, re-acquires idempotently, renews and releases', async () => {
    const a = node('node-a');
    expect(await a.acquire(s1)).toEqual({ ok: true, epoch: 1 });
    expect(await redis.get(`${keyPrefix}{tenant-a/s1}:lease`)).toBe('node-a');
    expect(await redis.get(`${keyPrefix}{tenant-a/s1}:epoch`)).toBe('1');
    const ttl = await redis.pttl(`${keyPrefix}{tenant-a/s1}:lease`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(TTL_MS);
    // Our own live lease: same epoch, no bump.
    expect(await a.acquire(s1)).toEqual({ ok: true, epoch: 1 });
    expect(await a.owner(s1)).toEqual({ nodeId: 'node-a', epoch: 1 });
    expect(a.held()).toEqual([{ sessionId: s1, epoch: 1 }]);

    expect(await a.renew(s1, 1)).toBe(true);
    expect(await a.renew(s1, 7)).toBe(false);
    // A wrong-epoch renewal does not forget the lease held at the right epoch.
    expect(a.held()).toEqual([{ sessionId: s1, epoch: 1 }]);

    expect(await a.release(s1, 1)).toBe(true);
    expect(await redis.exists(`${keyPrefix}{tenant-a/s1}:lease`)).toBe(0);
    expect(await a.owner(s1)).toBeUndefined();
    expect(a.held()).toEqual([]);
    expect(await a.release(s1, 1)).toBe(false);

    // The epoch never goes back: the next acquisition is a new epoch, even by the same node.
    expect(await a.acquire(s1)).toEqual({ ok: true, epoch: 2 });
    expect(await redis.pttl(`${keyPrefix}{tenant-a/s1}:epoch`)).toBe(-1);
  });

  it('keeps a renewing owner, then lets another node take over with a new epoch after it stops', async () => {
    const lost: Array<[string, number]> = [];
    const a = node('node-a', { onLost: (sessionId, epoch) => lost.push([sessionId, epoch]) });
    const b = node('node-b');
    const registryA = new NodeRegistry({ redis, keyPrefix, nodeId: 'node-a', advertiseUrl: 'http://a', ttlMs: 10_000 });
    await registryA.start();

    expect(await a.acquire(s1)).toEqual({ ok: true, epoch: 1 });
    // Three TTLs of A's automatic renewals: B is refused every time and told A is alive.
    const until = Date.now() + 3 * TTL_MS;
    while (Date.now() < until) {
      expect(await b.acquire(s1)).toEqual({ ok: false, owner: 'node-a', alive: true });
      await sleep(50);
    }
    expect(a.fenceFor(s1)).toEqual({ ownerKey: `${keyPrefix}{tenant-a/s1}:epoch`, epoch: 1 });
    expect(b.fenceFor(s1)).toBeUndefined();

    await registryA.stop();
    expect(await b.acquire(s1)).toEqual({ ok: false, owner: 'node-a', alive: false });

    // A stops renewing (a paused process): its lease expires and B takes over at epoch 2.
    await a.stop();
    let takeover: LeaseAcquisition | undefined;
    await waitUntil('node-b took over', async () => {
      takeover = await b.acquire(s1);
      return takeover.ok;
    });
    expect(takeover).toEqual({ ok: true, epoch: 2 });
    expect(await b.owner(s1)).toEqual({ nodeId: 'node-b', epoch: 2 });
    const fenceB = b.fenceFor(s1);
    expect(fenceB).toEqual({ ownerKey: `${keyPrefix}{tenant-a/s1}:epoch`, epoch: 2 });
    expect(await redis.get(fenceB?.ownerKey ?? '')).toBe(String(fenceB?.epoch));

    // A wakes up: its renewal fails, onLost fires once, and it forgets the lease.
    expect(a.fenceFor(s1)).toEqual({ ownerKey: `${keyPrefix}{tenant-a/s1}:epoch`, epoch: 1 });
    await a.renewAll();
    expect(lost).toEqual([[s1, 1]]);
    expect(a.held()).toEqual([]);
    expect(a.fenceFor(s1)).toBeUndefined();
    expect(await a.renew(s1, 1)).toBe(false);
    // A's stale release must not free B's lease.
    expect(await a.release(s1, 1)).toBe(false);
    expect(await b.owner(s1)).toEqual({ nodeId: 'node-b', epoch: 2 });
    await a.renewAll();
    expect(lost).toHaveLength(1);
  });

  it('reports a lease lost through the automatic renewal when another node took it', async () => {
    const lost: string[] = [];
    const a = node('node-a', { onLost: (sessionId) => lost.push(sessionId) });
    expect(await a.acquire(s1)).toMatchObject({ ok: true });
    expect(await a.acquire(s2)).toMatchObject({ ok: true });
    // Simulate the lease expiring and a takeover, behind A's back.
    await redis.set(`${keyPrefix}{tenant-a/s1}:lease`, 'node-b', 'PX', 10_000);
    await redis.incr(`${keyPrefix}{tenant-a/s1}:epoch`);
    await waitUntil('onLost fired', () => lost.length > 0);
    expect(lost).toEqual([s1]);
    expect(a.held()).toEqual([{ sessionId: s2, epoch: 1 }]);

    // Re-acquiring a session believed held, but taken meanwhile, also reports the loss.
    await a.stop();
    await redis.set(`${keyPrefix}{tenant-a/s2}:lease`, 'node-b', 'PX', 10_000);
    expect(await a.acquire(s2)).toEqual({ ok: false, owner: 'node-b', alive: false });
    expect(lost).toEqual([s1, s2]);
    expect(a.held()).toEqual([]);
  });

  it('gives a lease up locally when Redis stays unreachable for a whole TTL', async () => {
    const lost: string[] = [];
    const errors: unknown[] = [];
    const a = node('node-a', { onLost: (sessionId) => lost.push(sessionId), onError: (error) => errors.push(error) });
    await a.acquire(s1);
    // A's connection is gone for good: renewals fail on the wire, and after the TTL A stops believing it owns s1.
    dropConnection(extraClients[0]!);
    await waitUntil('onLost fired', () => lost.length > 0);
    expect(lost).toEqual([s1]);
    expect(a.held()).toEqual([]);
    expect(errors[0]).toMatchObject({ code: 'PERSISTENCE_FAILED' });
  });

  it('releases every held lease on drain', async () => {
    const a = node('node-a');
    const b = node('node-b');
    await a.acquire(s1);
    await a.acquire(s2);
    expect(await a.releaseAll()).toEqual([s1, s2]);
    expect(a.held()).toEqual([]);
    expect(await b.acquire(s1)).toEqual({ ok: true, epoch: 2 });
  });

  it('fences a RedisSessionStore: the old owner is refused after a takeover, the new owner accepted', async () => {
    const a = node('node-a');
    const b = node('node-b');
    const storeA = new RedisSessionStore({
      redis: extraClients[0]!,
      keyPrefix,
      fence: (sessionId) => a.storeFence(sessionId),
    });
    const storeB = new RedisSessionStore({
      redis: extraClients[1]!,
      keyPrefix,
      fence: (sessionId) => b.storeFence(sessionId),
    });

    // Nobody holds the session yet: neither node may write it.
    await expect(storeA.save(makeSnapshot('s1', 1))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: { reason: 'fenced' },
    });

    await a.acquire(s1);
    await storeA.save(makeSnapshot('s1', 1));
    await expect(storeB.save(makeSnapshot('s1', 2))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: { reason: 'fenced' },
    });

    // A pauses past its lease; B takes over at epoch 2.
    await a.stop();
    await waitUntil('node-b took over', async () => (await b.acquire(s1)).ok);

    // A has not noticed yet (it still believes it holds epoch 1): its save is refused by the fence.
    expect(a.fenceFor(s1)?.epoch).toBe(1);
    await expect(storeA.save(makeSnapshot('s1', 2))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: { sessionId: 's1', reason: 'fenced', epoch: 1, currentEpoch: '2' },
    });
    // After noticing, A holds nothing; storeFence still refuses (a fenceFor-only wiring would write unfenced).
    await a.renewAll();
    expect(a.fenceFor(s1)).toBeUndefined();
    await expect(storeA.save(makeSnapshot('s1', 3))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: { reason: 'fenced' },
    });
    await expect(storeA.delete(s1)).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: { reason: 'fenced' },
    });

    await storeB.save(makeSnapshot('s1', 2));
    expect((await storeB.load(s1))?.generation).toBe(2);
    expect((await storeA.load(s1))?.generation).toBe(2);
  });
});
