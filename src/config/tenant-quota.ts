import { z } from 'zod';

/** The documented defaults of every tenant's quota (config `default_tenant_quota {}` overrides them). */
export const DEFAULT_TENANT_QUOTA = {
  maxOpenSessions: 10_000,
  maxConcurrentRuns: 64,
  maxRunsPerMinute: 6_000,
  maxStoredBytes: 10 * 1024 ** 3,
} as const;

/**
 * A tenant's quota (config `tenant_quotas "<tenant>" {}`, `default_tenant_quota {}`): open sessions, runs in
 * flight, runs started in the last minute, and bytes of its saved snapshots, on this node or, on Redis, on
 * every live node of the cluster (RedisTenantUsage). A key left out takes the default quota's value.
 */
export const TenantQuotaSchema = z
  .object({
    maxOpenSessions: z.number().int().positive().optional(),
    maxConcurrentRuns: z.number().int().positive().optional(),
    maxRunsPerMinute: z.number().int().positive().optional(),
    maxStoredBytes: z.number().int().positive().optional(),
  })
  .strict();

/** A tenant quota as configured. */
export type TenantQuotaConfig = z.infer<typeof TenantQuotaSchema>;

/** A tenant quota with every limit resolved. */
export type TenantQuota = { -readonly [K in keyof typeof DEFAULT_TENANT_QUOTA]: number };
