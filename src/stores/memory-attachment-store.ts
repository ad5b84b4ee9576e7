import type { AttachmentRef } from '../protocol/attachments.js';
import type { AttachmentStore, StoredAttachment } from '../runtime/ports/attachment-store.js';
import type { SessionKey } from './session-key.js';

/** AttachmentStore in process memory: one map of attachments per session key. */
export class MemoryAttachmentStore implements AttachmentStore {
  readonly kind = 'memory';
  private readonly sessions = new Map<SessionKey, Map<string, StoredAttachment>>();

  /** Store a copy of the bytes unless the session holds maxCount already (synchronous: no race). */
  async put(session: SessionKey, ref: AttachmentRef, data: Buffer, maxCount: number): Promise<boolean> {
    let held = this.sessions.get(session);
    if ((held?.size ?? 0) >= maxCount) return false;
    if (held === undefined) {
      held = new Map();
      this.sessions.set(session, held);
    }
    held.set(ref.attachmentId, { ref: { ...ref }, data: Buffer.from(data) });
    return true;
  }

  /** The attachment, or undefined. */
  async get(session: SessionKey, attachmentId: string): Promise<StoredAttachment | undefined> {
    const found = this.sessions.get(session)?.get(attachmentId);
    return found === undefined ? undefined : { ref: { ...found.ref }, data: found.data };
  }

  /** The session's references, oldest first. */
  async list(session: SessionKey): Promise<AttachmentRef[]> {
    return [...(this.sessions.get(session)?.values() ?? [])].map((entry) => ({ ...entry.ref }));
  }

  /** Remove one attachment. */
  async delete(session: SessionKey, attachmentId: string): Promise<void> {
    const held = this.sessions.get(session);
    held?.delete(attachmentId);
    if (held?.size === 0) this.sessions.delete(session);
  }

  /** Remove the session's attachments. */
  async deleteSession(session: SessionKey): Promise<void> {
    this.sessions.delete(session);
  }

  /** Drop everything. */
  async close(): Promise<void> {
    this.sessions.clear();
  }
}
