import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { LoopCheckpoint } from '../protocol/loop-checkpoint.js';
import type { CheckpointStore } from './checkpoint-store.js';
import { FILE_STORE_KEY_PART, FILE_STORE_SESSION_ID } from './file-session-store.js';
import { persistenceError } from './fs-errors.js';
import { JsonFileDirectory } from './json-file-directory.js';
import { parseCheckpoint } from './parse-checkpoint.js';
import { sessionIdOf, tenantPartOf, type SessionKey } from './session-key.js';

// Run ids follow the same rule as session ids ("run_<hex>" from the id generator fits it).
const RUN_ID = FILE_STORE_SESSION_ID;
// `<encoded session id>~<run id>`: "~" is in neither part, so the name splits one way only.
const RECORD_ID = /^(?:%|[A-Za-z0-9_%-][A-Za-z0-9._%-]{0,249})~[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Options for FileCheckpointStore. */
export interface FileCheckpointStoreOptions {
  /** Directory holding `<tenant>/<session id>~<run id>.json` per run; created with mode 0o700. */
  dir: string;
}

/**
 * CheckpointStore on the local file system: one JSON file `<dir>/<tenant>/<session id>~<run id>.json` per
 * run (both key parts encoded), each save written to a temp file, fsynced, renamed over the target and made
 * durable with a directory fsync; not shared across nodes. A checkpoint of the old layout
 * (`<dir>/<run id>.json`) is moved on its first load by the session it names.
 */
export class FileCheckpointStore implements CheckpointStore {
  readonly kind = 'file';
  readonly shared = false;
  /** Absolute directory of the tenant directories. */
  readonly dir: string;
  /** The top directory: old-layout `<run id>.json` files. */
  private readonly legacy: JsonFileDirectory;
  private readonly tenants = new Map<string, JsonFileDirectory>();
  private initialized: Promise<void> | undefined;

  constructor(options: FileCheckpointStoreOptions) {
    this.legacy = new JsonFileDirectory({ ...directoryOptions(options.dir), idPattern: RUN_ID });
    this.dir = this.legacy.dir;
  }

  /**
   * Create the directory (0o700) and remove temp files left by a crashed writer (in it and in every
   * tenant's directory); idempotent, and run implicitly by every other operation. Only one process may
   * own a directory at a time.
   */
  init(): Promise<void> {
    this.initialized ??= this.initialize().catch((error: unknown) => {
      this.initialized = undefined;
      throw error;
    });
    return this.initialized;
  }

  private async initialize(): Promise<void> {
    await this.legacy.init();
    let entries;
    try {
      entries = await readdir(this.dir, { withFileTypes: true });
    } catch (error) {
      throw persistenceError('failed to list the file checkpoint store', {}, error);
    }
    for (const entry of entries)
      if (entry.isDirectory() && FILE_STORE_KEY_PART.test(entry.name)) await this.tenantDirNamed(entry.name).init();
  }

  /** Atomically replace the run's file with this checkpoint; saves of one run apply in call order. */
  async save(session: SessionKey, checkpoint: LoopCheckpoint): Promise<void> {
    this.legacy.assertOpen();
    // Validate and serialise at call time: later caller mutations cannot leak into this checkpoint.
    const parsed = parseCheckpoint(checkpoint, 'the checkpoint being saved');
    const text = JSON.stringify(parsed);
    await this.init();
    await this.tenantDir(session).write(recordId(session, parsed.run_id), text);
  }

  /** Read and validate the run's file (moving an old-layout one into place); undefined when none exists. */
  async load(session: SessionKey, runId: string): Promise<LoopCheckpoint | undefined> {
    this.legacy.assertOpen();
    await this.init();
    const dir = this.tenantDir(session);
    const id = recordId(session, runId);
    const found = await dir.read(id, parseCheckpoint, (checkpoint) => recordId(session, checkpoint.run_id));
    if (found !== undefined) return found.session_id === sessionIdOf(session) ? found : undefined;
    const old = await this.legacy.read(runId, parseCheckpoint, (checkpoint) => checkpoint.run_id);
    if (old === undefined || old.session_id !== sessionIdOf(session)) return undefined;
    await dir.write(id, JSON.stringify(old));
    await this.legacy.remove(runId);
    return old;
  }

  /** Remove the run's file after any queued save; no error when absent. */
  async delete(session: SessionKey, runId: string): Promise<void> {
    this.legacy.assertOpen();
    await this.init();
    await this.tenantDir(session).remove(recordId(session, runId));
  }

  /** Wait for queued saves and deletes to finish, then refuse further use. */
  async close(): Promise<void> {
    await Promise.all([this.legacy.close(), ...[...this.tenants.values()].map((dir) => dir.close())]);
  }

  private tenantDir(session: SessionKey): JsonFileDirectory {
    return this.tenantDirNamed(tenantPartOf(session));
  }

  private tenantDirNamed(tenant: string): JsonFileDirectory {
    let dir = this.tenants.get(tenant);
    if (dir === undefined) {
      if (!FILE_STORE_KEY_PART.test(tenant)) throw new RangeError(`not an encoded tenant id: ${tenant}`);
      dir = new JsonFileDirectory({
        ...directoryOptions(path.join(this.dir, tenant)),
        idPattern: RECORD_ID,
        createOnWrite: true,
      });
      this.tenants.set(tenant, dir);
    }
    return dir;
  }
}

function recordId(session: SessionKey, runId: string): string {
  return `${session.slice(session.indexOf('/') + 1)}~${runId}`;
}

function directoryOptions(dir: string) {
  return { dir, storeName: 'file checkpoint store', record: 'checkpoint', owner: 'run', idKey: 'runId' };
}
