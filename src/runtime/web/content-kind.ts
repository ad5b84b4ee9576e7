/** How web_fetch treats a response body, from its Content-Type. */
export type ContentKind = 'html' | 'text' | 'binary';

const TEXT_APPLICATION: ReadonlySet<string> = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/x-yaml',
  'application/yaml',
  'application/toml',
  'application/x-ndjson',
  'application/graphql',
  'application/sql',
  'application/x-sh',
]);

/** The media type of a Content-Type header, lower-cased without parameters ('' when absent). */
export function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * HTML (text/html, application/xhtml+xml), other text (text/*, JSON, XML, +json, +xml and a few textual
 * application types) or binary (everything else: images, PDFs, archives, octet streams). A missing type
 * is text when the first bytes hold no NUL byte.
 */
export function contentKind(contentType: string | null, head: Uint8Array): ContentKind {
  const type = mediaType(contentType);
  if (type === '') return head.subarray(0, 1024).includes(0) ? 'binary' : 'text';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type.startsWith('text/')) return 'text';
  if (TEXT_APPLICATION.has(type) || type.endsWith('+json') || type.endsWith('+xml')) return 'text';
  return 'binary';
}

/** Decode a body with the Content-Type's charset when the runtime knows it, else UTF-8 (invalid bytes replaced). */
export function decodeBody(bytes: Uint8Array, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}
