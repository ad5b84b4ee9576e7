import type { LoopCheckpoint } from '../protocol/loop-checkpoint.js';

/** Where loop checkpoints live, keyed by run id (deleted when the run ends). */
export interface CheckpointStore {
  /** "memory", "file" or "redis". */
  readonly kind: string;
  /** True when another node can read what this store saves (Redis); resume needs it across nodes. */
  readonly shared: boolean;
  /** Atomically replace the run's checkpoint. */
  save(checkpoint: LoopCheckpoint): Promise<void>;
  /** The run's checkpoint, or undefined. Throws SNAPSHOT_INVALID on bad data. */
  load(runId: string): Promise<LoopCheckpoint | undefined>;
  /** Remove the run's checkpoint; no error when absent. */
  delete(runId: string): Promise<void>;
  /** Release resources. */
  close(): Promise<void>;
}
