import type { HttpTransport } from '../../src/client/index.js';
import type { AttachmentRef } from '../../src/protocol/attachments.js';
import { imageDataUrl, isImageType } from './attachment-api.js';
import { el } from './el.js';
import { errorText } from './format.js';

/**
 * The attachments of a transcript message: an image as a thumbnail (its bytes fetched with the token and
 * shown as a data: URL, once per attachment), a text file as a chip with its name.
 */
export class AttachmentThumbs {
  private readonly images = new Map<string, Promise<string>>();

  constructor(
    private readonly http: HttpTransport,
    private readonly sessionId: string,
  ) {}

  /** The row of a message's attachments. */
  view(refs: readonly AttachmentRef[]): HTMLElement {
    return el('div', { class: 'attachments' }, ...refs.map((ref) => this.item(ref)));
  }

  private item(ref: AttachmentRef): HTMLElement {
    if (ref.type !== 'image' || !isImageType(ref.mediaType))
      return el(
        'span',
        { class: 'chip attachment-file', 'data-attachment-id': ref.attachmentId, title: ref.mediaType },
        `📄 ${ref.name ?? ref.attachmentId}`,
      );
    const img = el('img', {
      class: 'attachment-thumb',
      alt: `Image attachment (${ref.mediaType}, ${ref.bytes} bytes)`,
      'data-attachment-id': ref.attachmentId,
    });
    const frame = el('span', { class: 'attachment-frame' }, img);
    let url = this.images.get(ref.attachmentId);
    if (!url) {
      url = imageDataUrl(this.http, this.sessionId, ref);
      this.images.set(ref.attachmentId, url);
    }
    url.then(
      (src) => {
        img.src = src;
      },
      (error: unknown) => {
        this.images.delete(ref.attachmentId);
        frame.replaceChildren(
          el('span', { class: 'chip chip-fail attachment-missing' }, `image unavailable: ${errorText(error)}`),
        );
      },
    );
    return frame;
  }
}
