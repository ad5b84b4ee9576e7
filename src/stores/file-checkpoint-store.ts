import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { CodeError } from '../errors.js';
import type { LoopCheckpoint } from '../protocol/loop-checkpoint.js';
import type { CheckpointStore } from './checkpoint-store.js';
import { FILE_STORE_SESSION_ID } from './file-session-store.js';
import { parseCheckpoint } from './parse-checkpoint.js';

// Run ids follow the same rule as session ids ("run_<hex>" from the id generator fits it).
const RUN_ID = FILE_STORE_SESSION_ID;
const CHECKPOINT_SUFFIX = '.json';
// Temp names start with "." and end with ".tmp"; a valid id starts with a letter or digit, so a temp
// file can never be mistaken for (or collide with) a checkpoint file.
const TEMP_FILE = /^\..+\.tmp$/;

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
  private readonly locks = new Map<string, Promise<void>>();
  private initialized: Promise<void> | undefined;
  private closed = false;

  constructor(options: FileCheckpointStoreOptions) {
    this.dir = path.resolve(options.dir);
  }

  /**
   * Create the directory (0o700) and remove temp files left by a crashed writer; idempotent, and run
   * implicitly by every other operation. Only one process may own a directory at a time.
   */
  init(): Promise<void> {
    this.initialized ??= this.initialize().catch((error: unknown) => {
      // A failed start (e.g. EACCES) is retried on the next call rather than remembered forever.
      this.initialized = undefined;
      throw error;
    });
    return this.initialized;
  }

  /** Atomically replace the run's file with this checkpoint; saves of one run apply in call order. */
  async save(checkpoint: LoopCheckpoint): Promise<void> {
    this.assertOpen();
    // Validate and serialise at call time: later caller mutations cannot leak into this checkpoint.
    const parsed = parseCheckpoint(checkpoint, 'the checkpoint being saved');
    const runId = parsed.run_id;
    if (!RUN_ID.test(runId)) {
      throw new CodeError('SNAPSHOT_INVALID', `run id ${JSON.stringify(runId)} is not a valid run id`, { runId });
    }
    const data = JSON.stringify(parsed);
    await this.init();
    await this.withLock(runId, () => this.writeAtomically(runId, data));
  }

  /** Read and validate the run's file; undefined when it (or a valid id for it) does not exist. */
  async load(runId: string): Promise<LoopCheckpoint | undefined> {
    this.assertOpen();
    if (!RUN_ID.test(runId)) return undefined;
    await this.init();
    const file = path.join(this.dir, `${runId}${CHECKPOINT_SUFFIX}`);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw persistenceError(`failed to read the checkpoint of run ${runId}`, runId, error);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'parse error';
      throw new CodeError('SNAPSHOT_INVALID', `checkpoint file ${file} is not valid JSON: ${reason}`, { runId, file });
    }
    const checkpoint = parseCheckpoint(raw, `checkpoint file ${file}`);
    if (checkpoint.run_id !== runId) {
      throw new CodeError('SNAPSHOT_INVALID', `checkpoint file ${file} holds run ${JSON.stringify(checkpoint.run_id)}, not ${JSON.stringify(runId)}`, {
        runId,
        file,
      });
    }
    return checkpoint;
  }

  /** Remove the run's file after any queued save; no error when absent. */
  async delete(runId: string): Promise<void> {
    this.assertOpen();
    if (!RUN_ID.test(runId)) return;
    await this.init();
    await this.withLock(runId, async () => {
      try {
        await unlink(path.join(this.dir, `${runId}${CHECKPOINT_SUFFIX}`));
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return;
        throw persistenceError(`failed to delete the checkpoint of run ${runId}`, runId, error);
      }
      await this.syncDir(runId);
    });
  }

  /** Wait for queued saves and deletes to finish, then refuse further use. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.locks.values()]);
  }

  private async initialize(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      for (const name of await readdir(this.dir)) {
        if (TEMP_FILE.test(name)) await unlink(path.join(this.dir, name)).catch(ignoreMissing);
      }
    } catch (error) {
      throw persistenceError('failed to open the file checkpoint store directory', undefined, error);
    }
  }

  private async writeAtomically(runId: string, data: string): Promise<void> {
    const target = path.join(this.dir, `${runId}${CHECKPOINT_SUFFIX}`);
    const temp = path.join(this.dir, `.${runId}.${randomBytes(8).toString('hex')}.tmp`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(data, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(ignoreMissing);
      throw persistenceError(`failed to save the checkpoint of run ${runId}`, runId, error);
    }
    await this.syncDir(runId);
  }

  // Makes the rename (or unlink) itself durable: without it a power loss can bring back the old file.
  private async syncDir(runId: string): Promise<void> {
    let handle: FileHandle | undefined;
    try {
      handle = await open(this.dir, 'r');
      await handle.sync();
    } catch (error) {
      // Some file systems cannot fsync a directory; the rename is still atomic there.
      if (errorCode(error) === 'EINVAL' || errorCode(error) === 'EISDIR') return;
      throw persistenceError(`failed to make the checkpoint of run ${runId} durable`, runId, error);
    } finally {
      await handle?.close();
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new CodeError('PERSISTENCE_FAILED', 'the file checkpoint store is closed');
  }

  private async withLock(runId: string, operation: () => Promise<void>): Promise<void> {
    const previous = this.locks.get(runId) ?? Promise.resolve();
    const current = previous.then(operation);
    // The chain continues past a failed operation; the failure still reaches this caller.
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(runId, tail);
    try {
      await current;
    } finally {
      if (this.locks.get(runId) === tail) this.locks.delete(runId);
    }
  }
}

function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function ignoreMissing(error: unknown): void {
  if (errorCode(error) !== 'ENOENT') throw error;
}

// Names the run and the errno code only: no paths from the OS message, no stack.
function persistenceError(message: string, runId: string | undefined, cause: unknown): CodeError {
  if (cause instanceof CodeError) return cause;
  const code = errorCode(cause);
  return new CodeError('PERSISTENCE_FAILED', code === undefined ? message : `${message} (${code})`, {
    ...(runId === undefined ? {} : { runId }),
    ...(code === undefined ? {} : { cause: code }),
  });
}
