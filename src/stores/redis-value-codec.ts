import { constants as bufferConstants } from 'node:buffer';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { CodeError } from '../errors.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** How a stored Redis value is encoded: plain JSON text, or gzip-compressed JSON text. */
export type RedisValueEncoding = 'json' | 'gzip';

/** Values whose JSON is larger than this many bytes are gzip-compressed by default (64 KiB). */
export const DEFAULT_COMPRESS_ABOVE_BYTES = 64 * 1024;

/** An encoded value ready to store: the encoding marker and the bytes. */
export interface EncodedRedisValue {
  /** Stored beside the data so a reader knows whether to decompress. */
  encoding: RedisValueEncoding;
  /** The JSON text, compressed when encoding is "gzip". */
  data: Buffer;
}

/** Encode JSON text for Redis, gzip-compressing it when it is larger than `compressAboveBytes`. */
export async function encodeRedisValue(json: string, compressAboveBytes: number): Promise<EncodedRedisValue> {
  const plain = Buffer.from(json, 'utf8');
  if (plain.length <= compressAboveBytes) return { encoding: 'json', data: plain };
  return { encoding: 'gzip', data: await gzipAsync(plain) };
}

/**
 * Decode a stored value into parsed (still unvalidated) JSON, throwing CodeError('SNAPSHOT_INVALID')
 * naming `source` for an unknown encoding marker, corrupt gzip data or malformed JSON.
 */
export async function decodeRedisValue(
  encoding: string | undefined,
  data: Buffer,
  source: string,
  details: Record<string, unknown>,
): Promise<unknown> {
  let text: string;
  if (encoding === 'json') {
    text = data.toString('utf8');
  } else if (encoding === 'gzip') {
    try {
      // Bounded: a corrupt or hostile value cannot inflate past what a JS string can hold.
      text = (await gunzipAsync(data, { maxOutputLength: bufferConstants.MAX_STRING_LENGTH })).toString('utf8');
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'decompression error';
      throw new CodeError('SNAPSHOT_INVALID', `${source} is not valid gzip data: ${reason}`, { ...details, source });
    }
  } else {
    const shown = encoding === undefined ? 'a missing' : `an unknown (${JSON.stringify(encoding)})`;
    throw new CodeError('SNAPSHOT_INVALID', `${source} has ${shown} encoding marker; expected "json" or "gzip"`, {
      ...details,
      source,
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'parse error';
    throw new CodeError('SNAPSHOT_INVALID', `${source} is not valid JSON: ${reason}`, { ...details, source });
  }
}
