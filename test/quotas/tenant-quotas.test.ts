import { describe, expect, it } from 'vitest';
import { DEFAULT_TENANT_QUOTA } from '../../src/config/tenant-quota.js';
import { CodeError } from '../../src/errors.js';
import type { ClusterTenantUsage, NodeTenantUsage } from '../../src/runtime/quotas/node-tenant-usage.js';
import { TenantQuotas } from '../../src/runtime/quotas/tenant-quotas.js';

function quotaError(run: () => void): CodeError {
  try {
    run();
  } catch (error) {
    if (error instanceof CodeError) return error;
    throw error;
  }
  throw new Error('expected QUOTA_EXCEEDED');
}

describe('TenantQuotas', () => {
  it('resolves a tenant entry over the default quota over the documented defaults', () => {
    const quotas = new TenantQuotas({
      quotas: { acme: { maxConcurrentRuns: 2 } },
      defaultQuota: { maxOpenSessions: 5 },
      now: () => 0,
    });
    expect(quotas.quotaOf('acme')).toEqual({ ...DEFAULT_TENANT_QUOTA, maxOpenSessions: 5, maxConcurrentRuns: 2 });
    expect(quotas.quotaOf('other')).toEqual({ ...DEFAULT_TENANT_QUOTA, maxOpenSessions: 5 });
    expect(DEFAULT_TENANT_QUOTA).toEqual({
      maxOpenSessions: 10_000,
      maxConcurrentRuns: 64,
      maxRunsPerMinute: 6_000,
      maxStoredBytes: 10 * 1024 ** 3,
    });
  });

  it('counts open sessions and runs in flight per tenant; a release frees the slot', () => {
    const quotas = new TenantQuotas({
      quotas: { a: { maxOpenSessions: 1, maxConcurrentRuns: 1 } },
      defaultQuota: {},
      now: () => 0,
    });
    quotas.admitSession('a');
    const over = quotaError(() => quotas.admitSession('a'));
    expect(over).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      status: 429,
      details: { quota: 'maxOpenSessions', limit: 1, used: 1, tenantId: 'a' },
    });
    expect(over.message).toContain('tenant_quotas.a.max_open_sessions');
    quotas.admitSession('b');
    quotas.releaseSession('a');
    quotas.admitSession('a');
    quotas.admitRun('a');
    expect(quotaError(() => quotas.admitRun('a')).details).toMatchObject({
      quota: 'maxConcurrentRuns',
      retryAfterSeconds: 1,
    });
    quotas.releaseRun('a');
    quotas.admitRun('a');
  });

  it('runs per minute: a sliding window of one-second buckets, Retry-After until the oldest leaves it', () => {
    let now = 0;
    const quotas = new TenantQuotas({
      quotas: {},
      defaultQuota: { maxRunsPerMinute: 3, maxConcurrentRuns: 100 },
      now: () => now,
    });
    quotas.admitRun('t');
    now = 10_000;
    quotas.admitRun('t');
    quotas.admitRun('t');
    now = 30_000;
    const over = quotaError(() => quotas.admitRun('t'));
    expect(over.details).toMatchObject({ quota: 'maxRunsPerMinute', limit: 3, used: 3, retryAfterSeconds: 30 });
    now = 60_000;
    quotas.admitRun('t');
    expect(quotas.snapshot()).toEqual([expect.objectContaining({ tenantId: 't', runsLastMinute: 3, runningRuns: 4 })]);
  });

  it("stored bytes follow each session's latest snapshot; over the quota no session opens", () => {
    const quotas = new TenantQuotas({ quotas: {}, defaultQuota: { maxStoredBytes: 1000 }, now: () => 0 });
    quotas.recordStored('t', 's1', 600);
    quotas.recordStored('t', 's1', 700);
    quotas.recordStored('t', 's2', 400);
    expect(quotas.snapshot()[0]?.storedBytes).toBe(1100);
    expect(quotaError(() => quotas.admitSession('t')).details).toMatchObject({
      quota: 'maxStoredBytes',
      limit: 1000,
      used: 1100,
    });
    quotas.recordStored('t', 's2', 0);
    quotas.admitSession('t');
  });
});

describe("TenantQuotas with a cluster view (the other nodes' entries)", () => {
  function withOthers(others: NodeTenantUsage, nowMs: number) {
    const published: string[] = [];
    const view: ClusterTenantUsage = {
      others: (tenantId) => (tenantId === 'a' ? others : undefined),
      publish: (tenantId) => published.push(tenantId),
      refresh: async () => undefined,
    };
    const quotas = new TenantQuotas({
      quotas: { a: { maxOpenSessions: 2, maxConcurrentRuns: 3, maxRunsPerMinute: 4, maxStoredBytes: 1000 } },
      defaultQuota: {},
      now: () => nowMs,
    });
    quotas.attachCluster(view);
    return { quotas, published };
  }

  it("adds the others' open sessions, runs in flight and run starts (Retry-After from the oldest start anywhere); publishes each change", () => {
    const bucket = 100;
    const { quotas, published } = withOthers(
      { openSessions: 1, runningRuns: 2, storedBytes: 0, starts: [[bucket - 30, 2]] },
      bucket * 1000,
    );
    quotas.admitSession('a');
    expect(quotaError(() => quotas.admitSession('a')).details).toMatchObject({
      quota: 'maxOpenSessions',
      limit: 2,
      used: 2,
    });
    // The pre-build check counts this node only; admitSession adds the others.
    expect(() => quotas.assertSessionRoom('a')).not.toThrow();
    quotas.admitRun('a');
    expect(quotaError(() => quotas.admitRun('a')).details).toMatchObject({
      quota: 'maxConcurrentRuns',
      limit: 3,
      used: 3,
      retryAfterSeconds: 1,
    });
    quotas.releaseRun('a');
    quotas.admitRun('a');
    quotas.releaseRun('a');
    // 2 starts elsewhere 30 s ago + 2 here: the window is full until the others' start leaves it (30 s).
    expect(quotaError(() => quotas.admitRun('a')).details).toMatchObject({
      quota: 'maxRunsPerMinute',
      limit: 4,
      used: 4,
      retryAfterSeconds: 30,
    });
    expect(quotas.entryOf('a')).toEqual({ openSessions: 1, runningRuns: 0, storedBytes: 0, starts: [[bucket, 2]] });
    expect(published.length).toBeGreaterThanOrEqual(5);
    expect(new Set(published)).toEqual(new Set(['a']));
  });

  it("adds the others' stored bytes", () => {
    const { quotas } = withOthers({ openSessions: 0, runningRuns: 0, storedBytes: 900, starts: [] }, 0);
    quotas.recordStored('a', 's1', 100);
    expect(quotaError(() => quotas.admitSession('a')).details).toMatchObject({
      quota: 'maxStoredBytes',
      limit: 1000,
      used: 1000,
    });
  });
});
