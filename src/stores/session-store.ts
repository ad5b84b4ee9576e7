import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';

/**
 * Where session snapshots live. `save` writes one complete generation atomically (never a partial
 * save) and returns the generation it stored; `load` validates what it reads against the schema.
 */
export interface SessionStore {
  /** Human-readable backend name for logs and readiness ("memory", "file", "redis"). */
  readonly kind: string;
  /** Atomically replace the session's snapshot with this generation. */
  save(snapshot: SessionSnapshotV1): Promise<void>;
  /** The latest saved generation, or undefined when none exists. Throws SNAPSHOT_INVALID on bad data. */
  load(sessionId: string): Promise<SessionSnapshotV1 | undefined>;
  /** Remove a session's snapshot; no error when absent. */
  delete(sessionId: string): Promise<void>;
  /** Ids of every stored session. */
  list(): Promise<string[]>;
  /** True when the backend is reachable (readiness probe). */
  ping(): Promise<boolean>;
  /** Release resources. */
  close(): Promise<void>;
}
