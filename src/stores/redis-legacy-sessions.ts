import type { RedisClient } from './redis-client.js';
import { CodeError } from '../errors.js';
import { redisFailure } from './redis-failure.js';
import { LEGACY_REDIS_KEYS, redisSessionKey } from './redis-keys.js';
import { defineRedisScript, runRedisScript } from './redis-script.js';
import { indexSession, readSnapshotHash, type StoredSnapshotHash } from './redis-snapshot-hash.js';
import { sessionKeyOf } from './session-key.js';

// Migration: copy an old-layout generation unless the new key already holds it or a newer one.
// KEYS: snapshot hash. ARGV: generation, encoding, data.
const ADOPT_SCRIPT = defineRedisScript(`
local stored = redis.call('HGET', KEYS[1], 'gen')
if stored and tonumber(stored) and tonumber(stored) >= tonumber(ARGV[1]) then return {'kept'} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'gen', ARGV[1], 'enc', ARGV[2], 'data', ARGV[3])
return {'ok'}
`);

/** What the migration of the old key layout did. */
export interface RedisStoreMigration {
  /** Old `<prefix>session:<id>` hashes moved to `<prefix>{<tenant>/<id>}:snapshot`. */
  moved: number;
  /** Old ids left in place because their data is not a valid snapshot. */
  skipped: string[];
}

/**
 * The Redis layout before session ids were per tenant (`<prefix>session:<id>`, the global set
 * `<prefix>sessions`, `<prefix>events:<id>`, `<prefix>epoch:<id>`): read for migration only, never written.
 * Each old session moves to its tenant's keys (the snapshot names its tenant).
 */
export class RedisLegacySessions {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  /** The old-layout snapshot of `sessionId`, or undefined (SNAPSHOT_INVALID when it holds another session). */
  async read(sessionId: string): Promise<StoredSnapshotHash | undefined> {
    const stored = await readSnapshotHash(this.redis, LEGACY_REDIS_KEYS.snapshot(this.keyPrefix, sessionId), sessionId);
    if (stored !== undefined && stored.snapshot.session.id !== sessionId) {
      throw new CodeError(
        'SNAPSHOT_INVALID',
        `redis key ${LEGACY_REDIS_KEYS.snapshot(this.keyPrefix, sessionId)} holds session ${JSON.stringify(stored.snapshot.session.id)}`,
        { sessionId },
      );
    }
    return stored;
  }

  /** Move every session the old set lists; unreadable old hashes are skipped and left in place. */
  async sweep(): Promise<RedisStoreMigration> {
    const result: RedisStoreMigration = { moved: 0, skipped: [] };
    let ids: string[];
    try {
      ids = await this.redis.smembers(LEGACY_REDIS_KEYS.index(this.keyPrefix));
    } catch (error) {
      throw redisFailure('failed to read the old session index', {}, error);
    }
    for (const sessionId of ids.sort()) {
      let legacy;
      try {
        legacy = await this.read(sessionId);
      } catch (error) {
        if (!(error instanceof CodeError) || error.code !== 'SNAPSHOT_INVALID') throw error;
        // Not ours to judge: an unreadable old hash stays where it is (and in the old set), ignored.
        result.skipped.push(sessionId);
        continue;
      }
      if (legacy === undefined) await this.redis.srem(LEGACY_REDIS_KEYS.index(this.keyPrefix), sessionId);
      else {
        await this.adopt(sessionId, legacy);
        result.moved += 1;
      }
    }
    return result;
  }

  /**
   * Move one old-layout session to its tenant's keys, each step idempotent (a crash part-way is finished by
   * the next run): the snapshot (unless the new key holds the same or a newer generation), the indexes, the
   * event stream (unless the new one exists) and the lease epoch (so fencing never goes back); then the old
   * hash and its index entry go. The old lease key is left to expire.
   */
  async adopt(sessionId: string, legacy: StoredSnapshotHash): Promise<void> {
    const session = sessionKeyOf(legacy.snapshot);
    const prefix = this.keyPrefix;
    try {
      await runRedisScript(
        this.redis,
        ADOPT_SCRIPT,
        [redisSessionKey(prefix, session, 'snapshot')],
        [String(legacy.snapshot.generation), legacy.enc, legacy.data],
      );
      await indexSession(this.redis, prefix, session, new Set());
      // Old streams and epochs exist only on a single Redis (the old layout never ran on a cluster), so these
      // two-key commands never cross slots there.
      if ((await this.redis.exists(LEGACY_REDIS_KEYS.events(prefix, sessionId))) === 1) {
        await this.redis.renamenx(
          LEGACY_REDIS_KEYS.events(prefix, sessionId),
          redisSessionKey(prefix, session, 'events'),
        );
      }
      const epoch = await this.redis.get(LEGACY_REDIS_KEYS.epoch(prefix, sessionId));
      if (epoch !== null) await this.redis.set(redisSessionKey(prefix, session, 'epoch'), epoch, 'NX');
      await this.redis.del(LEGACY_REDIS_KEYS.snapshot(prefix, sessionId));
      await this.redis.srem(LEGACY_REDIS_KEYS.index(prefix), sessionId);
    } catch (error) {
      throw redisFailure(`failed to move session ${sessionId} to its tenant's keys`, { sessionId }, error);
    }
  }
}
