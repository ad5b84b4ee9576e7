import { CodeError } from '../../errors.js';
import { IMAGE_MEDIA_TYPES } from '../../protocol/attachments.js';

/** The image type the bytes' magic numbers say, or undefined. */
export function sniffImageType(data: Buffer): (typeof IMAGE_MEDIA_TYPES)[number] | undefined {
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 6 && /^GIF8[79]a$/.test(data.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (
    data.length >= 12 &&
    data.subarray(0, 4).toString('latin1') === 'RIFF' &&
    data.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}

/** The bare, lowercased media type (`text/plain; charset=utf-8` is `text/plain`). */
export function bareMediaType(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bytes of a base64 string (standard alphabet, padding optional), or a 400 naming `field`. */
export function decodeBase64(text: string, field: string): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1 || (compact.includes('=') && compact.length % 4 !== 0))
    throw new CodeError('VALIDATION_ERROR', `${field}: is not valid base64`, { field });
  return Buffer.from(compact, 'base64');
}

/**
 * Check an attachment's bytes against its declared type: an image must be png, jpeg, gif or webp and its
 * magic bytes must say the same type; a `file` must be `text/*` and valid UTF-8. Anything else is a 400
 * naming `field` (the part's `mediaType`). Answers the bare media type and whether it is an image.
 */
export function checkAttachment(
  declared: string,
  data: Buffer,
  field: string,
  expected?: 'image' | 'file',
): { mediaType: string; type: 'image' | 'file' } {
  const mediaType = bareMediaType(declared);
  const isImage = (IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType);
  const fail = (message: string): never => {
    throw new CodeError('VALIDATION_ERROR', `${field}: ${message}`, { field, mediaType: declared });
  };
  if (expected === 'image' && !isImage)
    fail(`"${declared}" is not an accepted image type (${IMAGE_MEDIA_TYPES.join(', ')})`);
  if (isImage) {
    if (expected === 'file') fail('an image is sent as type "image", not "file"');
    const sniffed = sniffImageType(data);
    if (sniffed === undefined)
      fail(`the bytes are not a ${mediaType} image (their magic bytes match no accepted type)`);
    if (sniffed !== mediaType) fail(`declared ${mediaType} but the bytes are ${sniffed}`);
    return { mediaType, type: 'image' };
  }
  if (!mediaType.startsWith('text/') || !/^text\/[a-z0-9][a-z0-9.+-]*$/.test(mediaType))
    fail(`"${declared}" is not accepted: images (${IMAGE_MEDIA_TYPES.join(', ')}) and text/* only`);
  try {
    utf8.decode(data);
  } catch {
    fail(`a ${mediaType} attachment must be valid UTF-8`);
  }
  return { mediaType, type: 'file' };
}
