import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { JsonFileDirectory } from './json-file-directory.js';
import { parseSnapshot } from './parse-snapshot.js';
import type { SessionStore } from './session-store.js';

/** Session ids the file store accepts: the same rule as SessionOptions.sessionId. */
export const FILE_STORE_SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Options for FileSessionStore. */
export interface FileSessionStoreOptions {
  /** Directory holding one `<session id>.json` per session; created with mode 0o700. */
  dir: string;
}

/**
 * SessionStore on the local file system: one JSON file per session, each save a complete generation
 * written to a temp file, fsynced, renamed over the target and made durable with a directory fsync.
 */
export class FileSessionStore implements SessionStore {
  readonly kind = 'file';
  /** Absolute directory of the snapshot files. */
  readonly dir: string;
  private readonly files: JsonFileDirectory;

  constructor(options: FileSessionStoreOptions) {
    this.files = new JsonFileDirectory({
      dir: options.dir,
      storeName: 'file session store',
      record: 'snapshot',
      owner: 'session',
      idKey: 'sessionId',
      idPattern: FILE_STORE_SESSION_ID,
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

  /** Atomically replace the session's file with this generation; saves of one session apply in call order. */
  async save(snapshot: SessionSnapshotV1): Promise<void> {
    this.files.assertOpen();
    // Validate and serialise at call time: later caller mutations cannot leak into this generation.
    const parsed = parseSnapshot(snapshot, 'the snapshot being saved');
    await this.files.write(parsed.session.id, JSON.stringify(parsed));
  }

  /** Read and validate the session's file; undefined when it (or a valid id for it) does not exist. */
  async load(sessionId: string): Promise<SessionSnapshotV1 | undefined> {
    this.files.assertOpen();
    return this.files.read(sessionId, parseSnapshot, (snapshot) => snapshot.session.id);
  }

  /** Remove the session's file after any queued save; no error when absent. */
  async delete(sessionId: string): Promise<void> {
    this.files.assertOpen();
    await this.files.remove(sessionId);
  }

  /** Ids of every session with a snapshot file; temp files and foreign names are ignored. */
  async list(): Promise<string[]> {
    this.files.assertOpen();
    return this.files.ids();
  }

  /** True when the directory exists and is readable and writable. */
  async ping(): Promise<boolean> {
    return this.files.ping();
  }

  /** Wait for queued saves and deletes to finish, then refuse further use. */
  async close(): Promise<void> {
    await this.files.close();
  }
}
