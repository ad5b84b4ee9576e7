import type { LoopCheckpoint } from '../protocol/loop-checkpoint.js';
import type { SessionKey } from './session-key.js';

/**
 * Where loop checkpoints live, keyed by their session's SessionKey and the run id (deleted when the run
 * ends). A checkpoint an earlier version stored by run id alone is read (and moved) when the key is absent.
 */
export interface CheckpointStore {
  /** "memory", "file" or "redis". */
  readonly kind: string;
  /** True when another node can read what this store saves (Redis); resume needs it across nodes. */
  readonly shared: boolean;
  /** Atomically replace the run's checkpoint; `session` is the key of the session `checkpoint.session_id` names. */
  save(session: SessionKey, checkpoint: LoopCheckpoint): Promise<void>;
  /** The run's checkpoint, or undefined. Throws SNAPSHOT_INVALID on bad data. */
  load(session: SessionKey, runId: string): Promise<LoopCheckpoint | undefined>;
  /** Remove the run's checkpoint; no error when absent. */
  delete(session: SessionKey, runId: string): Promise<void>;
  /** Release resources. */
  close(): Promise<void>;
}

/** One session's checkpoints, as a run of that session saves and deletes them. */
export interface RunCheckpoints {
  /** The store's kind ("memory", "file" or "redis"). */
  readonly kind: string;
  /** Atomically replace the run's checkpoint. */
  save(checkpoint: LoopCheckpoint): Promise<void>;
  /** Remove the run's checkpoint; no error when absent. */
  delete(runId: string): Promise<void>;
}

/** The checkpoints of the session `session` in `store` (built per run: an idle session holds none). */
export function runCheckpoints(store: CheckpointStore, session: SessionKey): RunCheckpoints {
  return {
    kind: store.kind,
    save: (checkpoint) => store.save(session, checkpoint),
    delete: (runId) => store.delete(session, runId),
  };
}
