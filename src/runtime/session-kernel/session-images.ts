import type { AttachmentRef } from '../../protocol/attachments.js';
import type { AttachmentReader } from '../attachments/attachment-parts.js';
import type { AttachmentStore, StoredAttachment, ToolImageStore } from '../ports/attachment-store.js';
import type { ToolImages } from '../tools/define-tool.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';

/**
 * A session's attachments as its tools and provider requests see them: one object with prototype accessors
 * (no closures or getters in object literals: a session's heap is bounded, docs/architecture.md), the images
 * `read` returns (ToolImages) and the stored attachments a request's messages name (AttachmentReader).
 */
export class SessionImages implements ToolImages, AttachmentReader {
  constructor(
    private readonly images: ToolImageStore,
    private readonly attachments: AttachmentStore | undefined,
    private readonly sessionKey: SessionKey,
    private readonly config: ResolvedSessionConfig,
  ) {}

  /** The session's current model takes images (`/model` may switch it). */
  get accepted(): boolean {
    return this.config.model.acceptsImages === true;
  }

  get maxBytes(): number {
    return this.images.maxBytes;
  }

  store(mediaType: string, name: string, data: Buffer): Promise<AttachmentRef> {
    return this.images.storeImage(this.sessionKey, mediaType, name, data);
  }

  read(attachmentId: string): Promise<StoredAttachment | undefined> {
    return this.attachments ? this.attachments.get(this.sessionKey, attachmentId) : Promise.resolve(undefined);
  }
}
