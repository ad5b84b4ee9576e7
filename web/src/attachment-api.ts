import { errorFromAnswer, type HttpTransport, type RunStarted } from '../../src/client/index.js';
import { IMAGE_MEDIA_TYPES, type AttachmentRef } from '../../src/protocol/attachments.js';

/** One attachment of a run, by the id its upload answered (the body's `attachments` items). */
export type RunAttachmentRef =
  | { type: 'image'; mediaType: string; attachmentId: string }
  | { type: 'file'; name: string; mediaType: string; attachmentId: string };

/** Media types of common text files a browser leaves untyped (`File.type` is '' for .md, .ts, ...). */
const TEXT_EXTENSIONS: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  log: 'text/plain',
  csv: 'text/csv',
  ts: 'text/plain',
  tsx: 'text/plain',
  js: 'text/javascript',
  mjs: 'text/javascript',
  json: 'text/plain',
  yaml: 'text/plain',
  yml: 'text/plain',
  toml: 'text/plain',
  py: 'text/plain',
  rs: 'text/plain',
  go: 'text/plain',
  sh: 'text/plain',
  html: 'text/html',
  css: 'text/css',
  xml: 'text/xml',
};

/** The media type a file is uploaded as: its own, else one from a known text extension, else octet-stream (refused). */
export function mediaTypeOf(file: File): string {
  if (file.type !== '') return file.type;
  const ext = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  return (ext !== undefined ? TEXT_EXTENSIONS[ext] : undefined) ?? 'application/octet-stream';
}

/** True for the 4 image media types the server accepts (the only ones the console ever makes a data: URL of). */
export function isImageType(mediaType: string): boolean {
  return (IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType);
}

function sessionPath(sessionId: string, suffix: string): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}${suffix}`;
}

/** fetch with the bearer token; a non-2xx answer rejects with the typed error of its body. */
async function send(http: HttpTransport, path: string, init: RequestInit, what: string): Promise<Response> {
  const headers = new Headers(init.headers);
  if (http.token !== undefined) headers.set('authorization', `Bearer ${http.token}`);
  const response = await fetch(http.url(path), { ...init, headers });
  if (response.ok) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    body = undefined;
  }
  throw errorFromAnswer(response.status, body, what);
}

/** Upload a file's raw bytes (content-type its media type; a text file names itself): the reference answered. */
export async function uploadAttachment(http: HttpTransport, sessionId: string, file: File): Promise<AttachmentRef> {
  const mediaType = mediaTypeOf(file);
  const query = isImageType(mediaType) ? '' : `?name=${encodeURIComponent(file.name || 'file.txt')}`;
  const response = await send(
    http,
    sessionPath(sessionId, `/attachments${query}`),
    { method: 'POST', headers: { 'content-type': mediaType }, body: file },
    `upload ${file.name}`,
  );
  return (await response.json()) as AttachmentRef;
}

/** The run body's item of an uploaded attachment. */
export function runAttachment(ref: AttachmentRef, fallbackName: string): RunAttachmentRef {
  return ref.type === 'image'
    ? { type: 'image', mediaType: ref.mediaType, attachmentId: ref.attachmentId }
    : { type: 'file', name: ref.name ?? fallbackName, mediaType: ref.mediaType, attachmentId: ref.attachmentId };
}

/** POST .../runs with the input and uploaded attachments (202 RunStarted). */
export async function startRunWithAttachments(
  http: HttpTransport,
  sessionId: string,
  input: string,
  attachments: readonly RunAttachmentRef[],
): Promise<RunStarted> {
  return http.post<RunStarted>(sessionPath(sessionId, '/runs'), { input, attachments });
}

/** The base64 of bytes (in chunks: a spread of a large array overflows the stack). */
function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, Math.min(i + 0x8000, bytes.length)));
  return btoa(binary);
}

/**
 * An image attachment as a `data:` URL (the console's CSP allows `img-src 'self' data:` only; the download
 * route needs the token and answers as an attachment, so the bytes are fetched and inlined). Only for the 4
 * image types: anything else is refused, never made a data: URL.
 */
export async function imageDataUrl(http: HttpTransport, sessionId: string, ref: AttachmentRef): Promise<string> {
  if (ref.type !== 'image' || !isImageType(ref.mediaType)) throw new Error(`not an image attachment: ${ref.mediaType}`);
  const response = await send(
    http,
    sessionPath(sessionId, `/attachments/${encodeURIComponent(ref.attachmentId)}`),
    { method: 'GET' },
    `download ${ref.attachmentId}`,
  );
  return `data:${ref.mediaType};base64,${base64(new Uint8Array(await response.arrayBuffer()))}`;
}
