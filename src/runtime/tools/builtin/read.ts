import { closeSync, constants } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { openRegularDescriptor, readDescriptor } from '../../workspace/regular-file.js';
import { NotRegularFileError } from '../../workspace/not-regular-file-error.js';
import { defineTool, loadPrompt, toolError } from '../define-tool.js';
import { IMAGE_EXTENSION, readImage } from './read-image.js';
import { BINARY_SNIFF_BYTES, existingPathErrorResult, looksBinary, MAX_LINE_CHARS } from '../tool-file-helpers.js';

const DEFAULT_LIMIT = 2000;
const MAX_LIMIT = 2000;
const CHUNK_BYTES = 64 * 1024;

const parameters = z
  .object({
    file_path: z
      .string()
      .min(1)
      .describe('Path of the file to read, relative to the workspace (or absolute inside it).'),
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('0-based line to start reading at (default 0); the footer of a partial read gives the next offset.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(`Maximum number of lines to return (default and max ${MAX_LIMIT}).`),
  })
  .strict();

/** Lines `start .. start+limit-1` of text fed in chunks, with memory bounded by the window however long the lines. */
class LineWindow {
  readonly lines: string[] = [];
  /** Lines seen in total (only exact when the whole file was scanned). */
  linesSeen = 0;
  hasMore = false;
  private current = '';
  private currentLength = 0;

  constructor(
    private readonly start: number,
    private readonly limit: number,
  ) {}

  /** Feeds the next piece of text; false once the window is full and more text follows. */
  feed(chunk: string): boolean {
    let index = 0;
    while (index < chunk.length) {
      if (this.lines.length >= this.limit) {
        this.hasMore = true;
        return false;
      }
      const newline = chunk.indexOf('\n', index);
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.slice(index, end);
      // Lines before the window are only counted; window lines keep one char past the cap to detect cutting.
      if (this.linesSeen + 1 >= this.start && this.current.length <= MAX_LINE_CHARS)
        this.current += piece.slice(0, MAX_LINE_CHARS + 1 - this.current.length);
      this.currentLength += piece.length;
      if (newline === -1) break;
      this.finishLine();
      index = newline + 1;
    }
    return true;
  }

  /** The text ended: a last line without a newline still counts. */
  end(): void {
    if (!this.hasMore && this.currentLength > 0 && this.lines.length < this.limit) this.finishLine();
    else if (this.currentLength > 0 || this.hasMore) this.hasMore = true;
  }

  private finishLine(): void {
    this.linesSeen++;
    if (this.linesSeen >= this.start) {
      const current = this.current;
      let text = current.endsWith('\r') && this.currentLength === current.length ? current.slice(0, -1) : current;
      if (this.currentLength > MAX_LINE_CHARS)
        text = `${text.slice(0, MAX_LINE_CHARS)}... [line truncated, ${this.currentLength - MAX_LINE_CHARS} more chars]`;
      this.lines.push(text);
    }
    this.current = '';
    this.currentLength = 0;
  }
}

/**
 * Decodes the file from its first chunk on (already read into `buffer`) into the window, reading more
 * only while the window wants lines; the same buffer is reused for every read.
 */
async function fillWindow(
  fd: number,
  buffer: Buffer,
  firstBytes: number,
  size: number,
  window: LineWindow,
  signal: AbortSignal,
): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let bytes = firstBytes;
  let consumed = 0;
  while (bytes > 0) {
    consumed += bytes;
    if (!window.feed(decoder.write(buffer.subarray(0, bytes)))) return;
    // A short read that reached the size fstat gave is the end; no extra read to see zero bytes.
    if (bytes < buffer.length && consumed >= size) break;
    signal.throwIfAborted();
    bytes = await readDescriptor(fd, buffer, 0, buffer.length, null);
  }
  window.feed(decoder.end());
  window.end();
}

/** The seed's read metadata: the file as source anchor and the line range returned. */
function readMetadata(
  relPath: string,
  offset: number,
  requested: number | undefined,
  applied: number,
  returned: number,
  eof: boolean,
  total: number | null,
  output: string,
): Record<string, unknown> {
  return {
    source_anchors: [relPath],
    range: {
      offset,
      requested_limit: requested ?? null,
      applied_limit: applied,
      returned_lines: returned,
      next_offset: eof ? null : offset + returned,
      eof,
      total_lines: total,
      limit_clamped: false,
      output_bytes: Buffer.byteLength(output, 'utf8'),
    },
  };
}

/** The `read` tool: numbered lines of a workspace text file, windowed by offset and limit; an image is returned as one. */
export const readTool = defineTool({
  name: 'read',
  permissionPaths: (args) => [{ path: args.file_path }],
  description: loadPrompt(import.meta.url, 'read.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx) {
    const offset = args.offset ?? 0;
    const limit = args.limit ?? DEFAULT_LIMIT;
    // The window counts lines from 1; the offset counts them from 0.
    const window = new LineWindow(offset + 1, limit);
    let relPath: string;
    let fd: number | undefined;
    // One descriptor, opened by the confined walk (O_NOFOLLOW, O_NONBLOCK: a FIFO never blocks), for the checks
    // and the lines: what fstat approved is what is read, whatever happens to the names meanwhile. The open and
    // fstat are synchronous (the walk's last step); the content is read asynchronously.
    try {
      const opened = openRegularDescriptor(ctx.files, args.file_path, constants.O_RDONLY);
      ({ fd } = opened);
      const { stats } = opened;
      relPath = opened.relative;
      if (stats.size === 0) {
        if (offset > 0)
          return toolError(`Offset ${offset} exceeds file length (0 lines)`, { reason: 'offset_out_of_range' });
        return {
          output: '(File is empty.)',
          exitCode: 0,
          metadata: readMetadata(relPath, offset, args.limit, limit, 0, true, 0, ''),
        };
      }
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(BINARY_SNIFF_BYTES, stats.size)));
      const bytesRead = await readDescriptor(fd, buffer, 0, buffer.length, null);
      // An image (by its magic bytes, whatever its name) is returned as one, read from this same descriptor.
      const image = await readImage({ fd, size: stats.size, relPath, head: buffer.subarray(0, bytesRead) }, ctx);
      if (image !== undefined) return image;
      if (looksBinary(buffer.subarray(0, bytesRead))) {
        const named = IMAGE_EXTENSION.test(relPath)
          ? ' (named like an image, but its bytes are not a png, jpeg, gif or webp image)'
          : '';
        return toolError(
          `${args.file_path} is a binary file (${stats.size} bytes)${named}; it cannot be shown as text.`,
          {
            reason: 'binary',
          },
        );
      }
      await fillWindow(fd, buffer, bytesRead, stats.size, window, ctx.signal);
    } catch (error) {
      if (error instanceof NotRegularFileError) {
        return error.kind === 'directory'
          ? toolError(`${args.file_path} is a directory, not a file; use ls or glob to list it.`, {
              reason: 'is_directory',
            })
          : toolError(`${args.file_path} is not a regular file.`, { reason: 'not_a_file' });
      }
      return existingPathErrorResult(error, args.file_path);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    if (window.lines.length === 0) {
      return toolError(`Offset ${offset} exceeds file length (${window.linesSeen} lines)`, {
        reason: 'offset_out_of_range',
      });
    }
    const next = offset + window.lines.length;
    let output = window.lines.map((line, i) => `${String(offset + i + 1).padStart(6)}\t${line}`).join('\n');
    if (window.hasMore) output += `\n\n... (more lines available; continue with offset=${next})`;
    const total = window.hasMore ? null : window.linesSeen;
    return {
      output,
      exitCode: 0,
      metadata: readMetadata(relPath, offset, args.limit, limit, window.lines.length, !window.hasMore, total, output),
    };
  },
});
