import { constants } from 'node:fs';
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { ATTACHMENT_ID, AttachmentRefSchema, type AttachmentRef } from '../protocol/attachments.js';
import type { AttachmentStore, StoredAttachment } from '../runtime/ports/attachment-store.js';
import { syncDirectory, writeFileAtomically } from './atomic-file.js';
import { errorCode, ignoreMissing, persistenceError } from './fs-errors.js';
import { inHeld, openHeldChild, readHeldFile, removeHeldEntry } from './held-directory-files.js';
import { KeyedLock } from './keyed-lock.js';
import { tenantPartOf, type SessionKey } from './session-key.js';

const META = /^(att_[0-9a-f]{32})\.json$/;

/**
 * AttachmentStore on the local file system: `<dir>/<tenant>/<session id>/<attachment id>.bin` (the bytes)
 * and `.json` (the reference, written last: an attachment exists once its reference does), both written
 * atomically (temp file, fsync, rename, directory fsync). The key parts are encoded (no "/", no leading
 * "."), and an id is used as a name only once it matches `att_<32 hex>`. Confined by what was opened: the
 * tenant's and the session's directories are opened one below the other without following a symlink, and
 * every file is created, read, renamed and removed through the session directory's descriptor, so a
 * directory or file swapped for a symlink (or a hard link) is never written through nor served.
 */
export class FileAttachmentStore implements AttachmentStore {
  readonly kind = 'file';
  private readonly lock = new KeyedLock();

  constructor(
    /** The directory of the tenants' directories (created 0o700 on first write). */
    readonly dir: string,
  ) {}

  /** Count and write under the session's lock, so concurrent puts never pass maxCount. */
  put(session: SessionKey, ref: AttachmentRef, data: Buffer, maxCount: number): Promise<boolean> {
    return this.lock.run(session, async () => {
      const details = { attachmentId: ref.attachmentId };
      const dir = await this.heldSession(session, true, 'failed to write an attachment', details);
      if (dir === undefined) throw persistenceError('failed to write an attachment', details, undefined);
      try {
        if ((await this.ids(dir)).length >= maxCount) return false;
        const bin = inHeld(dir, `${ref.attachmentId}.bin`);
        try {
          await writeFileAtomically(inHeld(dir), bin, data, 'attachment');
          await writeFileAtomically(
            inHeld(dir),
            inHeld(dir, `${ref.attachmentId}.json`),
            JSON.stringify(ref),
            'attachment',
          );
          await syncDirectory(inHeld(dir));
        } catch (error) {
          await unlink(bin).catch(ignoreMissing);
          throw persistenceError('failed to write an attachment', details, error);
        }
        return true;
      } finally {
        await dir.close();
      }
    });
  }

  /** The attachment with its bytes, or undefined (a malformed id is undefined, never a name). */
  async get(session: SessionKey, attachmentId: string): Promise<StoredAttachment | undefined> {
    if (!ATTACHMENT_ID.test(attachmentId)) return undefined;
    const details = { attachmentId };
    const dir = await this.heldSession(session, false, 'failed to read an attachment', details);
    if (dir === undefined) return undefined;
    try {
      const found = await this.readRef(dir, attachmentId);
      if (found === undefined) return undefined;
      const bytes = await readHeldFile(dir, `${attachmentId}.bin`, found.ref.bytes);
      return bytes === undefined ? undefined : { ref: found.ref, data: bytes.data };
    } catch (error) {
      throw persistenceError('failed to read an attachment', details, error);
    } finally {
      await dir.close();
    }
  }

  /** The session's references, oldest first (by file time, then id). */
  async list(session: SessionKey): Promise<AttachmentRef[]> {
    const dir = await this.heldSession(session, false, 'failed to list attachments', {});
    if (dir === undefined) return [];
    try {
      const found: Array<{ ref: AttachmentRef; at: number }> = [];
      for (const id of await this.ids(dir)) {
        const entry = await this.readRef(dir, id);
        if (entry !== undefined) found.push(entry);
      }
      return found
        .sort((a, b) => a.at - b.at || a.ref.attachmentId.localeCompare(b.ref.attachmentId))
        .map((f) => f.ref);
    } catch (error) {
      throw persistenceError('failed to list attachments', {}, error);
    } finally {
      await dir.close();
    }
  }

  /** Remove one attachment (reference first). */
  delete(session: SessionKey, attachmentId: string): Promise<void> {
    if (!ATTACHMENT_ID.test(attachmentId)) return Promise.resolve();
    return this.lock.run(session, async () => {
      const details = { attachmentId };
      const dir = await this.heldSession(session, false, 'failed to delete an attachment', details);
      if (dir === undefined) return;
      try {
        await unlink(inHeld(dir, `${attachmentId}.json`)).catch(ignoreMissing);
        await unlink(inHeld(dir, `${attachmentId}.bin`)).catch(ignoreMissing);
      } catch (error) {
        throw persistenceError('failed to delete an attachment', details, error);
      } finally {
        await dir.close();
      }
    });
  }

  /** Remove the session's directory (a symlink planted in its place is removed itself, never followed). */
  deleteSession(session: SessionKey): Promise<void> {
    return this.lock.run(session, async () => {
      const root = await this.openRoot(false).catch((error: unknown) => {
        throw persistenceError('failed to delete attachments', {}, error);
      });
      if (root === undefined) return;
      let tenant: FileHandle | undefined;
      try {
        tenant = await openHeldChild(root, tenantPartOf(session), false);
        // Not a directory this store made (a symlink, a file): nothing of this session lies behind it.
        if (tenant !== undefined) await removeHeldEntry(tenant, session.slice(session.indexOf('/') + 1));
      } catch (error) {
        if (errorCode(error) === 'ELOOP' || errorCode(error) === 'ENOTDIR') return;
        throw persistenceError('failed to delete attachments', {}, error);
      } finally {
        await tenant?.close();
        await root.close();
      }
    });
  }

  /** Wait for queued writes. */
  async close(): Promise<void> {
    await this.lock.drain();
  }

  /** The store's directory (the operator's path, followed as configured), made on the first write. */
  private async openRoot(create: boolean): Promise<FileHandle | undefined> {
    const flags = constants.O_RDONLY | constants.O_DIRECTORY;
    try {
      return await open(this.dir, flags);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      if (!create) return undefined;
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    return open(this.dir, flags);
  }

  /**
   * The session's directory, held open: the tenant's directory opened from the store's, the session's from the
   * tenant's, neither through a symlink (a symlink there is PERSISTENCE_FAILED, ELOOP). Undefined when missing.
   */
  private async heldSession(
    session: SessionKey,
    create: boolean,
    message: string,
    details: Record<string, unknown>,
  ): Promise<FileHandle | undefined> {
    let root: FileHandle | undefined;
    let tenant: FileHandle | undefined;
    try {
      root = await this.openRoot(create);
      tenant = root === undefined ? undefined : await openHeldChild(root, tenantPartOf(session), create);
      return tenant === undefined
        ? undefined
        : await openHeldChild(tenant, session.slice(session.indexOf('/') + 1), create);
    } catch (error) {
      throw persistenceError(message, details, error);
    } finally {
      await tenant?.close();
      await root?.close();
    }
  }

  private async ids(dir: FileHandle): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(inHeld(dir));
    } catch (error) {
      throw persistenceError('failed to list attachments', {}, error);
    }
    return names.flatMap((name) => {
      const match = META.exec(name);
      return match?.[1] !== undefined ? [match[1]] : [];
    });
  }

  /** The reference `<id>.json` of the held directory, when it is a file this store wrote and names this id. */
  private async readRef(
    dir: FileHandle,
    attachmentId: string,
  ): Promise<{ ref: AttachmentRef; at: number } | undefined> {
    const file = await readHeldFile(dir, `${attachmentId}.json`);
    if (file === undefined) return undefined;
    let raw: unknown;
    try {
      raw = JSON.parse(file.data.toString('utf8'));
    } catch {
      return undefined;
    }
    const parsed = AttachmentRefSchema.safeParse(raw);
    return parsed.success && parsed.data.attachmentId === attachmentId
      ? { ref: parsed.data, at: file.mtimeMs }
      : undefined;
  }
}
