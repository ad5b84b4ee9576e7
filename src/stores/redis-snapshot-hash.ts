import type { RedisClient } from './redis-client.js';
import { CodeError } from '../errors.js';
import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { parseSnapshot } from './parse-snapshot.js';
import { redisFailure } from './redis-failure.js';
import { redisTenantSessionsKey, redisTenantsKey } from './redis-keys.js';
import { decodeRedisValue } from './redis-value-codec.js';
import { tenantPartOf, type SessionKey } from './session-key.js';

/** A stored snapshot hash: the validated snapshot and its raw `enc` and `data` fields. */
export interface StoredSnapshotHash {
  snapshot: SessionSnapshotV1;
  enc: string;
  data: Buffer;
}

/** The validated snapshot in hash `key` (fields gen, enc, data) and its raw fields; undefined when the hash does not exist. */
export async function readSnapshotHash(
  redis: RedisClient,
  key: string,
  sessionId: string,
): Promise<StoredSnapshotHash | undefined> {
  let fields: Array<Buffer | null>;
  try {
    fields = await redis.hmgetBuffer(key, 'gen', 'enc', 'data');
  } catch (error) {
    throw redisFailure(`failed to read the snapshot of session ${sessionId}`, { sessionId }, error);
  }
  const [gen, enc, data] = fields;
  if (gen === null && enc === null && data === null) return undefined;
  const source = `redis key ${key}`;
  if (data === null || data === undefined) {
    throw new CodeError('SNAPSHOT_INVALID', `${source} has no data field`, { sessionId, source });
  }
  const encoding = enc?.toString('utf8');
  const snapshot = parseSnapshot(await decodeRedisValue(encoding, data, source, { sessionId }), source);
  // The save script fences on `gen`; a mismatch would let a stale writer slip past the generation check.
  const storedGeneration = gen?.toString('utf8');
  if (storedGeneration !== String(snapshot.generation)) {
    throw new CodeError(
      'SNAPSHOT_INVALID',
      `${source} holds generation ${snapshot.generation} but its gen field is ${JSON.stringify(storedGeneration ?? null)}`,
      { sessionId, source },
    );
  }
  return { snapshot, enc: encoding ?? 'json', data };
}

/**
 * List the session in its tenant's index set, and the tenant in `<prefix>tenants` (the one key of the
 * deployment every node writes) when that added the session or this store has not listed the tenant yet
 * (`listed`, filled on success): not on every save. On a cluster the two keys live in other slots than the
 * session's, and each other's, so they cannot share a pipeline or script.
 */
export async function indexSession(
  redis: RedisClient,
  keyPrefix: string,
  session: SessionKey,
  listed: Set<string>,
): Promise<void> {
  const tenant = tenantPartOf(session);
  const added = await redis.sadd(redisTenantSessionsKey(keyPrefix, tenant), session.slice(tenant.length + 1));
  if (added === 0 && listed.has(tenant)) return;
  await redis.sadd(redisTenantsKey(keyPrefix), tenant);
  listed.add(tenant);
}
