import { CodeError } from '../../errors.js';

/** UTF-8 bytes of session options as compact JSON: what limits.maxSessionOptionsBytes bounds. */
export function sessionOptionsBytes(options: object): number {
  return Buffer.byteLength(JSON.stringify(options), 'utf8');
}

/**
 * Session options are bounded in bytes (limits.maxSessionOptionsBytes), measured as the compact JSON of the
 * options as received, before anything is looked up or built; PAYLOAD_TOO_LARGE naming the limit and `field`
 * (where the options came from: `body` for POST /v1/sessions, `params` for ACP session/new). Returns the bytes.
 */
export function assertSessionOptionsBound(options: object, maxBytes: number, field: string): number {
  const bytes = sessionOptionsBytes(options);
  if (bytes > maxBytes) {
    throw new CodeError(
      'PAYLOAD_TOO_LARGE',
      `${field}: session options of ${bytes} bytes (compact JSON) exceed limits.maxSessionOptionsBytes (config limits.max_session_options_bytes, ${maxBytes} bytes)`,
      {
        field,
        limit: 'limits.maxSessionOptionsBytes',
        maxBytes,
        bytes,
      },
    );
  }
  return bytes;
}
