import type { LoopCheckpoint } from '../protocol/loop-checkpoint.js';
import type { CheckpointStore } from './checkpoint-store.js';
import { FILE_STORE_SESSION_ID } from './file-session-store.js';
import { JsonFileDirectory } from './json-file-directory.js';
import { parseCheckpoint } from './parse-checkpoint.js';

// Run ids follow the same rule as session ids ("run_<hex>" from the id generator fits it).
const RUN_ID = FILE_STORE_SESSION_ID;

/** Options for FileCheckpointStore. */
export interface FileCheckpointStoreOptions {
  /** Directory holding one `<run id>.json` per run; created with mode 0o700. */
  dir: string;
}

/**
 * CheckpointStore on the local file system: one JSON file per run, each save written to a temp file,
 * fsynced, renamed over the target and made durable with a directory fsync; not shared across nodes.
 */
export class FileCheckpointStore implements CheckpointStore {
  readonly kind = 'file';
  readonly shared = false;
  /** Absolute directory of the checkpoint files. */
  readonly dir: string;
  private readonly files: JsonFileDirectory;

  constructor(options: FileCheckpointStoreOptions) {
    this.files = new JsonFileDirectory({
      dir: options.dir,
      storeName: 'file checkpoint store',
      record: 'checkpoint',
      owner: 'run',
      idKey: 'runId',
      idPattern: RUN_ID,
    });
    this.dir = this.files.dir;
  }

  /**
   * Create the directory (0o700) and remove temp files left by a crashed writer; idempotent, and run
   * implicitly by every other operation. Only one process may own a directory at a time.
   */
  init(): Promise<void> {
    return this.files.init();
  }

  /** Atomically replace the run's file with this checkpoint; saves of one run apply in call order. */
  async save(checkpoint: LoopCheckpoint): Promise<void> {
    this.files.assertOpen();
    // Validate and serialise at call time: later caller mutations cannot leak into this checkpoint.
    const parsed = parseCheckpoint(checkpoint, 'the checkpoint being saved');
    await this.files.write(parsed.run_id, JSON.stringify(parsed));
  }

  /** Read and validate the run's file; undefined when it (or a valid id for it) does not exist. */
  async load(runId: string): Promise<LoopCheckpoint | undefined> {
    this.files.assertOpen();
    return this.files.read(runId, parseCheckpoint, (checkpoint) => checkpoint.run_id);
  }

  /** Remove the run's file after any queued save; no error when absent. */
  async delete(runId: string): Promise<void> {
    this.files.assertOpen();
    await this.files.remove(runId);
  }

  /** Wait for queued saves and deletes to finish, then refuse further use. */
  async close(): Promise<void> {
    await this.files.close();
  }
}
