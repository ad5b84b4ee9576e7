import { readFileSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { UsageError } from './usage-error.js';

/** A file of `--attach`, read and typed. */
export interface AttachFile {
  path: string;
  bytes: Uint8Array;
  mediaType: string;
  /** A text file's name (its base name); images go without one. */
  name?: string;
}

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0): boolean =>
  prefix.every((byte, i) => bytes[at + i] === byte);
const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/**
 * The media type of a file's bytes: png, jpeg, gif or webp by their magic bytes, text/plain for UTF-8 text (no
 * NUL bytes), undefined for anything else.
 */
export function sniffMediaType(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  if (bytes.includes(0)) return undefined;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return 'text/plain';
  } catch {
    return undefined;
  }
}

/** Read and type the files of `--attach` (relative to `cwd`): a usage error names a file that is none of the kinds. */
export function readAttachFiles(paths: readonly string[], cwd: string, command: string): AttachFile[] {
  return paths.map((given) => {
    const path = resolve(cwd, given);
    let bytes: Uint8Array;
    try {
      if (!statSync(path).isFile()) throw new Error('not a regular file');
      bytes = readFileSync(path);
    } catch (error) {
      const why = (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
      throw new UsageError(`--attach ${given}: cannot be read (${why})`, command);
    }
    const mediaType = sniffMediaType(bytes);
    if (mediaType === undefined)
      throw new UsageError(
        `--attach ${given}: not a png, jpeg, gif or webp image, nor UTF-8 text (the only kinds a run takes)`,
        command,
      );
    return { path, bytes, mediaType, ...(mediaType === 'text/plain' ? { name: basename(path) } : {}) };
  });
}
