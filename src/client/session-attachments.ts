import type { AttachmentRef, RunAttachment } from '../protocol/attachments.js';
import { toA3sError } from './a3s-error.js';
import { sessionPath, type SessionContext } from './session-context.js';

/** Bytes the client sends: a Uint8Array (Node's buffers are ones) or an ArrayBuffer. */
export type AttachmentBytes = Uint8Array | ArrayBuffer;

/** What uploadAttachment is told about the bytes. */
export interface UploadOptions {
  /** The media type: image/png, image/jpeg, image/gif, image/webp, or a text/* type. */
  mediaType: string;
  /** A text file's name (required by the server for text files; images take none). */
  name?: string;
}

/**
 * One attachment of sendWithAttachments / streamWithAttachments / sendRequest:
 * - the seed's `{data, mediaType}` with the bytes as data (an image; with `name`, a text file),
 * - the server's run part `{type: 'image' | 'file', mediaType, name?, data (base64 or bytes) | attachmentId}`,
 * - or the reference uploadAttachment / listAttachments answered.
 */
export type AttachmentInput =
  | { data: AttachmentBytes | string; mediaType: string; name?: string }
  | {
      type: 'image' | 'file';
      mediaType: string;
      name?: string;
      data?: AttachmentBytes | string;
      attachmentId?: string;
    }
  | AttachmentRef;

const SEED_KEYS = new Set(['data', 'mediaType', 'name']);
const PART_KEYS = new Set(['type', 'mediaType', 'name', 'data', 'attachmentId']);
const REF_KEYS = new Set(['attachmentId', 'type', 'mediaType', 'name', 'bytes', 'sha256']);

function invalid(field: string, message: string): never {
  throw toA3sError('VALIDATION_ERROR', `${field}: ${message}`, 0, { field });
}

function asBytes(value: AttachmentBytes): Uint8Array {
  return value instanceof Uint8Array ? value : new Uint8Array(value);
}

/** Base64 of bytes (btoa: in browsers and Node alike). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function isBytes(value: unknown): value is AttachmentBytes {
  return value instanceof Uint8Array || value instanceof ArrayBuffer;
}

/** The run part of one attachment input (a ValidationError naming `attachments.N.<field>` when it is none). */
function toRunAttachment(input: unknown, index: number): RunAttachment {
  const at = `attachments.${index}`;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) invalid(at, 'must be an object');
  const part = input as Record<string, unknown>;
  const reference = typeof part.bytes === 'number' && typeof part.sha256 === 'string';
  const allowed = reference ? REF_KEYS : 'type' in part ? PART_KEYS : SEED_KEYS;
  for (const key of Object.keys(part))
    if (!allowed.has(key)) invalid(`${at}.${key}`, 'is not a field of an attachment');
  if (typeof part.mediaType !== 'string' || part.mediaType === '') invalid(`${at}.mediaType`, 'must be a media type');
  const mediaType = part.mediaType;
  if (part.name !== undefined && (typeof part.name !== 'string' || part.name === ''))
    invalid(`${at}.name`, 'must be a non-empty string');
  const name = part.name as string | undefined;
  let data: string | undefined;
  if (part.data !== undefined) {
    if (typeof part.data === 'string') data = part.data;
    else if (isBytes(part.data)) data = bytesToBase64(asBytes(part.data));
    else invalid(`${at}.data`, 'must be bytes (a Uint8Array or an ArrayBuffer) or a base64 string');
  }
  const attachmentId = part.attachmentId;
  if (attachmentId !== undefined && typeof attachmentId !== 'string') invalid(`${at}.attachmentId`, 'must be a string');
  const source = data !== undefined ? { data } : attachmentId !== undefined ? { attachmentId } : undefined;
  if (source === undefined || (data !== undefined && attachmentId !== undefined))
    invalid(at, 'needs exactly one of data and attachmentId');
  const type = part.type ?? (mediaType.startsWith('image/') ? 'image' : 'file');
  if (type === 'image') {
    // A reference names nothing for an image; a part or the seed's shape naming one is refused by the server.
    return {
      type: 'image',
      mediaType,
      ...source,
      ...(name !== undefined && !reference ? { name } : {}),
    } as RunAttachment;
  }
  if (type !== 'file') invalid(`${at}.type`, 'must be "image" or "file"');
  if (name === undefined)
    invalid(
      `${at}.name`,
      `a ${mediaType} attachment is a file and needs a name (the seed's {data, mediaType} is for images)`,
    );
  return { type: 'file', name, mediaType, ...source };
}

/** The run parts of attachment inputs (at most what the server takes is its concern). */
export function toRunAttachments(inputs: unknown): RunAttachment[] {
  if (!Array.isArray(inputs)) invalid('attachments', 'must be an array');
  return inputs.map((input, index) => toRunAttachment(input, index));
}

/**
 * Bytes up to this size travel inline (base64 in the run's JSON body); larger ones are uploaded first (the raw
 * body) and sent as their reference, so the seed's `{data, mediaType}` with bytes works for images of any size the
 * server takes (the JSON body limit, 1 MiB by default, would refuse them inline).
 */
export const INLINE_ATTACHMENT_BYTES = 512 * 1024;

/** Bytes of an input large enough to upload first, else undefined. */
function largeBytes(input: unknown): Uint8Array | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const data = (input as { data?: unknown }).data;
  if (!isBytes(data)) return undefined;
  const bytes = asBytes(data);
  return bytes.byteLength > INLINE_ATTACHMENT_BYTES ? bytes : undefined;
}

/** The run parts of attachment inputs, large byte parts uploaded first (checked before anything is uploaded). */
export async function prepareRunAttachments(ctx: SessionContext, inputs: unknown): Promise<RunAttachment[]> {
  if (!Array.isArray(inputs)) invalid('attachments', 'must be an array');
  // Every part's shape is checked first (large bytes stand in as a tiny base64), so a bad part uploads nothing.
  const checked = toRunAttachments(
    inputs.map((input: unknown) => (largeBytes(input) ? { ...(input as object), data: 'AA==' } : input)),
  );
  const uploads = new SessionAttachments(ctx);
  return Promise.all(
    checked.map(async (part, index) => {
      const bytes = largeBytes(inputs[index]);
      if (!bytes) return part;
      const ref = await uploads.uploadAttachment(bytes, {
        mediaType: part.mediaType,
        ...(part.type === 'file' ? { name: part.name } : {}),
      });
      return part.type === 'file'
        ? { type: 'file', name: part.name, mediaType: part.mediaType, attachmentId: ref.attachmentId }
        : { type: 'image', mediaType: part.mediaType, attachmentId: ref.attachmentId };
    }),
  );
}

/** A session's uploaded attachments: upload one (the raw bytes), list them. */
export class SessionAttachments {
  constructor(private readonly ctx: SessionContext) {}

  /**
   * Upload bytes as an attachment of this session (the body is the raw bytes, not base64): answers its reference
   * `{attachmentId, type, mediaType, name?, bytes, sha256}`, to pass to sendWithAttachments / streamWithAttachments.
   * ValidationError (a media type the bytes do not match, a text file that is not UTF-8 or has no name),
   * PayloadTooLargeError (over limits.max_attachment_bytes or the session's count) otherwise.
   */
  async uploadAttachment(bytes: AttachmentBytes, options: UploadOptions): Promise<AttachmentRef> {
    if (!isBytes(bytes)) invalid('bytes', 'must be a Uint8Array or an ArrayBuffer');
    if (typeof options?.mediaType !== 'string' || options.mediaType === '')
      invalid('options.mediaType', 'must be a media type');
    for (const key of Object.keys(options))
      if (key !== 'mediaType' && key !== 'name') invalid(`options.${key}`, 'is not an option of uploadAttachment');
    const { body } = await this.ctx.transport.request<AttachmentRef>('POST', sessionPath(this.ctx, '/attachments'), {
      raw: { bytes: asBytes(bytes), contentType: options.mediaType },
      query: { name: options.name },
    });
    return body;
  }

  /** The session's attachments (references, oldest first). */
  async listAttachments(): Promise<AttachmentRef[]> {
    return (await this.ctx.transport.get<{ attachments: AttachmentRef[] }>(sessionPath(this.ctx, '/attachments')))
      .attachments;
  }
}
