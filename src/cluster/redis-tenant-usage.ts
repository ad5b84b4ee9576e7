import { z } from 'zod';
import { sumUsage, type ClusterTenantUsage, type NodeTenantUsage } from '../runtime/quotas/node-tenant-usage.js';
import type { RedisClient } from '../stores/redis-client.js';
import { encodeKeyPart } from '../stores/session-key.js';

/** Options of RedisTenantUsage. */
export interface RedisTenantUsageOptions {
  redis: RedisClient;
  keyPrefix: string;
  nodeId: string;
  /** cluster.node_ttl_ms: an entry not rewritten for this long is a dead node's and is not counted. */
  ttlMs: number;
  now?: () => number;
  /** This node's entry for a tenant (undefined: it counts nothing for it). */
  local(tenantId: string): NodeTenantUsage | undefined;
  /** The tenants this node counts anything for. */
  tenants(): Iterable<string>;
  onError?: (error: unknown) => void;
}

const EntrySchema = z.object({
  openSessions: z.number(),
  runningRuns: z.number(),
  storedBytes: z.number(),
  starts: z.array(z.tuple([z.number(), z.number()])),
  /** Epoch ms after which the entry is a dead node's (its writer's clock plus node_ttl_ms). */
  until: z.number(),
});

/**
 * The cluster-wide view of tenant quotas on Redis: one hash per tenant, `<prefix>quota:{<tenant>}` (hash-tagged:
 * one slot on Redis Cluster), with one field per node holding that node's counts and the time they stop
 * counting (`until`: written + node_ttl_ms). A node rewrites its fields when its counts change (coalesced, one
 * pipeline of HSET + PEXPIRE + HGETALL per tenant, in the background) and every node_ttl_ms / 3 (the heartbeat),
 * reading the other nodes' fields with each write; entries past `until` (a dead node's) are not counted and
 * are deleted. The key itself expires node_ttl_ms after its last write.
 */
export class RedisTenantUsage implements ClusterTenantUsage {
  private readonly view = new Map<string, NodeTenantUsage>();
  private readonly dirty = new Set<string>();
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: RedisTenantUsageOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The Redis key of a tenant's entries. */
  keyOf(tenantId: string): string {
    return `${this.options.keyPrefix}quota:{${encodeKeyPart(tenantId)}}`;
  }

  others(tenantId: string): NodeTenantUsage | undefined {
    return this.view.get(tenantId);
  }

  publish(tenantId: string): void {
    this.dirty.add(tenantId);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const tenants = [...this.dirty];
      this.dirty.clear();
      void this.sync(tenants);
    });
  }

  async refresh(tenantId: string): Promise<void> {
    this.dirty.delete(tenantId);
    await this.sync([tenantId]);
  }

  /** Start the heartbeat: every node_ttl_ms / 3, rewrite this node's entries and re-read the others'. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => void this.sync(new Set([...this.options.tenants(), ...this.view.keys()])),
      Math.max(1, Math.floor(this.options.ttlMs / 3)),
    );
    this.timer.unref();
  }

  /** Stop the heartbeat and remove this node's entries (a graceful stop frees its counts at once). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const { redis, nodeId } = this.options;
    await Promise.all(
      [...this.options.tenants()].map((tenantId) =>
        redis.hdel(this.keyOf(tenantId), nodeId).catch((error: unknown) => this.options.onError?.(error)),
      ),
    );
  }

  /** Write this node's entry of each tenant and read the others' (one pipeline per tenant: one slot each). */
  private async sync(tenants: Iterable<string>): Promise<void> {
    await Promise.all(
      [...tenants].map((tenantId) => this.syncOne(tenantId).catch((error: unknown) => this.options.onError?.(error))),
    );
  }

  private async syncOne(tenantId: string): Promise<void> {
    const { redis, nodeId, ttlMs } = this.options;
    const key = this.keyOf(tenantId);
    const mine = this.options.local(tenantId);
    const pipeline = redis.pipeline();
    if (mine) pipeline.hset(key, nodeId, JSON.stringify({ ...mine, until: this.now() + ttlMs })).pexpire(key, ttlMs);
    else pipeline.hdel(key, nodeId);
    pipeline.hgetall(key);
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    const fields = (results.at(-1)?.[1] ?? {}) as Record<string, string>;
    const now = this.now();
    const live: NodeTenantUsage[] = [];
    const dead: string[] = [];
    for (const [field, value] of Object.entries(fields)) {
      if (field === nodeId) continue;
      const entry = parseEntry(value);
      if (entry && entry.until > now) live.push(entry);
      else dead.push(field);
    }
    if (live.length > 0) this.view.set(tenantId, sumUsage(live));
    else this.view.delete(tenantId);
    if (dead.length > 0) await redis.hdel(key, ...dead);
  }
}

function parseEntry(value: string): z.infer<typeof EntrySchema> | undefined {
  try {
    const parsed = EntrySchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
