import { CodeError } from '../errors.js';
import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { KeyedLock } from './keyed-lock.js';
import { RedisLegacySessions, type RedisStoreMigration } from './redis-legacy-sessions.js';
import { indexSession, readSnapshotHash } from './redis-snapshot-hash.js';
import { parseSnapshot } from './parse-snapshot.js';
import { redisFailure } from './redis-failure.js';
import { defineRedisScript, runAckedRedisScript, runRedisScript } from './redis-script.js';
import type { RedisClient } from './redis-client.js';
import { assertReplicated, type ReplicaAcks } from './replica-acks.js';
import { redisSessionKey, redisTenantSessionsKey, redisTenantSessionsKeyOf, redisTenantsKey } from './redis-keys.js';
import { DEFAULT_COMPRESS_ABOVE_BYTES, encodeRedisValue } from './redis-value-codec.js';
import {
  parseSessionKey,
  sessionIdOf,
  sessionKeyOf,
  tenantIdOf,
  tenantPartOf,
  encodeKeyPart,
  type SessionKey,
} from './session-key.js';
import type { SessionStore } from './session-store.js';

/** Key prefix of every key the Redis stores write when none is configured. */
export const DEFAULT_REDIS_KEY_PREFIX = 'a3s:';

/** The owner's lease as a save must find it: the Redis string key `ownerKey` holding the decimal `epoch`. */
export interface SessionFence {
  /** Full Redis key (no prefix is added) whose value is the current owner's lease epoch. */
  ownerKey: string;
  /** The epoch this node holds; a write is refused unless `ownerKey` holds exactly this value. */
  epoch: number;
}

/** Options for RedisSessionStore. */
export interface RedisSessionStoreOptions {
  /** Connected ioredis client (one Redis or a Cluster); the caller owns it (creates, shares and quits it). */
  redis: RedisClient;
  /** Prefix of every key this store writes (default "a3s:"). */
  keyPrefix?: string;
  /** Snapshots whose JSON is larger than this many bytes are stored gzip-compressed (default 64 KiB). */
  compressAboveBytes?: number;
  /** The lease that fences writes to a session, or undefined to write unfenced (single node, tests). */
  fence?: (session: SessionKey) => SessionFence | undefined;
  /** How long ping() waits for PONG before reporting the backend unreachable (default 2000 ms). */
  pingTimeoutMs?: number;
  /** config retention.closed_session_days in ms: a closed session's snapshot and event keys expire after it (reopening clears it). */
  closedTtlMs?: number;
  /** Replicas a save must be acknowledged by (WAIT) before it counts; none when absent. */
  replicaAcks?: ReplicaAcks;
  /**
   * Read and migrate the layout before per-tenant session ids (default true). Off on a Redis Cluster: the
   * old layout's keys span slots, and no version that wrote it could run on a cluster.
   */
  legacyLayout?: boolean;
}

/** Why a Redis save or delete was refused (details.reason of the PERSISTENCE_FAILED error). */
export type RedisRefusal = 'fenced' | 'stale_generation';

// Every write fences on the owner's lease epoch (when KEYS[2] is given) and on the generation, then
// replaces the whole hash: a reader's HMGET sees either the old generation or the new one, never a mix.
// Both keys share the session's hash tag. KEYS: snapshot hash, [epoch key]. ARGV: generation, encoding, data, [epoch].
const SAVE_SCRIPT = defineRedisScript(`
if KEYS[2] then
  local current = redis.call('GET', KEYS[2])
  if current ~= ARGV[4] then return {'fenced', current or ''} end
end
local stored = redis.call('HGET', KEYS[1], 'gen')
if stored and tonumber(stored) and tonumber(stored) >= tonumber(ARGV[1]) then return {'stale_generation', stored} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'gen', ARGV[1], 'enc', ARGV[2], 'data', ARGV[3])
return {'ok'}
`);

// KEYS: snapshot hash, [epoch key]. ARGV: [epoch].
const DELETE_SCRIPT = defineRedisScript(`
if KEYS[2] then
  local current = redis.call('GET', KEYS[2])
  if current ~= ARGV[1] then return {'fenced', current or ''} end
end
redis.call('DEL', KEYS[1])
return {'ok'}
`);

/**
 * SessionStore on Redis: one hash `<prefix>{<tenant>/<id>}:snapshot` per session with fields `gen`
 * (generation), `enc` ("json" | "gzip") and `data` (the whole SessionSnapshotV1), replaced atomically by a
 * Lua script that refuses stale generations and, when a fence is configured, writers whose lease epoch
 * (`<prefix>{<tenant>/<id>}:epoch`, same hash tag) is no longer current. Each tenant's ids are in the set
 * `<prefix>tenant:{<tenant>}:sessions` and the tenants in `<prefix>tenants`, updated beside the script
 * (they live in other slots). The old layout (`<prefix>session:<id>` and the set `<prefix>sessions`) is
 * moved on first use and, for a key missing from the old set, on load. close() leaves the client open.
 */
export class RedisSessionStore implements SessionStore {
  readonly kind = 'redis';
  /** Prefix of every key this store writes. */
  readonly keyPrefix: string;
  private readonly redis: RedisClient;
  private readonly replicaAcks: ReplicaAcks | undefined;
  private readonly compressAboveBytes: number;
  private readonly fence: ((session: SessionKey) => SessionFence | undefined) | undefined;
  private readonly closedTtlMs: number | undefined;
  private readonly pingTimeoutMs: number;
  // Saves from this store apply in call order per session even though compression is asynchronous.
  private readonly lock = new KeyedLock();
  private migration: Promise<RedisStoreMigration> | undefined;
  private readonly legacy: RedisLegacySessions | undefined;
  /** Tenants this store has listed in `<prefix>tenants` (see indexSession). */
  private readonly listedTenants = new Set<string>();
  private closed = false;

  constructor(options: RedisSessionStoreOptions) {
    this.redis = options.redis;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.compressAboveBytes = options.compressAboveBytes ?? DEFAULT_COMPRESS_ABOVE_BYTES;
    this.fence = options.fence;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 2000;
    this.closedTtlMs = options.closedTtlMs;
    this.replicaAcks = options.replicaAcks;
    this.legacy = options.legacyLayout === false ? undefined : new RedisLegacySessions(this.redis, this.keyPrefix);
  }

  /** Retention: a closed session's snapshot and events expire after closedTtlMs; an open one's never do. */
  private async expireClosed(session: SessionKey, closed: boolean): Promise<void> {
    const keys = [this.sessionKey(session), redisSessionKey(this.keyPrefix, session, 'events')];
    try {
      await Promise.all(
        keys.map((key) => (closed ? this.redis.pexpire(key, this.closedTtlMs!) : this.redis.persist(key))),
      );
    } catch (error) {
      throw redisFailure(
        `failed to set the retention of session ${sessionIdOf(session)}`,
        { sessionId: sessionIdOf(session) },
        error,
      );
    }
  }

  /** The hash holding a session's snapshot. */
  sessionKey(session: SessionKey): string {
    return redisSessionKey(this.keyPrefix, session, 'snapshot');
  }

  /** The set holding a tenant's stored session ids (encoded). */
  tenantIndexKey(tenantId: string): string {
    return redisTenantSessionsKey(this.keyPrefix, encodeKeyPart(tenantId));
  }

  /**
   * Move every session of the old layout (listed in `<prefix>sessions`) to its tenant's keys: its snapshot,
   * its event stream and its lease epoch; idempotent, safe to run on several nodes at once, and run once
   * (on first use) by every other operation. Data the old set does not list is moved when loaded.
   */
  migrate(): Promise<RedisStoreMigration> {
    const legacy = this.legacy;
    if (legacy === undefined) return Promise.resolve({ moved: 0, skipped: [] });
    this.migration ??= legacy.sweep().catch((error: unknown) => {
      this.migration = undefined;
      throw error;
    });
    return this.migration;
  }

  /**
   * Atomically replace the session's hash with this generation, after earlier saves from this store;
   * refused with PERSISTENCE_FAILED (details.reason "stale_generation" or "fenced") when the stored
   * generation is the same or newer, or when the session's lease epoch is no longer this node's.
   */
  async save(snapshot: SessionSnapshotV1): Promise<number> {
    this.assertOpen();
    // Validate and serialise at call time: later caller mutations cannot leak into this generation.
    const parsed = parseSnapshot(snapshot, 'the snapshot being saved');
    const session = sessionKeyOf(parsed);
    const sessionId = parsed.session.id;
    const generation = parsed.generation;
    const json = JSON.stringify(parsed);
    await this.migrate();
    return this.lock.run(session, async () => {
      const { encoding, data } = await encodeRedisValue(json, this.compressAboveBytes);
      // Read the fence as late as possible: the epoch current when the write is sent is the one checked.
      const fence = this.fence?.(session);
      const keys = [this.sessionKey(session), ...(fence === undefined ? [] : [fence.ownerKey])];
      const args = [String(generation), encoding, data, ...(fence === undefined ? [] : [String(fence.epoch)])];
      let reply: unknown;
      let acknowledged: number | undefined;
      let ack;
      try {
        ack = await this.replicaAcks?.required();
        // The indexes go out beside the script (one round trip): an index entry is harmless before its hash exists.
        [{ reply, acknowledged }] = await Promise.all([
          runAckedRedisScript(this.redis, SAVE_SCRIPT, keys, args, ack),
          indexSession(this.redis, this.keyPrefix, session, this.listedTenants),
        ]);
      } catch (error) {
        throw redisFailure(`failed to save generation ${generation} of session ${sessionId}`, { sessionId }, error);
      }
      const [outcome, found] = readReply(reply);
      if (outcome === 'ok') {
        assertReplicated(acknowledged, ack, `generation ${generation} of session ${sessionId}`, {
          sessionId,
          generation,
        });
        if (this.closedTtlMs !== undefined) await this.expireClosed(session, parsed.session.closed === true);
        return typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.length;
      }
      if (outcome === 'stale_generation') {
        throw new CodeError(
          'PERSISTENCE_FAILED',
          `refused to save generation ${generation} of session ${sessionId}: the store already holds generation ${found}, written by another writer (stale_generation)`,
          { sessionId, reason: 'stale_generation', generation, storedGeneration: Number(found) },
        );
      }
      throw fencedError('save', sessionId, fence, found, { generation });
    });
  }

  /** Read and validate the session's latest generation; undefined when no hash exists for it. */
  async load(session: SessionKey): Promise<SessionSnapshotV1 | undefined> {
    this.assertOpen();
    await this.migrate();
    const found = await this.read(session);
    if (found !== undefined) return found;
    // Written by an earlier version after the sweep (or never listed in its set): moved now.
    const sessionId = sessionIdOf(session);
    const legacy = await this.legacy?.read(sessionId);
    if (legacy === undefined || legacy.snapshot.session.ownerTenantId !== tenantIdOf(session)) return undefined;
    await this.legacy?.adopt(sessionId, legacy);
    return this.read(session);
  }

  /** Remove the session's hash and index entry after any queued save; fenced like save; no error when absent. */
  async delete(session: SessionKey): Promise<void> {
    this.assertOpen();
    await this.migrate();
    const sessionId = sessionIdOf(session);
    await this.lock.run(session, async () => {
      const fence = this.fence?.(session);
      const keys = [this.sessionKey(session), ...(fence === undefined ? [] : [fence.ownerKey])];
      const args = fence === undefined ? [] : [String(fence.epoch)];
      let reply: unknown;
      try {
        reply = await runRedisScript(this.redis, DELETE_SCRIPT, keys, args);
      } catch (error) {
        throw redisFailure(`failed to delete the snapshot of session ${sessionId}`, { sessionId }, error);
      }
      const [outcome, found] = readReply(reply);
      if (outcome !== 'ok') throw fencedError('delete', sessionId, fence, found, {});
      await this.redis
        .srem(redisTenantSessionsKeyOf(this.keyPrefix, session), session.slice(tenantPartOf(session).length + 1))
        .catch((error: unknown) => {
          throw redisFailure(`failed to unlist session ${sessionId}`, { sessionId }, error);
        });
    });
  }

  /** Keys of the stored sessions of one tenant (or of every tenant in `<prefix>tenants`), sorted. */
  async list(tenantId?: string): Promise<SessionKey[]> {
    this.assertOpen();
    await this.migrate();
    try {
      const tenants =
        tenantId === undefined ? await this.redis.smembers(redisTenantsKey(this.keyPrefix)) : [encodeKeyPart(tenantId)];
      const keys: SessionKey[] = [];
      for (const tenant of tenants) {
        for (const member of await this.redis.smembers(redisTenantSessionsKey(this.keyPrefix, tenant))) {
          const key = parseSessionKey(`${tenant}/${member}`);
          if (key !== undefined) keys.push(key);
        }
      }
      return keys.sort();
    } catch (error) {
      throw redisFailure('failed to list the redis session store', {}, error);
    }
  }

  /** True when Redis answers PING within pingTimeoutMs. */
  async ping(): Promise<boolean> {
    if (this.closed) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.pingTimeoutMs);
    });
    try {
      const answer = this.redis.ping().then(
        (reply) => reply === 'PONG',
        () => false,
      );
      return await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Wait for queued saves and deletes, then refuse further use; the caller's client stays open (it owns it). */
  async close(): Promise<void> {
    this.closed = true;
    await this.lock.drain();
  }

  private assertOpen(): void {
    if (this.closed) throw new CodeError('PERSISTENCE_FAILED', 'the redis session store is closed');
  }

  private async read(session: SessionKey): Promise<SessionSnapshotV1 | undefined> {
    const sessionId = sessionIdOf(session);
    const key = this.sessionKey(session);
    const stored = await readSnapshotHash(this.redis, key, sessionId);
    if (stored === undefined) return undefined;
    const { snapshot } = stored;
    if (snapshot.session.id !== sessionId || snapshot.session.ownerTenantId !== tenantIdOf(session)) {
      throw new CodeError(
        'SNAPSHOT_INVALID',
        `redis key ${key} holds session ${JSON.stringify(snapshot.session.id)} of tenant ${JSON.stringify(snapshot.session.ownerTenantId)}, not ${JSON.stringify(sessionId)}`,
        {
          sessionId,
          source: `redis key ${key}`,
        },
      );
    }
    return snapshot;
  }
}

function readReply(reply: unknown): [string, string] {
  if (Array.isArray(reply) && typeof reply[0] === 'string') {
    return [reply[0], typeof reply[1] === 'string' ? reply[1] : ''];
  }
  throw new CodeError('PERSISTENCE_FAILED', 'the redis session store script answered unexpectedly');
}

function fencedError(
  operation: 'save' | 'delete',
  sessionId: string,
  fence: SessionFence | undefined,
  currentEpoch: string,
  extra: Record<string, unknown>,
): CodeError {
  const what = operation === 'save' ? `save generation ${String(extra.generation)} of` : 'delete';
  const holds = currentEpoch === '' ? 'no lease holds the session' : `the lease is now at epoch ${currentEpoch}`;
  return new CodeError(
    'PERSISTENCE_FAILED',
    `refused to ${what} session ${sessionId}: this node's ownership epoch ${String(fence?.epoch)} is no longer current, ${holds} (fenced)`,
    {
      sessionId,
      reason: 'fenced',
      epoch: fence?.epoch,
      currentEpoch: currentEpoch === '' ? null : currentEpoch,
      ...extra,
    },
  );
}
