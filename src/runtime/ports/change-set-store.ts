import type { ChangeSet } from '../../protocol/change-set.js';
import type { SessionKey } from '../../stores/session-key.js';

/**
 * Where runs' change sets live, beside the session and never in its snapshot (an autoSave does not rewrite them):
 * memory, files under the session's directory, or Redis keys under the session's hash tag.
 */
export interface ChangeSetStore {
  /** "memory", "file" or "redis". */
  readonly kind: string;
  /** Store (or replace) the change set of `changeSet.run_id`. */
  put(session: SessionKey, changeSet: ChangeSet): Promise<void>;
  /** The run's change set, or undefined (a run of another session is undefined too). */
  get(session: SessionKey, runId: string): Promise<ChangeSet | undefined>;
  /** The bytes the session's change sets take (their JSON). */
  bytes(session: SessionKey): Promise<number>;
  /** Remove every change set of the session (purge, delete, retention). */
  deleteSession(session: SessionKey): Promise<void>;
  close(): Promise<void>;
}
