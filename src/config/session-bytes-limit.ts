/** The default of limits.maxSessionBytesPerTenant: 64 MiB of sessions per tenant on one node. */
export const DEFAULT_MAX_SESSION_BYTES_PER_TENANT = 67_108_864;

/**
 * What limits.maxSessionBytesPerTenant counts for every open session beside its options, transcript and
 * artifacts: the objects a live session is made of (its parts, event log, run records, maps), rounded up from
 * the ~14 KB of heap the runs benchmark measures per retained session with its finished run.
 */
export const SESSION_OVERHEAD_BYTES = 16_384;

/** The parts of the configuration that decide whether tenants are bounded on this node. */
export interface TenantBoundsConfig {
  readonly apiTokens: readonly unknown[];
  readonly tenantQuotas: Readonly<Record<string, unknown>>;
  readonly defaultTenantQuota: Readonly<Record<string, unknown>>;
  readonly limits: { readonly maxSessionBytesPerTenant?: number | undefined };
}

/**
 * True when tenant quotas are on: with API tokens, or when any quota is configured. A tokenless loopback
 * server (one local user, the benchmarks) runs unthrottled.
 */
export function tenantQuotasOn(config: TenantBoundsConfig): boolean {
  return (
    config.apiTokens.length > 0 ||
    Object.keys(config.tenantQuotas).length > 0 ||
    Object.keys(config.defaultTenantQuota).length > 0
  );
}

/**
 * The bytes a tenant's open sessions may hold on this node (limits.maxSessionBytesPerTenant), or undefined
 * when unbounded: on wherever tenant quotas are (default 64 MiB), and whenever the key is set.
 */
export function sessionBytesLimit(config: TenantBoundsConfig): number | undefined {
  const set = config.limits.maxSessionBytesPerTenant;
  if (set !== undefined) return set;
  return tenantQuotasOn(config) ? DEFAULT_MAX_SESSION_BYTES_PER_TENANT : undefined;
}
