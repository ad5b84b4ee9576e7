import { appendFile, mkdir, open, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { contentMetadata, countLines, errnoCode, MAX_CONTENT_METADATA_BYTES, pathErrorResult } from '../tool-file-helpers.js';
import { relativeToWorkspace, resolveInWorkspace } from '../workspace-path.js';

const parameters = z
  .object({
    file_path: z.string().min(1).describe('Required. Path of the file to write, relative to the workspace (or absolute inside it); parent directories are created.'),
    content: z.string().describe('Required. The content to write (the whole file with "overwrite", the chunk to add with "append").'),
    mode: z.enum(['overwrite', 'append']).optional().describe('"overwrite" (default) replaces the file; "append" adds content at its end.'),
    expected_offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Append only: the byte size the file must have before this chunk; a retry of a chunk already in place is not written twice. 0 is tolerated with overwrite.'),
  })
  .strict()
  .superRefine((args, ctx) => {
    if ((args.mode ?? 'overwrite') === 'overwrite' && args.expected_offset !== undefined && args.expected_offset !== 0) {
      ctx.addIssue({ code: 'custom', path: ['expected_offset'], message: 'expected_offset is only valid with mode "append" (0 is tolerated with overwrite)' });
    }
  });

type Args = z.infer<typeof parameters>;

/** What is at the path before the call: nothing, or a file of `size` bytes whose head we keep for metadata. */
interface Existing {
  readonly size: number;
  /** The first MAX_CONTENT_METADATA_BYTES bytes (all of a small file), as text. */
  readonly head: string;
}

/** Bytes `offset .. offset+length` of the file (fewer at its end). */
async function bytesAt(absPath: string, offset: number, length: number): Promise<Buffer> {
  const handle = await open(absPath, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, offset);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The file at absPath (null when absent); a directory is refused. Only its head is read, however large it is. */
async function existing(absPath: string): Promise<Existing | null | 'directory'> {
  try {
    const stats = await stat(absPath);
    if (stats.isDirectory()) return 'directory';
    const head = await bytesAt(absPath, 0, Math.min(stats.size, MAX_CONTENT_METADATA_BYTES));
    return { size: stats.size, head: head.toString('utf8') };
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
}

function lines(content: string): string {
  return `${countLines(content)} lines`;
}

async function overwrite(absPath: string, shown: string, args: Args, before: Existing | null): Promise<ToolResult> {
  await mkdir(path.dirname(absPath), { recursive: true });
  await writeFile(absPath, args.content, 'utf8');
  const bytes = Buffer.byteLength(args.content, 'utf8');
  return {
    output: `Wrote ${bytes} bytes (${lines(args.content)}) to ${shown}`,
    exitCode: 0,
    metadata: {
      file_path: shown,
      created: before === null,
      ...contentMetadata('after', args.content),
      ...(before !== null ? contentMetadata('before', before.head, before.size) : {}),
    },
  };
}

async function append(absPath: string, shown: string, args: Args, before: Existing | null): Promise<ToolResult> {
  const chunk = Buffer.from(args.content, 'utf8');
  const size = before?.size ?? 0;
  const expected = args.expected_offset;
  // A retry of a chunk that already landed: the file is exactly expected_offset + chunk and ends with it.
  const alreadyApplied =
    expected !== undefined && expected !== size && size === expected + chunk.length && (await bytesAt(absPath, expected, chunk.length)).equals(chunk);
  if (expected !== undefined && expected !== size && !alreadyApplied) {
    return {
      ...toolError(
        `${shown} is ${size} bytes, not expected_offset ${expected}, and this chunk is not already in place at that offset; read the file and retry with its current size.`,
        { reason: 'version_conflict', expected_offset: expected, actual_size: size },
      ),
      errorKind: { type: 'version_conflict', path: shown, expected: String(expected), actual: String(size) },
    };
  }
  const offset = alreadyApplied ? (expected ?? size) : size;
  if (!alreadyApplied) {
    await mkdir(path.dirname(absPath), { recursive: true });
    await appendFile(absPath, chunk);
  }
  const resultingSize = offset + chunk.length;
  // The resulting content: the file's head plus the chunk (before the retry, the head already holds it).
  const after = alreadyApplied ? (before?.head ?? '') : `${before?.head ?? ''}${args.content}`;
  const note = alreadyApplied ? ` (already applied at offset ${offset}; nothing was written)` : '';
  return {
    output: `Wrote ${chunk.length} bytes (${lines(args.content)}) to ${shown}${note}`,
    exitCode: 0,
    metadata: {
      file_path: shown,
      created: before === null,
      ...contentMetadata('after', after, resultingSize),
      mode: 'append',
      offset,
      appended_bytes: alreadyApplied ? 0 : chunk.length,
      resulting_size: resultingSize,
      already_applied: alreadyApplied,
    },
  };
}

/** The `write` tool: create, overwrite or append to a workspace file, creating parent directories. */
export const writeTool = defineTool({
  name: 'write',
  description: loadPrompt(import.meta.url, 'write.md'),
  parameters,
  readOnly: false,
  async execute(args, ctx): Promise<ToolResult> {
    try {
      const absPath = await resolveInWorkspace(ctx.workspace, args.file_path);
      const before = await existing(absPath);
      if (before === 'directory') return toolError(`${args.file_path} is a directory; give the path of a file.`, { reason: 'is_directory' });
      const shown = relativeToWorkspace(ctx.workspace, absPath);
      return args.mode === 'append' ? await append(absPath, shown, args, before) : await overwrite(absPath, shown, args, before);
    } catch (error) {
      return pathErrorResult(error, args.file_path);
    }
  },
});
