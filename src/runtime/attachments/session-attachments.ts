import { randomBytes } from 'node:crypto';
import { CodeError } from '../../errors.js';
import type { AttachmentRef, RunAttachment } from '../../protocol/attachments.js';
import type { SessionKey } from '../../stores/session-key.js';
import { sha256Digest } from '../evidence/evidence-binding.js';
import type { AttachmentStore, StoredAttachment, ToolImageStore } from '../ports/attachment-store.js';
import type { AttachmentRoom } from './counted-attachment-store.js';
import { checkAttachment, decodeBase64 } from './check-attachment.js';

/** The bounds of attachments (limits.maxAttachmentBytes, limits.maxAttachmentsPerSession). */
export interface AttachmentLimits {
  readonly maxAttachmentBytes: number;
  readonly maxAttachmentsPerSession: number;
}

/** What a model accepts, for the check of a run's image parts. */
export interface AttachmentModel {
  readonly id: string;
  readonly acceptsImages: boolean;
}

/** A 413 naming limits.maxAttachmentBytes. */
export function attachmentTooLarge(field: string, bytes: number, maxBytes: number): CodeError {
  return new CodeError(
    'PAYLOAD_TOO_LARGE',
    `${field}: ${bytes} bytes exceed limits.maxAttachmentBytes (${maxBytes} bytes)`,
    { field, limit: 'limits.maxAttachmentBytes', maxBytes, bytes },
  );
}

/**
 * The attachments of sessions over their store: uploads, the parts of a run (checked whole before any is
 * stored), and reads. Every operation is addressed by the session's key, so an id of another session (or
 * tenant) is unknown, the same 404 as an id that never existed.
 */
export class SessionAttachments implements ToolImageStore {
  constructor(
    readonly store: AttachmentStore,
    private readonly limits: AttachmentLimits,
    /** The tenant's stored-bytes quota over the store (absent: not counted), checked for a run's parts at once. */
    private readonly room?: AttachmentRoom,
  ) {}

  /** limits.maxAttachmentBytes. */
  get maxBytes(): number {
    return this.limits.maxAttachmentBytes;
  }

  /** Store an image a tool returns (its bytes already checked by magic bytes): bounded and counted like an upload. */
  async storeImage(session: SessionKey, mediaType: string, name: string, data: Buffer): Promise<AttachmentRef> {
    if (data.length > this.limits.maxAttachmentBytes)
      throw attachmentTooLarge('image', data.length, this.limits.maxAttachmentBytes);
    const checked = checkAttachment(mediaType, data, 'image', 'image');
    const ref = newRef('image', checked.mediaType, name, data);
    await this.put(session, ref, data);
    return ref;
  }

  /** Check and store one uploaded attachment (`name` makes a text file; images need none). */
  async upload(session: SessionKey, declared: string, name: string | undefined, data: Buffer): Promise<AttachmentRef> {
    if (data.length > this.limits.maxAttachmentBytes)
      throw attachmentTooLarge('body', data.length, this.limits.maxAttachmentBytes);
    const checked = checkAttachment(declared, data, 'headers.content-type');
    if (checked.type === 'file' && name === undefined)
      throw new CodeError(
        'VALIDATION_ERROR',
        'query.name: a text file needs a name (the name query or X-Attachment-Name header)',
        {
          field: 'name',
        },
      );
    const ref = newRef(checked.type, checked.mediaType, checked.type === 'file' ? name : undefined, data);
    await this.put(session, ref, data);
    return ref;
  }

  /**
   * The references of a run's parts: every part checked (base64, size, type, magic bytes, the model's
   * modalities, uploaded ids of this session) before any inline part is stored; a store failure removes
   * the parts this call stored. Answers the references and the ids this call created. `fields` names the
   * parts in errors (default `body.attachments.N`; the AG-UI and ACP adapters name their own content parts).
   */
  async resolveRun(
    session: SessionKey,
    parts: readonly RunAttachment[],
    model: AttachmentModel,
    fields?: readonly string[],
  ): Promise<{ refs: AttachmentRef[]; created: string[] }> {
    const pending: Array<{ ref: AttachmentRef; data?: Buffer }> = [];
    for (const [index, part] of parts.entries()) {
      const field = fields?.[index] ?? `body.attachments.${index}`;
      if (part.type === 'image' && !model.acceptsImages)
        throw new CodeError(
          'VALIDATION_ERROR',
          `${field}: model "${model.id}" does not accept images (its model block's modalities.input has no "image")`,
          { field, model: model.id },
        );
      if (part.attachmentId !== undefined) {
        const stored = await this.store.get(session, part.attachmentId);
        if (stored === undefined)
          throw new CodeError(
            'NOT_FOUND',
            `${field}.attachmentId: no attachment "${part.attachmentId}" in this session`,
            {
              field: `${field}.attachmentId`,
            },
          );
        if (stored.ref.type !== part.type)
          throw new CodeError(
            'VALIDATION_ERROR',
            `${field}.type: attachment "${part.attachmentId}" is a ${stored.ref.type}`,
            {
              field: `${field}.type`,
            },
          );
        pending.push({ ref: stored.ref });
        continue;
      }
      // Decoded size is about 3/4 of the text: refuse a far too long text before decoding it.
      const text = part.data ?? '';
      if (Math.floor((text.length * 3) / 4) > this.limits.maxAttachmentBytes + 3)
        throw attachmentTooLarge(`${field}.data`, Math.floor((text.length * 3) / 4), this.limits.maxAttachmentBytes);
      const data = decodeBase64(text, `${field}.data`);
      if (data.length > this.limits.maxAttachmentBytes)
        throw attachmentTooLarge(`${field}.data`, data.length, this.limits.maxAttachmentBytes);
      const checked = checkAttachment(part.mediaType, data, `${field}.mediaType`, part.type);
      pending.push({
        ref: newRef(part.type, checked.mediaType, part.type === 'file' ? part.name : undefined, data),
        data,
      });
    }
    // The tenant's stored bytes take every inline part, or none of them.
    const inline = pending.reduce((sum, entry) => sum + (entry.data?.length ?? 0), 0);
    if (inline > 0) await this.room?.assertRoom(session, inline);
    const created: string[] = [];
    try {
      for (const entry of pending) {
        if (entry.data === undefined) continue;
        await this.put(session, entry.ref, entry.data);
        created.push(entry.ref.attachmentId);
      }
    } catch (error) {
      await this.forget(session, created);
      throw error;
    }
    return { refs: pending.map((entry) => entry.ref), created };
  }

  /** Remove attachments a refused request stored (best effort). */
  async forget(session: SessionKey, ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.store.delete(session, id).catch(() => undefined);
  }

  /** The attachment, or 404 NOT_FOUND (unknown here, another session's, or not an id at all). */
  async get(session: SessionKey, attachmentId: string): Promise<StoredAttachment> {
    const found = await this.store.get(session, attachmentId);
    if (found === undefined)
      throw new CodeError('NOT_FOUND', `no attachment "${attachmentId}" in this session`, { attachmentId });
    return found;
  }

  private async put(session: SessionKey, ref: AttachmentRef, data: Buffer): Promise<void> {
    const max = this.limits.maxAttachmentsPerSession;
    if (!(await this.store.put(session, ref, data, max)))
      throw new CodeError(
        'PAYLOAD_TOO_LARGE',
        `the session holds ${max} attachments, limits.maxAttachmentsPerSession`,
        { limit: 'limits.maxAttachmentsPerSession', maxAttachments: max },
      );
  }
}

function newRef(type: 'image' | 'file', mediaType: string, name: string | undefined, data: Buffer): AttachmentRef {
  return {
    attachmentId: `att_${randomBytes(16).toString('hex')}`,
    type,
    mediaType,
    ...(name !== undefined ? { name } : {}),
    bytes: data.length,
    sha256: sha256Digest(data),
  };
}
