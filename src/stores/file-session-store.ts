import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { persistenceError } from './fs-errors.js';
import { JsonFileDirectory } from './json-file-directory.js';
import { parseSnapshot } from './parse-snapshot.js';
import {
  encodeKeyPart,
  sessionIdOf,
  sessionKey,
  sessionKeyOf,
  tenantIdOf,
  tenantPartOf,
  type SessionKey,
} from './session-key.js';
import type { SessionStore } from './session-store.js';

/** Session ids the file store accepts: the same rule as SessionOptions.sessionId. */
export const FILE_STORE_SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** An encoded key part (see encodeKeyPart) as a file or directory name: never starts with ".", so never a temp file. */
export const FILE_STORE_KEY_PART = /^(?:%|[A-Za-z0-9_%-][A-Za-z0-9._%-]{0,249})$/;

/** Options for FileSessionStore. */
export interface FileSessionStoreOptions {
  /** Directory holding `<tenant>/<session id>.json` per session (both parts encoded); created with mode 0o700. */
  dir: string;
}

/** What the startup migration of the old layout did. */
export interface FileStoreMigration {
  /** Old `<session id>.json` files moved to `<tenant>/<session id>.json`. */
  moved: number;
  /** Old files left in place because they are not valid snapshots (or name another session). */
  skipped: string[];
}

/**
 * SessionStore on the local file system: one JSON file `<dir>/<tenant>/<session id>.json` per session
 * (session ids are per tenant), each save a complete generation written to a temp file, fsynced, renamed
 * over the target and made durable with a directory fsync. init() moves files of the old, tenant-less
 * layout (`<dir>/<session id>.json`) to their tenant's directory, idempotently.
 */
export class FileSessionStore implements SessionStore {
  readonly kind = 'file';
  /** Absolute directory of the tenant directories. */
  readonly dir: string;
  /** The top directory itself (old-layout files, temp files of a crashed migration). */
  private readonly root: JsonFileDirectory;
  /** One directory per tenant (by encoded tenant id), opened on first use. */
  private readonly tenants = new Map<string, JsonFileDirectory>();
  private initialized: Promise<FileStoreMigration> | undefined;

  constructor(options: FileSessionStoreOptions) {
    this.root = new JsonFileDirectory({ ...directoryOptions(options.dir), idPattern: FILE_STORE_SESSION_ID });
    this.dir = this.root.dir;
  }

  /**
   * Create the directory (0o700), remove temp files left by a crashed writer (in it and in every tenant's
   * directory) and move old-layout files to
   * their tenant's directory; idempotent, and run implicitly by every other operation. Only one process
   * may own a directory at a time.
   */
  async init(): Promise<FileStoreMigration> {
    this.initialized ??= this.root
      .init()
      .then(() => this.migrate())
      .catch((error: unknown) => {
        // A failed start (e.g. EACCES) is retried on the next call rather than remembered forever.
        this.initialized = undefined;
        throw error;
      });
    return this.initialized;
  }

  /** Atomically replace the session's file with this generation; saves of one session apply in call order. */
  async save(snapshot: SessionSnapshotV1): Promise<number> {
    this.root.assertOpen();
    // Validate and serialise at call time: later caller mutations cannot leak into this generation.
    const parsed = parseSnapshot(snapshot, 'the snapshot being saved');
    const text = JSON.stringify(parsed);
    const key = sessionKeyOf(parsed);
    await this.init();
    await this.tenantDir(tenantPartOf(key)).write(encodeKeyPart(parsed.session.id), text);
    return Buffer.byteLength(text, 'utf8');
  }

  /** Read and validate the session's file; undefined when it (or a valid key for it) does not exist. */
  async load(key: SessionKey): Promise<SessionSnapshotV1 | undefined> {
    this.root.assertOpen();
    await this.init();
    const tenant = tenantPartOf(key);
    if (!FILE_STORE_KEY_PART.test(tenant)) return undefined;
    const snapshot = await this.tenantDir(tenant).read(key.slice(tenant.length + 1), parseSnapshot, (value) =>
      encodeKeyPart(value.session.id),
    );
    // A file copied into another tenant's directory is not that tenant's session.
    return snapshot !== undefined && snapshot.session.ownerTenantId === tenantIdOf(key) ? snapshot : undefined;
  }

  /** Remove the session's file after any queued save; no error when absent. */
  async delete(key: SessionKey): Promise<void> {
    this.root.assertOpen();
    await this.init();
    const tenant = tenantPartOf(key);
    if (!FILE_STORE_KEY_PART.test(tenant)) return;
    await this.tenantDir(tenant).remove(key.slice(tenant.length + 1));
  }

  /** Keys of every session with a snapshot file (of one tenant when given), sorted; temp files and foreign names are ignored. */
  async list(tenantId?: string): Promise<SessionKey[]> {
    this.root.assertOpen();
    await this.init();
    const tenants = tenantId === undefined ? await this.tenantDirNames() : [encodeKeyPart(tenantId)];
    const keys: SessionKey[] = [];
    for (const tenant of tenants) {
      if (!FILE_STORE_KEY_PART.test(tenant)) continue;
      for (const id of await this.tenantDir(tenant).ids()) keys.push(`${tenant}/${id}` as SessionKey);
    }
    return keys.sort();
  }

  /** True when the directory exists and is readable and writable. */
  async ping(): Promise<boolean> {
    return this.root.ping();
  }

  /** Wait for queued saves and deletes to finish, then refuse further use. */
  async close(): Promise<void> {
    await Promise.all([this.root.close(), ...[...this.tenants.values()].map((dir) => dir.close())]);
  }

  private tenantDir(tenant: string): JsonFileDirectory {
    let dir = this.tenants.get(tenant);
    if (dir === undefined) {
      dir = new JsonFileDirectory({
        ...directoryOptions(path.join(this.dir, tenant)),
        idPattern: FILE_STORE_KEY_PART,
        createOnWrite: true,
      });
      this.tenants.set(tenant, dir);
    }
    return dir;
  }

  private async tenantDirNames(): Promise<string[]> {
    try {
      return (await readdir(this.dir, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory() && FILE_STORE_KEY_PART.test(entry.name))
        .map((entry) => entry.name);
    } catch (error) {
      throw persistenceError('failed to list the file session store', {}, error);
    }
  }

  // The old layout kept `<session id>.json` at the top: each valid file moves to its tenant's directory
  // (kept when that directory already holds the same or a newer generation), then the old file goes.
  private async migrate(): Promise<FileStoreMigration> {
    let entries;
    try {
      entries = await readdir(this.dir, { withFileTypes: true });
    } catch (error) {
      throw persistenceError('failed to list the file session store', {}, error);
    }
    const result: FileStoreMigration = { moved: 0, skipped: [] };
    // Temp files a crashed writer left in a tenant's directory go now, not on the first write there.
    for (const entry of entries)
      if (entry.isDirectory() && FILE_STORE_KEY_PART.test(entry.name)) await this.tenantDir(entry.name).init();
    for (const entry of entries) {
      if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
      const id = entry.name.slice(0, -'.json'.length);
      if (!FILE_STORE_SESSION_ID.test(id)) continue;
      let legacy: SessionSnapshotV1;
      try {
        legacy = parseSnapshot(
          JSON.parse(await readFile(path.join(this.dir, entry.name), 'utf8')),
          `snapshot file ${entry.name}`,
        );
        if (legacy.session.id !== id) throw new Error('holds another session');
      } catch {
        // Not ours to judge: an unreadable old file stays where it is, ignored (load and list never see it).
        result.skipped.push(entry.name);
        continue;
      }
      const key = sessionKey(legacy.session.ownerTenantId, legacy.session.id);
      const target = this.tenantDir(tenantPartOf(key));
      const current = await target
        .read(encodeKeyPart(sessionIdOf(key)), parseSnapshot, (value) => encodeKeyPart(value.session.id))
        .catch(() => undefined);
      if (current === undefined || current.generation < legacy.generation)
        await target.write(encodeKeyPart(legacy.session.id), JSON.stringify(legacy));
      await this.root.remove(id);
      result.moved += 1;
    }
    return result;
  }
}

function directoryOptions(dir: string) {
  return { dir, storeName: 'file session store', record: 'snapshot', owner: 'session', idKey: 'sessionId' };
}
