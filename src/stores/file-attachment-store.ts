import { mkdir, readFile, readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ATTACHMENT_ID, AttachmentRefSchema, type AttachmentRef } from '../protocol/attachments.js';
import type { AttachmentStore, StoredAttachment } from '../runtime/ports/attachment-store.js';
import { syncDirectory, writeFileAtomically } from './atomic-file.js';
import { errorCode, ignoreMissing, persistenceError } from './fs-errors.js';
import { KeyedLock } from './keyed-lock.js';
import type { SessionKey } from './session-key.js';

const META = /^(att_[0-9a-f]{32})\.json$/;

/**
 * AttachmentStore on the local file system: `<dir>/<tenant>/<session id>/<attachment id>.bin` (the bytes)
 * and `.json` (the reference, written last: an attachment exists once its reference does), both written
 * atomically (temp file, fsync, rename, directory fsync). The key parts are encoded (no "/", no leading
 * "."), and an id is used in a path only once it matches `att_<32 hex>`: no name can leave the directory.
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
      const dir = this.sessionDir(session);
      if ((await this.ids(dir)).length >= maxCount) return false;
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFileAtomically(dir, path.join(dir, `${ref.attachmentId}.bin`), data, 'attachment');
        await writeFileAtomically(dir, path.join(dir, `${ref.attachmentId}.json`), JSON.stringify(ref), 'attachment');
        await syncDirectory(dir);
      } catch (error) {
        await unlink(path.join(dir, `${ref.attachmentId}.bin`)).catch(ignoreMissing);
        throw persistenceError('failed to write an attachment', { attachmentId: ref.attachmentId }, error);
      }
      return true;
    });
  }

  /** The attachment with its bytes, or undefined (a malformed id is undefined, never a path). */
  async get(session: SessionKey, attachmentId: string): Promise<StoredAttachment | undefined> {
    if (!ATTACHMENT_ID.test(attachmentId)) return undefined;
    const dir = this.sessionDir(session);
    const ref = await this.readRef(dir, attachmentId);
    if (ref === undefined) return undefined;
    try {
      return { ref, data: await readFile(path.join(dir, `${attachmentId}.bin`)) };
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw persistenceError('failed to read an attachment', { attachmentId }, error);
    }
  }

  /** The session's references, oldest first (by file time, then id). */
  async list(session: SessionKey): Promise<AttachmentRef[]> {
    const dir = this.sessionDir(session);
    const found: Array<{ ref: AttachmentRef; at: number }> = [];
    for (const id of await this.ids(dir)) {
      const ref = await this.readRef(dir, id);
      if (ref === undefined) continue;
      const at = await stat(path.join(dir, `${id}.json`)).then(
        (s) => s.mtimeMs,
        () => 0,
      );
      found.push({ ref, at });
    }
    return found.sort((a, b) => a.at - b.at || a.ref.attachmentId.localeCompare(b.ref.attachmentId)).map((f) => f.ref);
  }

  /** Remove one attachment (reference first). */
  delete(session: SessionKey, attachmentId: string): Promise<void> {
    if (!ATTACHMENT_ID.test(attachmentId)) return Promise.resolve();
    return this.lock.run(session, async () => {
      const dir = this.sessionDir(session);
      await unlink(path.join(dir, `${attachmentId}.json`)).catch(ignoreMissing);
      await unlink(path.join(dir, `${attachmentId}.bin`)).catch(ignoreMissing);
    });
  }

  /** Remove the session's directory. */
  deleteSession(session: SessionKey): Promise<void> {
    return this.lock.run(session, () => rm(this.sessionDir(session), { recursive: true, force: true }));
  }

  /** Wait for queued writes. */
  async close(): Promise<void> {
    await this.lock.drain();
  }

  private sessionDir(session: SessionKey): string {
    const slash = session.indexOf('/');
    return path.join(this.dir, session.slice(0, slash), session.slice(slash + 1));
  }

  private async ids(dir: string): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw persistenceError('failed to list attachments', {}, error);
    }
    return names.flatMap((name) => {
      const match = META.exec(name);
      return match?.[1] !== undefined ? [match[1]] : [];
    });
  }

  private async readRef(dir: string, attachmentId: string): Promise<AttachmentRef | undefined> {
    let text: string;
    try {
      text = await readFile(path.join(dir, `${attachmentId}.json`), 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw persistenceError('failed to read an attachment', { attachmentId }, error);
    }
    const parsed = AttachmentRefSchema.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.attachmentId === attachmentId ? parsed.data : undefined;
  }
}
