import type { AttachmentRef } from '../../protocol/attachments.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { LlmContentPart } from '../llm/llm-provider.js';
import type { StoredAttachment } from '../ports/attachment-store.js';

/** How many of the most recent images a provider request carries; older ones become a text placeholder. */
export const IMAGE_WINDOW = 8;
/**
 * How many bytes of text files (the most recent first) a provider request carries, always at least the most
 * recent one; older ones become a text placeholder. 8 MiB of text is past the context window of any model. Without it a run naming one large file 100 times, or many
 * runs naming it again, would build a request of 100 copies (memory for all tenants of the server).
 */
export const TEXT_WINDOW_BYTES = 8 * 1024 * 1024;

/** Reads one attachment of the session (undefined: gone). */
export interface AttachmentReader {
  /** The stored attachment, or undefined when it is no longer stored. */
  read(attachmentId: string): Promise<StoredAttachment | undefined>;
}

function label(ref: AttachmentRef): string {
  return ref.name !== undefined ? `"${ref.name}" (${ref.attachmentId})` : ref.attachmentId;
}

/**
 * The content parts of the messages with attachments, read from the store for one provider call: the text,
 * then each attachment (an image as a `data:` URL, a text file as "<name>:\n<content>"). Only the
 * IMAGE_WINDOW most recent images are sent, and none to a model that does not accept images: the others,
 * and attachments no longer stored, are text placeholders naming them. Answers undefined when no message
 * has attachments.
 */
export async function attachmentParts(
  messages: readonly ChatMessage[],
  read: AttachmentReader,
  acceptsImages: boolean,
): Promise<Map<ChatMessage, LlmContentPart[]> | undefined> {
  let shown = 0;
  let textBytes = 0;
  const windowed = new Set<AttachmentRef>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const refs = messages[i]?.attachments ?? [];
    for (let j = refs.length - 1; j >= 0; j--) {
      const ref = refs[j];
      if (ref?.type === 'image' && acceptsImages && shown < IMAGE_WINDOW) {
        windowed.add(ref);
        shown += 1;
      } else if (ref?.type === 'file' && (textBytes === 0 || textBytes + ref.bytes <= TEXT_WINDOW_BYTES)) {
        windowed.add(ref);
        textBytes += Math.max(ref.bytes, 1);
      }
    }
  }
  // One read (and one text) per attachment however often the context names it.
  const reads = new Map<string, Promise<StoredAttachment | undefined>>();
  const readOnce = (attachmentId: string) => {
    let found = reads.get(attachmentId);
    if (found === undefined) reads.set(attachmentId, (found = read.read(attachmentId)));
    return found;
  };
  let parts: Map<ChatMessage, LlmContentPart[]> | undefined;
  for (const message of messages) {
    if (message.attachments === undefined || message.attachments.length === 0) continue;
    const content: LlmContentPart[] = [{ type: 'text', text: message.content ?? '' }];
    for (const ref of message.attachments) {
      if (ref.type === 'file' && !windowed.has(ref)) {
        content.push({
          type: 'text',
          text: `[file ${label(ref)} (${ref.bytes} bytes) not shown: only the most recent ${TEXT_WINDOW_BYTES / 1048576} MiB of text files stay in the context]`,
        });
        continue;
      }
      if (ref.type === 'image' && !windowed.has(ref)) {
        content.push({
          type: 'text',
          text: acceptsImages
            ? `[image ${label(ref)} (${ref.mediaType}) not shown: only the ${IMAGE_WINDOW} most recent images stay in the context]`
            : `[image ${label(ref)} (${ref.mediaType}) not shown: this model does not accept images]`,
        });
        continue;
      }
      const stored = await readOnce(ref.attachmentId);
      if (stored === undefined) {
        content.push({ type: 'text', text: `[attachment ${label(ref)} is no longer stored]` });
        continue;
      }
      content.push(
        ref.type === 'image'
          ? { type: 'image_url', image_url: { url: `data:${ref.mediaType};base64,${stored.data.toString('base64')}` } }
          : { type: 'text', text: `${ref.name ?? ref.attachmentId}:\n${stored.data.toString('utf8')}` },
      );
    }
    (parts ??= new Map()).set(message, content);
  }
  return parts;
}
