import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import type { SessionKey } from './session-key.js';

/**
 * Where session snapshots live, keyed by SessionKey (tenant and session id: ids are per tenant). `save`
 * writes one complete generation atomically (never a partial save) under the key of the snapshot's
 * `session.ownerTenantId` and `session.id`; `load` validates what it reads against the schema. Data an
 * earlier version stored under the session id alone is read (and moved to its key) when the key is absent.
 */
export interface SessionStore {
  /** Human-readable backend name for logs and readiness ("memory", "file", "redis"). */
  readonly kind: string;
  /** Atomically replace the session's snapshot with this generation; answers the bytes it now holds for it (0 for the memory store). */
  save(snapshot: SessionSnapshotV1): Promise<number>;
  /** The latest saved generation, or undefined when none exists. Throws SNAPSHOT_INVALID on bad data. */
  load(key: SessionKey): Promise<SessionSnapshotV1 | undefined>;
  /** Remove a session's snapshot; no error when absent. */
  delete(key: SessionKey): Promise<void>;
  /** Keys of the stored sessions of one tenant, or of every tenant when `tenantId` is undefined; sorted. */
  list(tenantId?: string): Promise<SessionKey[]>;
  /** True when the backend is reachable (readiness probe); false, never a rejection, when it is not. */
  ping(): Promise<boolean>;
  /** Release resources. */
  close(): Promise<void>;
}
