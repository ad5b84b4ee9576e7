import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { CheckpointStore } from '../../stores/checkpoint-store.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { SessionStore } from '../../stores/session-store.js';
import { takeLease } from '../live-sessions/session-leases.js';
import type { SessionOwnership } from '../ports/session-ownership.js';

/** Where a stored session lives (its snapshots and its runs' loop checkpoints) and who may write them. */
export interface StoredSessionStores {
  readonly store: SessionStore;
  readonly checkpoints: CheckpointStore;
  /** The session leases: a store's deletes are fenced by the owner's lease, so a purge holds it. */
  readonly ownership: SessionOwnership;
}

/**
 * Delete a stored session for good, under its lease (SESSION_OWNED_ELSEWHERE when another live node holds
 * it): the loop checkpoints of its runs (every run its snapshot records: a checkpoint only outlives its run
 * when the run was interrupted, and every such run is in the records), then its snapshot, which holds its
 * transcript, artifacts, reports and task snapshots. Answers false when nothing was stored under the key.
 */
export async function purgeStoredSession(
  stores: StoredSessionStores,
  key: SessionKey,
  known?: SessionSnapshotV1,
): Promise<boolean> {
  await takeLease(stores.ownership, key);
  try {
    const snapshot = known ?? (await stores.store.load(key));
    if (!snapshot) {
      // Nothing stored, but an index may still list it (a Redis snapshot that expired by its TTL): unlist it.
      await stores.store.delete(key);
      return false;
    }
    for (const run of snapshot.run_records) await stores.checkpoints.delete(key, run.runId);
    await stores.store.delete(key);
    return true;
  } finally {
    await stores.ownership.release(key).catch(() => undefined);
  }
}
