import { DEFAULT_TENANT_QUOTA, type TenantQuota, type TenantQuotaConfig } from '../../config/tenant-quota.js';
import type { CodeError } from '../../errors.js';
import type { ClusterTenantUsage, NodeTenantUsage } from './node-tenant-usage.js';
import { quotaExceeded } from './quota-exceeded.js';

/** Runs-per-minute are counted in buckets of this many ms (a sliding window of 60 of them). */
const BUCKET_MS = 1000;
const WINDOW_BUCKETS = 60;

/** One tenant's usage. */
interface TenantUsage {
  openSessions: number;
  runningRuns: number;
  /** Runs started per second bucket: index = bucket % WINDOW_BUCKETS, with the bucket number it counts. */
  readonly starts: { bucket: number; count: number }[];
  /** Bytes of each saved session's last snapshot. */
  readonly stored: Map<string, number>;
  storedBytes: number;
}

/** One tenant's usage and limits, as /metrics shows them. */
export interface TenantQuotaUsage {
  tenantId: string;
  openSessions: number;
  runningRuns: number;
  runsLastMinute: number;
  storedBytes: number;
  quota: TenantQuota;
}

/** What the quotas read: the configured quotas and a clock. */
export interface TenantQuotasDeps {
  readonly quotas: Readonly<Record<string, TenantQuotaConfig>>;
  readonly defaultQuota: TenantQuotaConfig;
  now(): number;
}

function exceeded(
  tenantId: string,
  quota: keyof TenantQuota,
  limit: number,
  used: number,
  retryAfterSeconds?: number,
): CodeError {
  const key = `tenant_quotas.${tenantId}.${quota.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
  return quotaExceeded({
    tenantId,
    quota,
    limit,
    used,
    configKey: `${key} or default_tenant_quota`,
    retryAfterSeconds,
  });
}

/**
 * Per-tenant quotas: open sessions, runs in flight, runs started in the last minute (sliding window of
 * one-second buckets) and bytes of saved snapshots. This node counts its own; with a cluster view
 * (`attachCluster`, Redis) each check adds the other live nodes' entries. `admit*` throws QUOTA_EXCEEDED
 * (429, with `retryAfterSeconds` where waiting helps) and counts on success; the matching `release*` uncounts.
 */
export class TenantQuotas {
  private readonly tenants = new Map<string, TenantUsage>();
  private readonly resolved = new Map<string, TenantQuota>();
  private cluster: ClusterTenantUsage | undefined;

  constructor(private readonly deps: TenantQuotasDeps) {}

  /** Count the other nodes' usage too (Redis): every change of this node's counts is published there. */
  attachCluster(cluster: ClusterTenantUsage): void {
    this.cluster = cluster;
  }

  /** This node's entry for a tenant (what it publishes), or undefined when it counts nothing for it. */
  entryOf(tenantId: string): NodeTenantUsage | undefined {
    const usage = this.tenants.get(tenantId);
    if (!usage) return undefined;
    const bucket = Math.floor(this.deps.now() / BUCKET_MS);
    const starts = usage.starts
      .filter((e) => e && e.bucket > bucket - WINDOW_BUCKETS)
      .map((e): [number, number] => [e.bucket, e.count]);
    if (usage.openSessions === 0 && usage.runningRuns === 0 && usage.storedBytes === 0 && starts.length === 0)
      return undefined;
    return { openSessions: usage.openSessions, runningRuns: usage.runningRuns, storedBytes: usage.storedBytes, starts };
  }

  /** The tenants this node counts anything for now (the cluster view republishes them with each heartbeat). */
  tenantIds(): string[] {
    return [...this.tenants.keys()].filter((tenantId) => this.entryOf(tenantId) !== undefined);
  }

  /** Read the other nodes' usage of the tenant now (session opening awaits it; runs read the last view). */
  async refresh(tenantId: string): Promise<void> {
    await this.cluster?.refresh(tenantId);
  }

  private changed(tenantId: string): void {
    this.cluster?.publish(tenantId);
  }

  /** A tenant's limits: its own entry, else the default quota, each key defaulting to DEFAULT_TENANT_QUOTA. */
  quotaOf(tenantId: string): TenantQuota {
    let quota = this.resolved.get(tenantId);
    if (!quota) {
      quota = {
        ...DEFAULT_TENANT_QUOTA,
        ...definedOf(this.deps.defaultQuota),
        ...definedOf(this.deps.quotas[tenantId] ?? {}),
      };
      this.resolved.set(tenantId, quota);
    }
    return quota;
  }

  private usage(tenantId: string): TenantUsage {
    let usage = this.tenants.get(tenantId);
    if (!usage) {
      usage = { openSessions: 0, runningRuns: 0, starts: [], stored: new Map(), storedBytes: 0 };
      this.tenants.set(tenantId, usage);
    }
    return usage;
  }

  /**
   * QUOTA_EXCEEDED when the tenant may open no more sessions on this node's own counts (maxOpenSessions,
   * maxStoredBytes): the check before a session is built. admitSession adds the other nodes' counts.
   */
  assertSessionRoom(tenantId: string): void {
    this.assertRoom(tenantId, undefined);
  }

  private assertRoom(tenantId: string, others: NodeTenantUsage | undefined): void {
    const quota = this.quotaOf(tenantId);
    const usage = this.tenants.get(tenantId);
    if (!usage && !others) return;
    const open = (usage?.openSessions ?? 0) + (others?.openSessions ?? 0);
    const stored = (usage?.storedBytes ?? 0) + (others?.storedBytes ?? 0);
    if (open >= quota.maxOpenSessions) throw exceeded(tenantId, 'maxOpenSessions', quota.maxOpenSessions, open);
    if (stored >= quota.maxStoredBytes) throw exceeded(tenantId, 'maxStoredBytes', quota.maxStoredBytes, stored);
  }

  /**
   * Count a session opened on this node (created, resumed or hydrated); QUOTA_EXCEEDED past maxOpenSessions or
   * maxStoredBytes, counting the other nodes' usage as last read (`refresh` first for a fresh view).
   */
  admitSession(tenantId: string): void {
    this.assertRoom(tenantId, this.cluster?.others(tenantId));
    this.usage(tenantId).openSessions += 1;
    this.changed(tenantId);
  }

  /**
   * In a cluster: write the count admitSession just made and re-read the other nodes' (one round trip); when
   * the cluster-wide count is now past maxOpenSessions (another node admitted one meanwhile), uncount it and
   * throw QUOTA_EXCEEDED. Nothing without a cluster view.
   */
  async confirmSession(tenantId: string): Promise<void> {
    if (!this.cluster) return;
    await this.cluster.refresh(tenantId);
    const quota = this.quotaOf(tenantId);
    const open = (this.tenants.get(tenantId)?.openSessions ?? 0) + (this.cluster.others(tenantId)?.openSessions ?? 0);
    if (open > quota.maxOpenSessions) {
      this.releaseSession(tenantId);
      throw exceeded(tenantId, 'maxOpenSessions', quota.maxOpenSessions, open - 1);
    }
  }

  /** A session of the tenant left this node (closed, passivated, or its opening failed). */
  releaseSession(tenantId: string): void {
    const usage = this.tenants.get(tenantId);
    if (usage && usage.openSessions > 0) {
      usage.openSessions -= 1;
      this.changed(tenantId);
    }
  }

  /** Count a run admitted for the tenant; QUOTA_EXCEEDED past maxConcurrentRuns or maxRunsPerMinute (with Retry-After). */
  admitRun(tenantId: string): void {
    const quota = this.quotaOf(tenantId);
    const usage = this.usage(tenantId);
    const others = this.cluster?.others(tenantId);
    const running = usage.runningRuns + (others?.runningRuns ?? 0);
    if (running >= quota.maxConcurrentRuns)
      throw exceeded(tenantId, 'maxConcurrentRuns', quota.maxConcurrentRuns, running, 1);
    this.countStart(tenantId, quota, usage, others);
    usage.runningRuns += 1;
    this.changed(tenantId);
  }

  /** Count a run queued for the tenant (multitaskStrategy): maxRunsPerMinute at once (QUOTA_EXCEEDED past it); it runs later. */
  admitQueuedRun(tenantId: string): void {
    this.countStart(tenantId, this.quotaOf(tenantId), this.usage(tenantId), this.cluster?.others(tenantId));
    this.changed(tenantId);
  }

  /** A queued run of the tenant started: it takes the concurrent-run slot its session's previous run just released. */
  startQueuedRun(tenantId: string): void {
    this.usage(tenantId).runningRuns += 1;
    this.changed(tenantId);
  }

  private countStart(
    tenantId: string,
    quota: TenantQuota,
    usage: TenantUsage,
    others: ReturnType<ClusterTenantUsage['others']>,
  ): void {
    const bucket = Math.floor(this.deps.now() / BUCKET_MS);
    const elsewhere = others?.starts.map(([b, count]) => ({ bucket: b, count })) ?? [];
    const recent = this.startsSince(usage.starts, bucket) + this.startsSince(elsewhere, bucket);
    if (recent >= quota.maxRunsPerMinute)
      throw exceeded(
        tenantId,
        'maxRunsPerMinute',
        quota.maxRunsPerMinute,
        recent,
        this.secondsUntilFree([...usage.starts, ...elsewhere], bucket),
      );
    const slot = bucket % WINDOW_BUCKETS;
    const entry = usage.starts[slot];
    if (entry && entry.bucket === bucket) entry.count += 1;
    else usage.starts[slot] = { bucket, count: 1 };
  }

  /** A run of the tenant ended. */
  releaseRun(tenantId: string): void {
    const usage = this.tenants.get(tenantId);
    if (usage && usage.runningRuns > 0) {
      usage.runningRuns -= 1;
      this.changed(tenantId);
    }
  }

  /**
   * QUOTA_EXCEEDED (maxStoredBytes) when storing `bytes` more (attachments) would take the tenant past its
   * stored bytes, this node's and the other nodes' as last read.
   */
  assertStoredRoom(tenantId: string, bytes: number): void {
    const quota = this.quotaOf(tenantId);
    const used = (this.tenants.get(tenantId)?.storedBytes ?? 0) + (this.cluster?.others(tenantId)?.storedBytes ?? 0);
    if (used + bytes > quota.maxStoredBytes) throw exceeded(tenantId, 'maxStoredBytes', quota.maxStoredBytes, used);
  }

  /** Record the size of a session's latest saved snapshot (0 when it was deleted). */
  recordStored(tenantId: string, sessionId: string, bytes: number): void {
    const usage = this.usage(tenantId);
    const previous = usage.stored.get(sessionId) ?? 0;
    usage.storedBytes += bytes - previous;
    if (bytes > 0) usage.stored.set(sessionId, bytes);
    else usage.stored.delete(sessionId);
    if (bytes !== previous) this.changed(tenantId);
  }

  /** Every tenant's usage with its limits (for /metrics). */
  snapshot(): TenantQuotaUsage[] {
    const bucket = Math.floor(this.deps.now() / BUCKET_MS);
    return [...this.tenants].map(([tenantId, usage]) => ({
      tenantId,
      openSessions: usage.openSessions,
      runningRuns: usage.runningRuns,
      runsLastMinute: this.startsSince(usage.starts, bucket),
      storedBytes: usage.storedBytes,
      quota: this.quotaOf(tenantId),
    }));
  }

  private startsSince(starts: readonly { bucket: number; count: number }[], bucket: number): number {
    let total = 0;
    for (const entry of starts) if (entry && entry.bucket > bucket - WINDOW_BUCKETS) total += entry.count;
    return total;
  }

  /** Seconds until the oldest counted bucket leaves the window. */
  private secondsUntilFree(starts: readonly { bucket: number; count: number }[], bucket: number): number {
    let oldest = bucket;
    for (const entry of starts)
      if (entry && entry.bucket > bucket - WINDOW_BUCKETS && entry.bucket < oldest) oldest = entry.bucket;
    return Math.max(1, oldest + WINDOW_BUCKETS - bucket);
  }
}

function definedOf(config: TenantQuotaConfig): Partial<TenantQuota> {
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}
