import { DEFAULT_TENANT_QUOTA, type TenantQuota, type TenantQuotaConfig } from '../../config/tenant-quota.js';
import type { CodeError } from '../../errors.js';
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

function exceeded(tenantId: string, quota: keyof TenantQuota, limit: number, used: number, retryAfterSeconds?: number): CodeError {
  const key = `tenant_quotas.${tenantId}.${quota.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
  return quotaExceeded({ tenantId, quota, limit, used, configKey: `${key} or default_tenant_quota`, retryAfterSeconds });
}

/**
 * Per-tenant quotas of this node: open sessions, runs in flight, runs started in the last minute (sliding
 * window of one-second buckets) and bytes of saved snapshots. `admit*` throws QUOTA_EXCEEDED (429, with
 * `retryAfterSeconds` where waiting helps) and counts on success; the matching `release*` uncounts.
 */
export class TenantQuotas {
  private readonly tenants = new Map<string, TenantUsage>();
  private readonly resolved = new Map<string, TenantQuota>();

  constructor(private readonly deps: TenantQuotasDeps) {}

  /** A tenant's limits: its own entry, else the default quota, each key defaulting to DEFAULT_TENANT_QUOTA. */
  quotaOf(tenantId: string): TenantQuota {
    let quota = this.resolved.get(tenantId);
    if (!quota) {
      quota = { ...DEFAULT_TENANT_QUOTA, ...definedOf(this.deps.defaultQuota), ...definedOf(this.deps.quotas[tenantId] ?? {}) };
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

  /** QUOTA_EXCEEDED when the tenant may open no more sessions (maxOpenSessions, maxStoredBytes). */
  assertSessionRoom(tenantId: string): void {
    const quota = this.quotaOf(tenantId);
    const usage = this.tenants.get(tenantId);
    if (!usage) return;
    if (usage.openSessions >= quota.maxOpenSessions) throw exceeded(tenantId, 'maxOpenSessions', quota.maxOpenSessions, usage.openSessions);
    if (usage.storedBytes >= quota.maxStoredBytes) throw exceeded(tenantId, 'maxStoredBytes', quota.maxStoredBytes, usage.storedBytes);
  }

  /** Count a session opened on this node (created, resumed or hydrated); QUOTA_EXCEEDED past maxOpenSessions or maxStoredBytes. */
  admitSession(tenantId: string): void {
    this.assertSessionRoom(tenantId);
    this.usage(tenantId).openSessions += 1;
  }

  /** A session of the tenant left this node (closed, passivated, or its opening failed). */
  releaseSession(tenantId: string): void {
    const usage = this.tenants.get(tenantId);
    if (usage && usage.openSessions > 0) usage.openSessions -= 1;
  }

  /** Count a run admitted for the tenant; QUOTA_EXCEEDED past maxConcurrentRuns or maxRunsPerMinute (with Retry-After). */
  admitRun(tenantId: string): void {
    const quota = this.quotaOf(tenantId);
    const usage = this.usage(tenantId);
    if (usage.runningRuns >= quota.maxConcurrentRuns) throw exceeded(tenantId, 'maxConcurrentRuns', quota.maxConcurrentRuns, usage.runningRuns, 1);
    const bucket = Math.floor(this.deps.now() / BUCKET_MS);
    const recent = this.startsSince(usage, bucket);
    if (recent >= quota.maxRunsPerMinute) throw exceeded(tenantId, 'maxRunsPerMinute', quota.maxRunsPerMinute, recent, this.secondsUntilFree(usage, bucket));
    const slot = bucket % WINDOW_BUCKETS;
    const entry = usage.starts[slot];
    if (entry && entry.bucket === bucket) entry.count += 1;
    else usage.starts[slot] = { bucket, count: 1 };
    usage.runningRuns += 1;
  }

  /** A run of the tenant ended. */
  releaseRun(tenantId: string): void {
    const usage = this.tenants.get(tenantId);
    if (usage && usage.runningRuns > 0) usage.runningRuns -= 1;
  }

  /** Record the size of a session's latest saved snapshot (0 when it was deleted). */
  recordStored(tenantId: string, sessionId: string, bytes: number): void {
    const usage = this.usage(tenantId);
    usage.storedBytes += bytes - (usage.stored.get(sessionId) ?? 0);
    if (bytes > 0) usage.stored.set(sessionId, bytes);
    else usage.stored.delete(sessionId);
  }

  /** Every tenant's usage with its limits (for /metrics). */
  snapshot(): TenantQuotaUsage[] {
    const bucket = Math.floor(this.deps.now() / BUCKET_MS);
    return [...this.tenants].map(([tenantId, usage]) => ({
      tenantId,
      openSessions: usage.openSessions,
      runningRuns: usage.runningRuns,
      runsLastMinute: this.startsSince(usage, bucket),
      storedBytes: usage.storedBytes,
      quota: this.quotaOf(tenantId),
    }));
  }

  private startsSince(usage: TenantUsage, bucket: number): number {
    let total = 0;
    for (const entry of usage.starts) if (entry && entry.bucket > bucket - WINDOW_BUCKETS) total += entry.count;
    return total;
  }

  /** Seconds until the oldest counted bucket leaves the window. */
  private secondsUntilFree(usage: TenantUsage, bucket: number): number {
    let oldest = bucket;
    for (const entry of usage.starts) if (entry && entry.bucket > bucket - WINDOW_BUCKETS && entry.bucket < oldest) oldest = entry.bucket;
    return Math.max(1, oldest + WINDOW_BUCKETS - bucket);
  }
}

function definedOf(config: TenantQuotaConfig): Partial<TenantQuota> {
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}
