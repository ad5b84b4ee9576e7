import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, open, readdir, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { CodeError } from '../errors.js';
import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { parseSnapshot } from './parse-snapshot.js';
import type { SessionStore } from './session-store.js';

/** Session ids the file store accepts: the same rule as SessionOptions.sessionId. */
export const FILE_STORE_SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

const SNAPSHOT_SUFFIX = '.json';
// Temp names start with "." and end with ".tmp"; a valid id starts with a letter or digit, so a temp
// file can never be mistaken for (or collide with) a snapshot file.
const TEMP_FILE = /^\..+\.tmp$/;

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
  private readonly locks = new Map<string, Promise<void>>();
  private initialized: Promise<void> | undefined;
  private closed = false;

  constructor(options: FileSessionStoreOptions) {
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

  /** Atomically replace the session's file with this generation; saves of one session apply in call order. */
  async save(snapshot: SessionSnapshotV1): Promise<void> {
    this.assertOpen();
    // Validate and serialise at call time: later caller mutations cannot leak into this generation.
    const parsed = parseSnapshot(snapshot, 'the snapshot being saved');
    const sessionId = parsed.session.id;
    if (!FILE_STORE_SESSION_ID.test(sessionId)) {
      throw new CodeError('SNAPSHOT_INVALID', `session id ${JSON.stringify(sessionId)} is not a valid session id`, {
        sessionId,
      });
    }
    const data = JSON.stringify(parsed);
    await this.init();
    await this.withLock(sessionId, () => this.writeAtomically(sessionId, data));
  }

  /** Read and validate the session's file; undefined when it (or a valid id for it) does not exist. */
  async load(sessionId: string): Promise<SessionSnapshotV1 | undefined> {
    this.assertOpen();
    if (!FILE_STORE_SESSION_ID.test(sessionId)) return undefined;
    await this.init();
    const file = this.fileFor(sessionId);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw persistenceError(`failed to read the snapshot of session ${sessionId}`, sessionId, error);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'parse error';
      throw new CodeError('SNAPSHOT_INVALID', `snapshot file ${file} is not valid JSON: ${reason}`, { sessionId, file });
    }
    const snapshot = parseSnapshot(raw, `snapshot file ${file}`);
    if (snapshot.session.id !== sessionId) {
      throw new CodeError(
        'SNAPSHOT_INVALID',
        `snapshot file ${file} holds session ${JSON.stringify(snapshot.session.id)}, not ${JSON.stringify(sessionId)}`,
        { sessionId, file },
      );
    }
    return snapshot;
  }

  /** Remove the session's file after any queued save; no error when absent. */
  async delete(sessionId: string): Promise<void> {
    this.assertOpen();
    if (!FILE_STORE_SESSION_ID.test(sessionId)) return;
    await this.init();
    await this.withLock(sessionId, async () => {
      try {
        await unlink(this.fileFor(sessionId));
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return;
        throw persistenceError(`failed to delete the snapshot of session ${sessionId}`, sessionId, error);
      }
      await this.syncDir(sessionId);
    });
  }

  /** Ids of every session with a snapshot file; temp files and foreign names are ignored. */
  async list(): Promise<string[]> {
    this.assertOpen();
    await this.init();
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      throw persistenceError('failed to list the file session store', undefined, error);
    }
    return names
      .filter((name) => name.endsWith(SNAPSHOT_SUFFIX))
      .map((name) => name.slice(0, -SNAPSHOT_SUFFIX.length))
      .filter((id) => FILE_STORE_SESSION_ID.test(id))
      .sort();
  }

  /** True when the directory exists and is readable and writable. */
  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      await this.init();
      await access(this.dir, fsConstants.R_OK | fsConstants.W_OK | fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
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
      throw persistenceError('failed to open the file session store directory', undefined, error);
    }
  }

  private async writeAtomically(sessionId: string, data: string): Promise<void> {
    const target = this.fileFor(sessionId);
    const temp = path.join(this.dir, `.${sessionId}.${randomBytes(8).toString('hex')}.tmp`);
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
      throw persistenceError(`failed to save the snapshot of session ${sessionId}`, sessionId, error);
    }
    await this.syncDir(sessionId);
  }

  // Makes the rename (or unlink) itself durable: without it a power loss can bring back the old file.
  private async syncDir(sessionId: string): Promise<void> {
    let handle: FileHandle | undefined;
    try {
      handle = await open(this.dir, 'r');
      await handle.sync();
    } catch (error) {
      // Some file systems cannot fsync a directory; the rename is still atomic there.
      if (errorCode(error) === 'EINVAL' || errorCode(error) === 'EISDIR') return;
      throw persistenceError(`failed to make the snapshot of session ${sessionId} durable`, sessionId, error);
    } finally {
      await handle?.close();
    }
  }

  private fileFor(sessionId: string): string {
    const file = path.join(this.dir, `${sessionId}${SNAPSHOT_SUFFIX}`);
    // Belt and braces over the id pattern: a snapshot file is always a direct child of dir.
    if (path.dirname(file) !== this.dir || path.basename(file) !== `${sessionId}${SNAPSHOT_SUFFIX}`) {
      throw new CodeError('SNAPSHOT_INVALID', `session id ${JSON.stringify(sessionId)} is not a valid session id`, { sessionId });
    }
    return file;
  }

  private assertOpen(): void {
    if (this.closed) throw new CodeError('PERSISTENCE_FAILED', 'the file session store is closed');
  }

  private async withLock(sessionId: string, operation: () => Promise<void>): Promise<void> {
    const previous = this.locks.get(sessionId) ?? Promise.resolve();
    const current = previous.then(operation);
    // The chain continues past a failed operation; the failure still reaches this caller.
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(sessionId, tail);
    try {
      await current;
    } finally {
      if (this.locks.get(sessionId) === tail) this.locks.delete(sessionId);
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

// Names the session and the errno code only: no paths from the OS message, no stack.
function persistenceError(message: string, sessionId: string | undefined, cause: unknown): CodeError {
  if (cause instanceof CodeError) return cause;
  const code = errorCode(cause);
  return new CodeError('PERSISTENCE_FAILED', code === undefined ? message : `${message} (${code})`, {
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(code === undefined ? {} : { cause: code }),
  });
}
