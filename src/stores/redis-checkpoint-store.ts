import type { RedisClient } from './redis-client.js';
import { CodeError } from '../errors.js';
import type { LoopCheckpoint } from '../protocol/loop-checkpoint.js';
import type { CheckpointStore } from './checkpoint-store.js';
import { parseCheckpoint } from './parse-checkpoint.js';
import { redisFailure } from './redis-failure.js';
import { defineRedisScript, runAckedRedisScript, runRedisScript } from './redis-script.js';
import { assertReplicated, type ReplicaAcks } from './replica-acks.js';
import { LEGACY_REDIS_KEYS, redisCheckpointKey } from './redis-keys.js';
import { DEFAULT_REDIS_KEY_PREFIX, type SessionFence } from './redis-session-store.js';
import { decodeRedisValue, DEFAULT_COMPRESS_ABOVE_BYTES, encodeRedisValue } from './redis-value-codec.js';
import { sessionIdOf, type SessionKey } from './session-key.js';

/** How long a checkpoint outlives its last save by default: 7 days, so a crashed run's state is not kept forever. */
export const DEFAULT_CHECKPOINT_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Options for RedisCheckpointStore. */
export interface RedisCheckpointStoreOptions {
  /** Connected ioredis client; the caller owns it (creates, shares and quits it). */
  redis: RedisClient;
  /** Prefix of every key this store writes (default "a3s:"). */
  keyPrefix?: string;
  /** Expiry of each checkpoint after its last save, in seconds (default 7 days; 0 keeps it until deleted). */
  ttlSeconds?: number;
  /** Checkpoints whose JSON is larger than this many bytes are stored gzip-compressed (default 64 KiB). */
  compressAboveBytes?: number;
  /** The lease of the checkpoint's session that fences saves, or undefined to save unfenced (single node, tests). */
  fence?: (session: SessionKey) => SessionFence | undefined;
  /** Replicas a save must be acknowledged by (WAIT) before it counts; none when absent. */
  replicaAcks?: ReplicaAcks;
}

// Replaces the whole hash and its expiry in one step, unless the session's lease epoch (KEYS[2], when given,
// under the same hash tag) no longer holds this writer's epoch. KEYS: checkpoint hash, [epoch key]. ARGV: encoding, data, ttl, [epoch].
const SAVE_SCRIPT = defineRedisScript(`
if KEYS[2] then
  local current = redis.call('GET', KEYS[2])
  if current ~= ARGV[4] then return {'fenced', current or ''} end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'enc', ARGV[1], 'data', ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return {'ok', ''}
`);

// Migration of an old-layout checkpoint: copied unless the new key exists. KEYS: checkpoint hash. ARGV: encoding, data, ttl.
const ADOPT_SCRIPT = defineRedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'enc', ARGV[1], 'data', ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return 1
`);

/**
 * CheckpointStore on Redis, shared by every node: one hash `<prefix>{<tenant>/<session id>}:checkpoint:<runId>` per run
 * (its session's hash tag) with
 * fields `enc` ("json" | "gzip") and `data`, replaced atomically and expiring after ttlSeconds. With a
 * fence, a save is refused once the checkpoint's session is owned under another lease epoch, so a node
 * that lost a session cannot overwrite the state its new owner resumes from. A checkpoint of the old layout
 * (`<prefix>checkpoint:<runId>`) is moved on its first load by the session it names. close() leaves the client open.
 */
export class RedisCheckpointStore implements CheckpointStore {
  readonly kind = 'redis';
  readonly shared = true;
  /** Prefix of every key this store writes. */
  readonly keyPrefix: string;
  private readonly redis: RedisClient;
  private readonly ttlSeconds: number;
  private readonly compressAboveBytes: number;
  private readonly fence: ((session: SessionKey) => SessionFence | undefined) | undefined;
  private readonly replicaAcks: ReplicaAcks | undefined;
  private closed = false;

  constructor(options: RedisCheckpointStoreOptions) {
    this.redis = options.redis;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_CHECKPOINT_TTL_SECONDS;
    this.compressAboveBytes = options.compressAboveBytes ?? DEFAULT_COMPRESS_ABOVE_BYTES;
    this.fence = options.fence;
    this.replicaAcks = options.replicaAcks;
    if (!Number.isSafeInteger(this.ttlSeconds) || this.ttlSeconds < 0) {
      throw new RangeError(`checkpoint ttlSeconds must be a non-negative integer, got ${this.ttlSeconds}`);
    }
  }

  /** The hash holding a run's checkpoint. */
  checkpointKey(session: SessionKey, runId: string): string {
    return redisCheckpointKey(this.keyPrefix, session, runId);
  }

  /**
   * Validate the checkpoint and atomically replace the run's hash (and its expiry); with a fence, refused
   * with PERSISTENCE_FAILED (details.reason "fenced") when the session's lease epoch is no longer this node's.
   */
  async save(session: SessionKey, checkpoint: LoopCheckpoint): Promise<void> {
    this.assertOpen();
    const parsed = parseCheckpoint(checkpoint, 'the checkpoint being saved');
    const runId = parsed.run_id;
    const sessionId = parsed.session_id;
    const { encoding, data } = await encodeRedisValue(JSON.stringify(parsed), this.compressAboveBytes);
    // Read the fence as late as possible: the epoch current when the write is sent is the one checked.
    const fence = this.fence?.(session);
    const keys = [this.checkpointKey(session, runId), ...(fence === undefined ? [] : [fence.ownerKey])];
    const args = [encoding, data, String(this.ttlSeconds), ...(fence === undefined ? [] : [String(fence.epoch)])];
    let reply: unknown;
    let acknowledged: number | undefined;
    let ack;
    try {
      ack = await this.replicaAcks?.required();
      ({ reply, acknowledged } = await runAckedRedisScript(this.redis, SAVE_SCRIPT, keys, args, ack));
    } catch (error) {
      throw redisFailure(`failed to save the checkpoint of run ${runId}`, { runId, sessionId }, error);
    }
    if (!Array.isArray(reply) || (reply[0] !== 'ok' && reply[0] !== 'fenced')) {
      throw new CodeError('PERSISTENCE_FAILED', 'the redis checkpoint store script answered unexpectedly', {
        runId,
        sessionId,
      });
    }
    if (reply[0] === 'ok') {
      assertReplicated(acknowledged, ack, `the checkpoint of run ${runId}`, { runId, sessionId });
      return;
    }
    const current = typeof reply[1] === 'string' ? reply[1] : '';
    const holds = current === '' ? 'no lease holds the session' : `the lease is now at epoch ${current}`;
    throw new CodeError(
      'PERSISTENCE_FAILED',
      `refused to save the checkpoint of run ${runId}: this node's ownership epoch ${String(fence?.epoch)} of session ${sessionId} is no longer current, ${holds} (fenced)`,
      { runId, sessionId, reason: 'fenced', epoch: fence?.epoch, currentEpoch: current === '' ? null : current },
    );
  }

  /** Read and validate the run's checkpoint (moving an old-layout one into place); undefined when none exists (or it expired). */
  async load(session: SessionKey, runId: string): Promise<LoopCheckpoint | undefined> {
    this.assertOpen();
    const found = await this.read(this.checkpointKey(session, runId), runId);
    if (found !== undefined) return found.checkpoint.session_id === sessionIdOf(session) ? found.checkpoint : undefined;
    const legacyKey = LEGACY_REDIS_KEYS.checkpoint(this.keyPrefix, runId);
    const old = await this.read(legacyKey, runId);
    if (old === undefined || old.checkpoint.session_id !== sessionIdOf(session)) return undefined;
    try {
      await runRedisScript(
        this.redis,
        ADOPT_SCRIPT,
        [this.checkpointKey(session, runId)],
        [old.enc, old.data, String(this.ttlSeconds)],
      );
      await this.redis.del(legacyKey);
    } catch (error) {
      throw redisFailure(`failed to move the checkpoint of run ${runId} to its session's keys`, { runId }, error);
    }
    return old.checkpoint;
  }

  private async read(
    key: string,
    runId: string,
  ): Promise<{ checkpoint: LoopCheckpoint; enc: string; data: Buffer } | undefined> {
    let fields: Array<Buffer | null>;
    try {
      fields = await this.redis.hmgetBuffer(key, 'enc', 'data');
    } catch (error) {
      throw redisFailure(`failed to read the checkpoint of run ${runId}`, { runId }, error);
    }
    const [enc, data] = fields;
    if ((enc === null || enc === undefined) && (data === null || data === undefined)) return undefined;
    const source = `redis key ${key}`;
    if (data === null || data === undefined)
      throw new CodeError('SNAPSHOT_INVALID', `${source} has no data field`, { runId, source });
    const checkpoint = parseCheckpoint(await decodeRedisValue(enc?.toString('utf8'), data, source, { runId }), source);
    if (checkpoint.run_id !== runId) {
      throw new CodeError(
        'SNAPSHOT_INVALID',
        `${source} holds run ${JSON.stringify(checkpoint.run_id)}, not ${JSON.stringify(runId)}`,
        {
          runId,
          source,
        },
      );
    }
    return { checkpoint, enc: enc?.toString('utf8') ?? 'json', data };
  }

  /** Remove the run's checkpoint; no error when absent. */
  async delete(session: SessionKey, runId: string): Promise<void> {
    this.assertOpen();
    try {
      await this.redis.del(this.checkpointKey(session, runId));
    } catch (error) {
      throw redisFailure(`failed to delete the checkpoint of run ${runId}`, { runId }, error);
    }
  }

  /** Refuse further use; the caller's client stays open (it owns it). */
  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new CodeError('PERSISTENCE_FAILED', 'the redis checkpoint store is closed');
  }
}
