import type { Redis } from 'ioredis';
import { CodeError } from '../errors.js';
import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { KeyedLock } from './keyed-lock.js';
import { parseSnapshot } from './parse-snapshot.js';
import { redisFailure } from './redis-failure.js';
import { defineRedisScript, runRedisScript } from './redis-script.js';
import { decodeRedisValue, DEFAULT_COMPRESS_ABOVE_BYTES, encodeRedisValue } from './redis-value-codec.js';
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
  /** Connected ioredis client; the caller owns it (creates, shares and quits it). */
  redis: Redis;
  /** Prefix of every key this store writes (default "a3s:"). */
  keyPrefix?: string;
  /** Snapshots whose JSON is larger than this many bytes are stored gzip-compressed (default 64 KiB). */
  compressAboveBytes?: number;
  /** The lease that fences writes to a session, or undefined to write unfenced (single node, tests). */
  fence?: (sessionId: string) => SessionFence | undefined;
  /** How long ping() waits for PONG before reporting the backend unreachable (default 2000 ms). */
  pingTimeoutMs?: number;
}

/** Why a Redis save or delete was refused (details.reason of the PERSISTENCE_FAILED error). */
export type RedisRefusal = 'fenced' | 'stale_generation';

// Every write fences on the owner's lease epoch (when KEYS[3] is given) and on the generation, then
// replaces the whole hash: a reader's HMGET sees either the old generation or the new one, never a mix.
// KEYS: session hash, index set, [lease key]. ARGV: generation, encoding, data, session id, [epoch].
const SAVE_SCRIPT = defineRedisScript(`
if KEYS[3] then
  local current = redis.call('GET', KEYS[3])
  if current ~= ARGV[5] then return {'fenced', current or ''} end
end
local stored = redis.call('HGET', KEYS[1], 'gen')
if stored and tonumber(stored) and tonumber(stored) >= tonumber(ARGV[1]) then return {'stale_generation', stored} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'gen', ARGV[1], 'enc', ARGV[2], 'data', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
return {'ok'}
`);

// KEYS: session hash, index set, [lease key]. ARGV: session id, [epoch].
const DELETE_SCRIPT = defineRedisScript(`
if KEYS[3] then
  local current = redis.call('GET', KEYS[3])
  if current ~= ARGV[2] then return {'fenced', current or ''} end
end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return {'ok'}
`);

/**
 * SessionStore on Redis: one hash `<prefix>session:<id>` per session with fields `gen` (generation),
 * `enc` ("json" | "gzip") and `data` (the whole SessionSnapshotV1), replaced atomically by a Lua
 * script that refuses stale generations and, when a fence is configured, writers whose lease epoch is
 * no longer current; `<prefix>sessions` is the set of stored ids. close() leaves the client open.
 */
export class RedisSessionStore implements SessionStore {
  readonly kind = 'redis';
  /** Prefix of every key this store writes. */
  readonly keyPrefix: string;
  /** The set holding every stored session id. */
  readonly indexKey: string;
  private readonly redis: Redis;
  private readonly compressAboveBytes: number;
  private readonly fence: ((sessionId: string) => SessionFence | undefined) | undefined;
  private readonly pingTimeoutMs: number;
  // Saves from this store apply in call order per session even though compression is asynchronous.
  private readonly lock = new KeyedLock();
  private closed = false;

  constructor(options: RedisSessionStoreOptions) {
    this.redis = options.redis;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.indexKey = `${this.keyPrefix}sessions`;
    this.compressAboveBytes = options.compressAboveBytes ?? DEFAULT_COMPRESS_ABOVE_BYTES;
    this.fence = options.fence;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 2000;
  }

  /** The hash holding a session's snapshot. */
  sessionKey(sessionId: string): string {
    return `${this.keyPrefix}session:${sessionId}`;
  }

  /**
   * Atomically replace the session's hash with this generation, after earlier saves from this store;
   * refused with PERSISTENCE_FAILED (details.reason "stale_generation" or "fenced") when the stored
   * generation is the same or newer, or when the session's lease epoch is no longer this node's.
   */
  async save(snapshot: SessionSnapshotV1): Promise<void> {
    this.assertOpen();
    // Validate and serialise at call time: later caller mutations cannot leak into this generation.
    const parsed = parseSnapshot(snapshot, 'the snapshot being saved');
    const sessionId = parsed.session.id;
    const generation = parsed.generation;
    const json = JSON.stringify(parsed);
    await this.lock.run(sessionId, async () => {
      const { encoding, data } = await encodeRedisValue(json, this.compressAboveBytes);
      // Read the fence as late as possible: the epoch current when the write is sent is the one checked.
      const fence = this.fence?.(sessionId);
      const keys = [this.sessionKey(sessionId), this.indexKey, ...(fence === undefined ? [] : [fence.ownerKey])];
      const args = [String(generation), encoding, data, sessionId, ...(fence === undefined ? [] : [String(fence.epoch)])];
      let reply: unknown;
      try {
        reply = await runRedisScript(this.redis, SAVE_SCRIPT, keys, args);
      } catch (error) {
        throw redisFailure(`failed to save generation ${generation} of session ${sessionId}`, { sessionId }, error);
      }
      const [outcome, found] = readReply(reply);
      if (outcome === 'ok') return;
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
  async load(sessionId: string): Promise<SessionSnapshotV1 | undefined> {
    this.assertOpen();
    const key = this.sessionKey(sessionId);
    let fields: Array<Buffer | null>;
    try {
      fields = await this.redis.hmgetBuffer(key, 'gen', 'enc', 'data');
    } catch (error) {
      throw redisFailure(`failed to read the snapshot of session ${sessionId}`, { sessionId }, error);
    }
    const [gen, enc, data] = fields;
    if (gen === null && enc === null && data === null) return undefined;
    const source = `redis key ${key}`;
    if (data === null || data === undefined) {
      throw new CodeError('SNAPSHOT_INVALID', `${source} has no data field`, { sessionId, source });
    }
    const raw = await decodeRedisValue(enc?.toString('utf8'), data, source, { sessionId });
    const snapshot = parseSnapshot(raw, source);
    if (snapshot.session.id !== sessionId) {
      throw new CodeError('SNAPSHOT_INVALID', `${source} holds session ${JSON.stringify(snapshot.session.id)}, not ${JSON.stringify(sessionId)}`, {
        sessionId,
        source,
      });
    }
    // The script fences on `gen`; a mismatch would let a stale writer slip past the generation check.
    const storedGeneration = gen?.toString('utf8');
    if (storedGeneration !== String(snapshot.generation)) {
      throw new CodeError(
        'SNAPSHOT_INVALID',
        `${source} holds generation ${snapshot.generation} but its gen field is ${JSON.stringify(storedGeneration ?? null)}`,
        { sessionId, source },
      );
    }
    return snapshot;
  }

  /** Remove the session's hash and index entry after any queued save; fenced like save; no error when absent. */
  async delete(sessionId: string): Promise<void> {
    this.assertOpen();
    await this.lock.run(sessionId, async () => {
      const fence = this.fence?.(sessionId);
      const keys = [this.sessionKey(sessionId), this.indexKey, ...(fence === undefined ? [] : [fence.ownerKey])];
      const args = [sessionId, ...(fence === undefined ? [] : [String(fence.epoch)])];
      let reply: unknown;
      try {
        reply = await runRedisScript(this.redis, DELETE_SCRIPT, keys, args);
      } catch (error) {
        throw redisFailure(`failed to delete the snapshot of session ${sessionId}`, { sessionId }, error);
      }
      const [outcome, found] = readReply(reply);
      if (outcome !== 'ok') throw fencedError('delete', sessionId, fence, found, {});
    });
  }

  /** Ids of every stored session, sorted. */
  async list(): Promise<string[]> {
    this.assertOpen();
    try {
      return (await this.redis.smembers(this.indexKey)).sort();
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
    { sessionId, reason: 'fenced', epoch: fence?.epoch, currentEpoch: currentEpoch === '' ? null : currentEpoch, ...extra },
  );
}
