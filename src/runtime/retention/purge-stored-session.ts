import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { CheckpointStore } from '../../stores/checkpoint-store.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { SessionStore } from '../../stores/session-store.js';

/** Where a stored session lives: its snapshots and its runs' loop checkpoints. */
export interface StoredSessionStores {
  readonly store: SessionStore;
  readonly checkpoints: CheckpointStore;
}

/**
 * Delete a stored session for good: the loop checkpoints of its runs (every run its snapshot records: a
 * checkpoint only outlives its run when the run was interrupted, and every such run is in the records),
 * then its snapshot, which holds its transcript, artifacts, reports and task snapshots. Answers false when
 * nothing was stored under the key.
 */
export async function purgeStoredSession(stores: StoredSessionStores, key: SessionKey, known?: SessionSnapshotV1): Promise<boolean> {
  const snapshot = known ?? (await stores.store.load(key));
  if (!snapshot) return false;
  for (const run of snapshot.run_records) await stores.checkpoints.delete(key, run.runId);
  await stores.store.delete(key);
  return true;
}
