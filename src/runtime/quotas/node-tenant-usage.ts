/** What one node counts for one tenant: the entry it keeps in the cluster-wide view. */
export interface NodeTenantUsage {
  openSessions: number;
  runningRuns: number;
  storedBytes: number;
  /** Runs started per one-second bucket: [bucket number, count], buckets of the last minute only. */
  starts: [number, number][];
}

/**
 * The tenants' usage on the other live nodes of a cluster (Redis): each node keeps one entry per tenant that
 * expires with the node's TTL, so a dead node's counts go away. `others` is sync (read on the run path from
 * the last view); `publish` writes this node's entry and refreshes the view; `refresh` only reads.
 */
export interface ClusterTenantUsage {
  /** The sum of the other live nodes' entries for the tenant, as last read (undefined: none). */
  others(tenantId: string): NodeTenantUsage | undefined;
  /** Write this node's entry for the tenant (coalesced, in the background) and read the others' with it. */
  publish(tenantId: string): void;
  /** Write this node's entry and read the others' now (one round trip); resolves when the view is fresh. */
  refresh(tenantId: string): Promise<void>;
}

/** The sum of entries (starts merged by bucket). */
export function sumUsage(entries: Iterable<NodeTenantUsage>): NodeTenantUsage {
  const total: NodeTenantUsage = { openSessions: 0, runningRuns: 0, storedBytes: 0, starts: [] };
  const buckets = new Map<number, number>();
  for (const entry of entries) {
    total.openSessions += entry.openSessions;
    total.runningRuns += entry.runningRuns;
    total.storedBytes += entry.storedBytes;
    for (const [bucket, count] of entry.starts) buckets.set(bucket, (buckets.get(bucket) ?? 0) + count);
  }
  total.starts = [...buckets];
  return total;
}
