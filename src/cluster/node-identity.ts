import type { RedisClient } from '../stores/redis-client.js';
import { z } from 'zod';
import { DEFAULT_REDIS_KEY_PREFIX } from '../stores/redis-session-store.js';
import { redisFailure } from '../stores/redis-failure.js';

/** Default time a node's advertisement lives without a heartbeat (ms). */
export const DEFAULT_NODE_TTL_MS = 10_000;

/** What a node advertises under `<prefix>node:<id>`. */
export interface NodeInfo {
  nodeId: string;
  /** Base URL other nodes (or a 421 answer) use to reach this node. */
  url: string;
  startedAtMs: number;
  /** Clock reading of the heartbeat that wrote this value. */
  heartbeatMs: number;
}

const NodeInfoSchema = z.object({
  nodeId: z.string().min(1),
  url: z.string(),
  startedAtMs: z.number(),
  heartbeatMs: z.number(),
});

/** Options for NodeRegistry. */
export interface NodeRegistryOptions {
  /** Connected ioredis client; the caller owns it. */
  redis: RedisClient;
  /** Prefix of every key (default "a3s:"), shared with the stores and leases. */
  keyPrefix?: string;
  /** This node's id, unique in the cluster. */
  nodeId: string;
  /** Base URL this node is reachable at. */
  advertiseUrl: string;
  /** Lifetime of the advertisement without a heartbeat (default 10000 ms); renewed every ttl/3. */
  ttlMs?: number;
  /** Clock for the advertised timestamps (default Date.now). */
  now?: () => number;
  /** Told about a failed heartbeat (Redis unreachable); the next heartbeat retries. */
  onError?: (error: unknown) => void;
}

/** The Redis key advertising node `nodeId` under `keyPrefix`. */
export function nodeKey(keyPrefix: string, nodeId: string): string {
  return `${keyPrefix}node:${nodeId}`;
}

/**
 * Node identity and liveness on Redis: `<prefix>node:<id>` holds this node's NodeInfo as JSON with a
 * PX TTL renewed every ttl/3, and `<prefix>nodes` is the set of ids that advertised (pruned lazily by
 * list()). A node that stops heartbeating (crash, SIGSTOP, lost Redis) disappears after the TTL.
 */
export class NodeRegistry {
  /** This node's id. */
  readonly nodeId: string;
  private readonly redis: RedisClient;
  private readonly keyPrefix: string;
  private readonly advertiseUrl: string;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;
  private startedAtMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(options: NodeRegistryOptions) {
    this.redis = options.redis;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.nodeId = options.nodeId;
    this.advertiseUrl = options.advertiseUrl;
    this.ttlMs = options.ttlMs ?? DEFAULT_NODE_TTL_MS;
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? (() => undefined);
    if (!Number.isInteger(this.ttlMs) || this.ttlMs < 3)
      throw new RangeError(`node ttlMs must be an integer >= 3, got ${this.ttlMs}`);
  }

  /** The set of advertised node ids. */
  get indexKey(): string {
    return `${this.keyPrefix}nodes`;
  }

  /** Write this node's advertisement (PERSISTENCE_FAILED when Redis refuses) and renew it every ttl/3 until stop(). */
  async start(): Promise<void> {
    if (this.timer !== undefined) return;
    this.startedAtMs = this.now();
    await this.heartbeat();
    this.timer = setInterval(
      () => {
        // One heartbeat at a time: a slow Redis must not pile up writes.
        if (this.beating !== undefined) return;
        this.beating = this.heartbeat()
          .catch((error: unknown) => this.onError(error))
          .finally(() => {
            this.beating = undefined;
          });
      },
      Math.floor(this.ttlMs / 3),
    );
    this.timer.unref();
  }

  /** Stop heartbeating and delete this node's advertisement. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    try {
      // Two keys in two slots of a cluster: two commands, not one MULTI.
      await Promise.all([
        this.redis.del(nodeKey(this.keyPrefix, this.nodeId)),
        this.redis.srem(this.indexKey, this.nodeId),
      ]);
    } catch (error) {
      throw redisFailure(`failed to remove the advertisement of node ${this.nodeId}`, { nodeId: this.nodeId }, error);
    }
  }

  /** True while `nodeId` has a live (unexpired) advertisement. */
  async isAlive(nodeId: string): Promise<boolean> {
    try {
      return (await this.redis.exists(nodeKey(this.keyPrefix, nodeId))) === 1;
    } catch (error) {
      throw redisFailure(`failed to read the advertisement of node ${nodeId}`, { nodeId }, error);
    }
  }

  /** The live advertisement of `nodeId`, or undefined when it expired or never existed. */
  async get(nodeId: string): Promise<NodeInfo | undefined> {
    let raw: string | null;
    try {
      raw = await this.redis.get(nodeKey(this.keyPrefix, nodeId));
    } catch (error) {
      throw redisFailure(`failed to read the advertisement of node ${nodeId}`, { nodeId }, error);
    }
    return raw === null ? undefined : parseNodeInfo(raw);
  }

  /** Every live node, sorted by id; ids whose advertisement expired are pruned from the index. */
  async list(): Promise<NodeInfo[]> {
    try {
      const ids = (await this.redis.smembers(this.indexKey)).sort();
      if (ids.length === 0) return [];
      // One GET per node (their keys live in different slots of a cluster; ioredis pipelines them).
      const values = await Promise.all(ids.map((id) => this.redis.get(nodeKey(this.keyPrefix, id))));
      const live: NodeInfo[] = [];
      const expired: string[] = [];
      ids.forEach((id, index) => {
        const info = values[index] === null || values[index] === undefined ? undefined : parseNodeInfo(values[index]);
        if (info === undefined) expired.push(id);
        else live.push(info);
      });
      // A node that comes back re-adds itself on its next heartbeat, so pruning is safe.
      if (expired.length > 0) await this.redis.srem(this.indexKey, ...expired);
      return live;
    } catch (error) {
      throw redisFailure('failed to list cluster nodes', {}, error);
    }
  }

  private async heartbeat(): Promise<void> {
    const info: NodeInfo = {
      nodeId: this.nodeId,
      url: this.advertiseUrl,
      startedAtMs: this.startedAtMs ?? this.now(),
      heartbeatMs: this.now(),
    };
    try {
      // Two slots of a cluster, so two commands: an index entry without its advertisement is pruned by list(), never trusted.
      await Promise.all([
        this.redis.set(nodeKey(this.keyPrefix, this.nodeId), JSON.stringify(info), 'PX', this.ttlMs),
        this.redis.sadd(this.indexKey, this.nodeId),
      ]);
    } catch (error) {
      throw redisFailure(`failed to advertise node ${this.nodeId}`, { nodeId: this.nodeId }, error);
    }
  }
}

function parseNodeInfo(raw: string): NodeInfo | undefined {
  try {
    const parsed = NodeInfoSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
