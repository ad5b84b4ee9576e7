import type { RedisClient } from '../stores/redis-client.js';
import { CodeError } from '../errors.js';
import { redisFailure } from '../stores/redis-failure.js';
import { defineRedisScript, runAckedRedisScript, runRedisScript } from '../stores/redis-script.js';
import { assertReplicated, type ReplicaAcks } from '../stores/replica-acks.js';
import { redisSessionKey } from '../stores/redis-keys.js';
import { DEFAULT_REDIS_KEY_PREFIX, type SessionFence } from '../stores/redis-session-store.js';
import type { SessionKey } from '../stores/session-key.js';
import { nodeKey } from './node-identity.js';

/** Default lifetime of a session lease without renewal (ms); renewed every ttl/3. */
export const DEFAULT_LEASE_TTL_MS = 15_000;

/** Outcome of SessionLeases.acquire: this node's epoch, or who holds the session and whether it heartbeats. */
export type LeaseAcquisition = { ok: true; epoch: number } | { ok: false; owner: string; alive: boolean };

/** A lease this node holds. */
export interface HeldLease {
  sessionId: SessionKey;
  epoch: number;
}

/** Options for SessionLeases. */
export interface SessionLeasesOptions {
  /** Connected ioredis client; the caller owns it. */
  redis: RedisClient;
  /** Prefix of every key (default "a3s:"); must be the RedisSessionStore's and NodeRegistry's prefix. */
  keyPrefix?: string;
  /** This node's id (the lease value). */
  nodeId: string;
  /** Lease lifetime without renewal (default 15000 ms). */
  ttlMs?: number;
  /** How often every held lease is renewed (default ttlMs / 3). */
  renewIntervalMs?: number;
  /** Clock used to notice a lease that could not be renewed for a whole TTL (default Date.now). */
  now?: () => number;
  /** Called once when a held lease is found gone or taken, or could not be renewed within its TTL. */
  onLost?: (sessionId: SessionKey, epoch: number) => void;
  /** Told about a renewal that failed on the wire (Redis unreachable); the next round retries. */
  onError?: (error: unknown) => void;
  /** Replicas a lease takeover must be acknowledged by (WAIT), so a failover cannot roll its epoch back. */
  replicaAcks?: ReplicaAcks;
}

// KEYS: lease, epoch. ARGV: node id, ttl ms. A fresh or expired lease bumps the epoch; our own live
// lease keeps its epoch (re-acquiring is idempotent). The epoch key never expires, so it never goes back.
const ACQUIRE_SCRIPT = defineRedisScript(`
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then return {'taken', owner} end
local epoch = redis.call('GET', KEYS[2])
if (not owner) or (not epoch) then epoch = redis.call('INCR', KEYS[2]) end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {'ok', tostring(epoch)}
`);

// KEYS: lease, epoch. ARGV: node id, epoch, ttl ms.
const RENEW_SCRIPT = defineRedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('GET', KEYS[2]) == ARGV[2] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
return 0
`);

// KEYS: lease, epoch. ARGV: node id, epoch.
const RELEASE_SCRIPT = defineRedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('GET', KEYS[2]) == ARGV[2] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`);

interface Held {
  epoch: number;
  /** Clock reading when the lease was last acquired or renewed. */
  renewedAtMs: number;
}

/**
 * Session ownership leases on Redis, keyed by SessionKey: `<prefix>{<tenant>/<sid>}:lease` holds the owner's
 * node id with a PX TTL, and `<prefix>{<tenant>/<sid>}:epoch` (same hash tag, so each script stays in one slot) a counter bumped on every acquisition that was not a renewal of our own
 * live lease (never decremented, never expiring) — the fencing token RedisSessionStore checks. One
 * unref'd timer renews every held lease; stop() clears it.
 */
export class SessionLeases {
  /** This node's id. */
  readonly nodeId: string;
  /** Lease lifetime without renewal (ms). */
  readonly ttlMs: number;
  private readonly redis: RedisClient;
  private readonly keyPrefix: string;
  private readonly renewIntervalMs: number;
  private readonly now: () => number;
  private readonly onLost: (sessionId: SessionKey, epoch: number) => void;
  private readonly onError: (error: unknown) => void;
  private readonly replicaAcks: ReplicaAcks | undefined;
  private readonly leases = new Map<SessionKey, Held>();
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  private stopped = false;

  constructor(options: SessionLeasesOptions) {
    this.redis = options.redis;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.nodeId = options.nodeId;
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    if (!Number.isInteger(this.ttlMs) || this.ttlMs < 3)
      throw new RangeError(`lease ttlMs must be an integer >= 3, got ${this.ttlMs}`);
    this.renewIntervalMs = options.renewIntervalMs ?? Math.floor(this.ttlMs / 3);
    this.now = options.now ?? Date.now;
    this.onLost = options.onLost ?? (() => undefined);
    this.onError = options.onError ?? (() => undefined);
    this.replicaAcks = options.replicaAcks;
  }

  /** The key holding the owner's node id. */
  leaseKey(sessionId: SessionKey): string {
    return redisSessionKey(this.keyPrefix, sessionId, 'lease');
  }

  /** The key holding the session's current epoch (decimal string), the fence's ownerKey. */
  epochKey(sessionId: SessionKey): string {
    return redisSessionKey(this.keyPrefix, sessionId, 'epoch');
  }

  /**
   * Atomically take the session when its lease is free (absent or expired; the epoch increments) or
   * already ours (same epoch, TTL refreshed); otherwise report the owner and whether it still heartbeats.
   */
  async acquire(sessionId: SessionKey): Promise<LeaseAcquisition> {
    let reply: unknown;
    let acknowledged: number | undefined;
    let ack;
    try {
      ack = await this.replicaAcks?.required();
      ({ reply, acknowledged } = await runAckedRedisScript(
        this.redis,
        ACQUIRE_SCRIPT,
        [this.leaseKey(sessionId), this.epochKey(sessionId)],
        [this.nodeId, this.ttlMs],
        ack,
      ));
    } catch (error) {
      throw redisFailure(`failed to acquire the lease of session ${sessionId}`, { sessionId }, error);
    }
    const [outcome, value] = readPair(reply);
    // An epoch only a failed master knew could come back lower after a failover: such a lease does not count.
    if (outcome !== 'taken') assertReplicated(acknowledged, ack, `the lease of session ${sessionId}`, { sessionId });
    if (outcome === 'taken') {
      // We believed we held it: the lease was taken behind our back, which renewals would report too.
      const stale = this.leases.get(sessionId);
      if (stale !== undefined) {
        this.leases.delete(sessionId);
        this.reportLost(sessionId, stale.epoch);
      }
      let alive: boolean;
      try {
        alive = (await this.redis.exists(nodeKey(this.keyPrefix, value))) === 1;
      } catch (error) {
        throw redisFailure(`failed to check whether node ${value} is alive`, { sessionId, owner: value }, error);
      }
      return { ok: false, owner: value, alive };
    }
    const epoch = Number(value);
    this.leases.set(sessionId, { epoch, renewedAtMs: this.now() });
    this.ensureTimer();
    return { ok: true, epoch };
  }

  /** Refresh the lease's TTL if this node still owns it at `epoch`; false (and the lease is forgotten) otherwise. */
  async renew(sessionId: SessionKey, epoch: number): Promise<boolean> {
    const renewedAtMs = this.now();
    let reply: unknown;
    try {
      reply = await runRedisScript(
        this.redis,
        RENEW_SCRIPT,
        [this.leaseKey(sessionId), this.epochKey(sessionId)],
        [this.nodeId, epoch, this.ttlMs],
      );
    } catch (error) {
      throw redisFailure(`failed to renew the lease of session ${sessionId}`, { sessionId, epoch }, error);
    }
    const held = this.leases.get(sessionId);
    if (reply === 1) {
      if (held?.epoch === epoch) held.renewedAtMs = Math.max(held.renewedAtMs, renewedAtMs);
      return true;
    }
    // The lease is gone. If nobody took over since (the epoch is still ours, or Redis lost its data and the
    // epoch key is gone too), no other node can have written: take the lease again under a new epoch.
    const current = await this.redis.get(this.epochKey(sessionId)).catch(() => undefined);
    if (current !== undefined && (current === null || Number(current) === epoch) && held?.epoch === epoch) {
      const again = await this.acquire(sessionId).catch(() => undefined);
      if (again?.ok) return true;
    }
    if (this.leases.get(sessionId)?.epoch === epoch) this.leases.delete(sessionId);
    return false;
  }

  /** Give the session up if this node still owns it at `epoch` (true when it did); it is forgotten either way. */
  async release(sessionId: SessionKey, epoch: number): Promise<boolean> {
    if (this.leases.get(sessionId)?.epoch === epoch) this.leases.delete(sessionId);
    try {
      return (
        (await runRedisScript(
          this.redis,
          RELEASE_SCRIPT,
          [this.leaseKey(sessionId), this.epochKey(sessionId)],
          [this.nodeId, epoch],
        )) === 1
      );
    } catch (error) {
      throw redisFailure(`failed to release the lease of session ${sessionId}`, { sessionId, epoch }, error);
    }
  }

  /** Release every held lease (graceful drain); returns the sessions that were still ours. */
  async releaseAll(): Promise<SessionKey[]> {
    const released = await Promise.all(
      this.held().map(async ({ sessionId, epoch }) => ((await this.release(sessionId, epoch)) ? sessionId : undefined)),
    );
    return released.filter((sessionId): sessionId is SessionKey => sessionId !== undefined);
  }

  /** The session's current owner and epoch as Redis holds them (one MGET), or undefined when no lease is live. */
  async owner(sessionId: SessionKey): Promise<{ nodeId: string; epoch: number } | undefined> {
    let values: Array<string | null>;
    try {
      values = await this.redis.mget(this.leaseKey(sessionId), this.epochKey(sessionId));
    } catch (error) {
      throw redisFailure(`failed to read the lease of session ${sessionId}`, { sessionId }, error);
    }
    const [nodeId, epoch] = values;
    if (nodeId === null || nodeId === undefined) return undefined;
    return { nodeId, epoch: Number(epoch ?? 0) };
  }

  /** The fence of a lease this node holds ({ownerKey: epoch key, epoch}), or undefined when it holds none. */
  fenceFor(sessionId: SessionKey): SessionFence | undefined {
    const held = this.leases.get(sessionId);
    return held === undefined ? undefined : { ownerKey: this.epochKey(sessionId), epoch: held.epoch };
  }

  /**
   * The fence to give RedisSessionStore's `fence` option: fenceFor(sessionId) for a held lease, and for
   * any other session a fence at epoch 0 (never issued), so a node that lost or never took the lease
   * can never write unfenced.
   */
  storeFence(sessionId: SessionKey): SessionFence {
    return this.fenceFor(sessionId) ?? { ownerKey: this.epochKey(sessionId), epoch: 0 };
  }

  /** Leases this node holds, sorted by session id. */
  held(): HeldLease[] {
    return [...this.leases]
      .map(([sessionId, { epoch }]) => ({ sessionId, epoch }))
      .sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  }

  /**
   * Renew every held lease now (the timer calls this every renewIntervalMs); a lease found gone or taken,
   * or not renewed for a whole TTL because Redis failed, is forgotten and reported through onLost.
   */
  async renewAll(): Promise<void> {
    if (this.renewing !== undefined) return this.renewing;
    this.renewing = this.renewRound().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  /** Stop renewing for good (held leases stay in memory but expire in Redis after their TTL); releaseAll() first to drain. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
  }

  private async renewRound(): Promise<void> {
    await Promise.all(
      this.held().map(async ({ sessionId, epoch }) => {
        let renewed: boolean;
        try {
          renewed = await this.renew(sessionId, epoch);
        } catch (error) {
          this.onError(error);
          const held = this.leases.get(sessionId);
          // Others may take the session once the TTL has passed since the last renewal we know landed.
          if (held?.epoch !== epoch || this.now() - held.renewedAtMs < this.ttlMs) return;
          this.leases.delete(sessionId);
          renewed = false;
        }
        if (!renewed) this.reportLost(sessionId, epoch);
      }),
    );
    if (this.leases.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private reportLost(sessionId: SessionKey, epoch: number): void {
    try {
      this.onLost(sessionId, epoch);
    } catch (error) {
      this.onError(error);
    }
  }

  private ensureTimer(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => {
      void this.renewAll();
    }, this.renewIntervalMs);
    this.timer.unref();
  }
}

function readPair(reply: unknown): [string, string] {
  if (Array.isArray(reply) && typeof reply[0] === 'string' && typeof reply[1] === 'string') return [reply[0], reply[1]];
  throw new CodeError('PERSISTENCE_FAILED', 'the session lease script answered unexpectedly');
}
