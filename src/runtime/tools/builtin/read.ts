import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError } from '../define-tool.js';
import { fileLooksBinary, MAX_LINE_CHARS, pathErrorResult } from '../tool-file-helpers.js';
import { relativeToWorkspace, resolveInWorkspace } from '../workspace-path.js';

const DEFAULT_LIMIT = 2000;
const MAX_LIMIT = 10_000;

const parameters = z
  .object({
    file_path: z.string().min(1).describe('Path of the file to read, relative to the workspace (or absolute inside it).'),
    offset: z.number().int().min(1).optional().describe('1-based line number to start reading at (default 1).'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(`Maximum number of lines to return (default ${DEFAULT_LIMIT}).`),
  })
  .strict();

interface LineWindow {
  lines: string[];
  /** Lines seen in total (only exact when the whole file was scanned). */
  linesSeen: number;
  hasMore: boolean;
}

/** Read lines `start .. start+limit-1` with memory bounded by the window, however long the file or its lines. */
async function readLineWindow(absPath: string, start: number, limit: number, signal: AbortSignal): Promise<LineWindow> {
  const lines: string[] = [];
  let lineNo = 0;
  let current = '';
  let currentLength = 0;
  let hasMore = false;

  const finishLine = (): void => {
    lineNo++;
    if (lineNo >= start) {
      let text = current.endsWith('\r') && currentLength === current.length ? current.slice(0, -1) : current;
      if (currentLength > MAX_LINE_CHARS) text = `${text.slice(0, MAX_LINE_CHARS)}... [line truncated, ${currentLength - MAX_LINE_CHARS} more chars]`;
      lines.push(text);
    }
    current = '';
    currentLength = 0;
  };

  const stream = createReadStream(absPath, { encoding: 'utf8', highWaterMark: 64 * 1024, signal });
  try {
    outer: for await (const chunk of stream as AsyncIterable<string>) {
      let index = 0;
      while (index < chunk.length) {
        if (lines.length >= limit) {
          hasMore = true;
          break outer;
        }
        const newline = chunk.indexOf('\n', index);
        const end = newline === -1 ? chunk.length : newline;
        const piece = chunk.slice(index, end);
        // Lines before the window are only counted; window lines keep one char past the cap to detect cutting.
        if (lineNo + 1 >= start && current.length <= MAX_LINE_CHARS) current += piece.slice(0, MAX_LINE_CHARS + 1 - current.length);
        currentLength += piece.length;
        if (newline === -1) break;
        finishLine();
        index = newline + 1;
      }
    }
  } finally {
    stream.destroy();
  }
  if (!hasMore && currentLength > 0 && lines.length < limit) finishLine();
  else if (currentLength > 0 || hasMore) hasMore = true;
  return { lines, linesSeen: lineNo, hasMore };
}

/** The `read` tool: numbered lines of a workspace text file, windowed by offset and limit. */
export const readTool = defineTool({
  name: 'read',
  description: loadPrompt(import.meta.url, 'read.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx) {
    const offset = args.offset ?? 1;
    const limit = args.limit ?? DEFAULT_LIMIT;
    let absPath: string;
    try {
      absPath = await resolveInWorkspace(ctx.workspace, args.file_path, { mustExist: true });
      const stats = await stat(absPath);
      if (stats.isDirectory()) {
        return toolError(`${args.file_path} is a directory, not a file; use ls or glob to list it.`, { reason: 'is_directory' });
      }
      if (!stats.isFile()) return toolError(`${args.file_path} is not a regular file.`, { reason: 'not_a_file' });
      if (stats.size === 0) return { output: '(File is empty.)', exitCode: 0, metadata: { path: relativeToWorkspace(ctx.workspace, absPath), lines: 0 } };
      if (await fileLooksBinary(absPath)) {
        return toolError(`${args.file_path} is a binary file (${stats.size} bytes); it cannot be shown as text.`, { reason: 'binary' });
      }
    } catch (error) {
      return pathErrorResult(error, args.file_path);
    }

    let window: LineWindow;
    try {
      window = await readLineWindow(absPath, offset, limit, ctx.signal);
    } catch (error) {
      return pathErrorResult(error, args.file_path);
    }
    if (window.lines.length === 0) {
      return toolError(`offset ${offset} is past the end of ${args.file_path}, which has ${window.linesSeen} lines.`, {
        reason: 'offset_out_of_range',
      });
    }
    const last = offset + window.lines.length - 1;
    let output = window.lines.map((line, i) => `${String(offset + i).padStart(6)}\t${line}`).join('\n');
    if (window.hasMore) {
      output += `\n\n(Showing lines ${offset}-${last}; the file has more lines. Call read with offset=${last + 1} to continue.)`;
    }
    return {
      output,
      exitCode: 0,
      metadata: { path: relativeToWorkspace(ctx.workspace, absPath), start_line: offset, end_line: last, has_more: window.hasMore },
    };
  },
});
