import { CodeError } from '../../../errors.js';
import { sniffImageType } from '../../attachments/check-attachment.js';
import { readDescriptor } from '../../workspace/regular-file.js';
import { toolError, type ToolContext, type ToolResult } from '../define-tool.js';

/** The names of the images `read` returns (the seed's jpg/png/gif/webp); the bytes decide, not the name. */
export const IMAGE_EXTENSION = /\.(png|jpe?g|gif|webp)$/i;

/** What read knows of the opened file when it looks at its first bytes. */
export interface OpenedImageCandidate {
  /** The descriptor the confined walk opened and fstat checked; the only source of the bytes. */
  readonly fd: number;
  readonly size: number;
  /** The path relative to the workspace, as the result names it. */
  readonly relPath: string;
  /** The bytes read so far (from the start of the file), at most the whole file. */
  readonly head: Buffer;
}

/**
 * The rest of the file from the same descriptor, bounded by `maxBytes`: undefined when it holds more (it
 * grew past the bound since fstat). Never opens anything by name.
 */
async function readWhole(
  file: OpenedImageCandidate,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Buffer | undefined> {
  // One byte more than the bound is room to see that the file is larger than it.
  const buffer = Buffer.allocUnsafe(Math.min(Math.max(file.size, file.head.length), maxBytes) + 1);
  file.head.copy(buffer, 0);
  let filled = file.head.length;
  while (filled < buffer.length) {
    signal.throwIfAborted();
    const bytes = await readDescriptor(file.fd, buffer, filled, buffer.length - filled, filled);
    if (bytes === 0) break;
    filled += bytes;
  }
  return filled > maxBytes ? undefined : buffer.subarray(0, filled);
}

/**
 * read of an image (its magic bytes say png, jpeg, gif or webp): the bytes, from the descriptor already
 * opened and checked, stored as an attachment of the session; the result says so in text (name, media type,
 * bytes) and carries the reference, and the image follows in a user message. Refused, as a result the model
 * can act on, when the model takes no images, when the call cannot return one (inside batch or program, a host
 * call), or past limits.maxAttachmentBytes. Answers undefined when the bytes are no image (read goes on as text).
 */
export async function readImage(file: OpenedImageCandidate, ctx: ToolContext): Promise<ToolResult | undefined> {
  const mediaType = sniffImageType(file.head);
  if (mediaType === undefined) return undefined;
  const what = `${file.relPath} is an image (${mediaType}, ${file.size} bytes)`;
  const images = ctx.images;
  const anchors = { source_anchors: [file.relPath] };
  if (images === undefined)
    return toolError(
      `${what}; an image is returned only to a read call of the model's own (not inside batch or program, nor a host call).`,
      { ...anchors, reason: 'image_not_returned', media_type: mediaType },
    );
  if (!images.accepted)
    return toolError(
      `${what}, and this model cannot take images (its model block's modalities.input has no "image"); nothing was sent.`,
      { ...anchors, reason: 'model_takes_no_images', media_type: mediaType },
    );
  const tooLarge = (bytes: string): ToolResult =>
    toolError(
      `${file.relPath} is an image of ${bytes} bytes, over limits.maxAttachmentBytes (${images.maxBytes} bytes); it was not sent.`,
      { ...anchors, reason: 'too_large', limit: 'limits.maxAttachmentBytes', max_bytes: images.maxBytes },
    );
  if (file.size > images.maxBytes) return tooLarge(String(file.size));
  const data = await readWhole(file, images.maxBytes, ctx.signal);
  if (data === undefined) return tooLarge(`more than ${images.maxBytes}`);
  // The whole content, as read, is what is checked and stored.
  if (sniffImageType(data) !== mediaType) return undefined;
  let ref;
  try {
    ref = await images.store(mediaType, file.relPath, data);
  } catch (error) {
    if (!(error instanceof CodeError)) throw error;
    return toolError(
      `${file.relPath} is an image (${mediaType}, ${data.length} bytes) but was not sent: ${error.message}`,
      {
        ...anchors,
        reason: 'image_not_stored',
        code: error.code,
      },
    );
  }
  return {
    output: `Image ${file.relPath} (${mediaType}, ${data.length} bytes): attached as ${ref.attachmentId}; it follows in the next user message.`,
    exitCode: 0,
    metadata: {
      ...anchors,
      image: { media_type: mediaType, bytes: data.length, attachment_id: ref.attachmentId, sha256: ref.sha256 },
    },
    images: [ref],
  };
}
