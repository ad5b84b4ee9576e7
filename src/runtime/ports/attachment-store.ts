import type { AttachmentRef } from '../../protocol/attachments.js';
import type { SessionKey } from '../../stores/session-key.js';

/** One stored attachment: its reference and its bytes. */
export interface StoredAttachment {
  readonly ref: AttachmentRef;
  readonly data: Buffer;
}

/**
 * Where a session's attachments live (memory, files beside the sessions, or Redis under the session's hash
 * tag), keyed by the session's SessionKey and the attachment id: an id resolves only in its own session.
 */
export interface AttachmentStore {
  /** "memory", "file" or "redis". */
  readonly kind: string;
  /**
   * Store one attachment unless the session holds `maxCount` already (then false, nothing stored); the
   * count check and the write are one step, so concurrent puts never pass the bound.
   */
  put(session: SessionKey, ref: AttachmentRef, data: Buffer, maxCount: number): Promise<boolean>;
  /** The attachment with its bytes, or undefined (an id of another session is undefined too). */
  get(session: SessionKey, attachmentId: string): Promise<StoredAttachment | undefined>;
  /** The session's attachment references (no bytes), oldest first. */
  list(session: SessionKey): Promise<AttachmentRef[]>;
  /** Remove one attachment; no error when absent. */
  delete(session: SessionKey, attachmentId: string): Promise<void>;
  /** Remove every attachment of the session (purge, delete, retention). */
  deleteSession(session: SessionKey): Promise<void>;
  /** Release resources. */
  close(): Promise<void>;
}

/** Stores an image a tool returns to the model (SessionAttachments.storeImage): bounded and counted like an upload. */
export interface ToolImageStore {
  /** limits.maxAttachmentBytes. */
  readonly maxBytes: number;
  /** Store the image as an attachment of the session: its reference, or the CodeError of a bound (count, quota). */
  storeImage(session: SessionKey, mediaType: string, name: string, data: Buffer): Promise<AttachmentRef>;
}
