import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import {
  openOrCreateRegularFile,
  readAt,
  replaceContent,
  writeAll,
  type OpenedOrCreatedFile,
} from '../../workspace/regular-file.js';
import { NotRegularFileError } from '../../workspace/not-regular-file-error.js';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { contentMetadata, countLines, MAX_CONTENT_METADATA_BYTES, pathErrorResult } from '../tool-file-helpers.js';
const parameters = z
  .object({
    file_path: z
      .string()
      .min(1)
      .describe(
        'Required. Path of the file to write, relative to the workspace (or absolute inside it); parent directories are created.',
      ),
    content: z
      .string()
      .describe('Required. The content to write (the whole file with "overwrite", the chunk to add with "append").'),
    mode: z
      .enum(['overwrite', 'append'])
      .optional()
      .describe('"overwrite" (default) replaces the file; "append" adds content at its end.'),
    expected_offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'Append only: the byte size the file must have before this chunk; a retry of a chunk already in place is not written twice. 0 is tolerated with overwrite.',
      ),
  })
  .strict()
  .superRefine((args, ctx) => {
    if (
      (args.mode ?? 'overwrite') === 'overwrite' &&
      args.expected_offset !== undefined &&
      args.expected_offset !== 0
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['expected_offset'],
        message: 'expected_offset is only valid with mode "append" (0 is tolerated with overwrite)',
      });
    }
  });

type Args = z.infer<typeof parameters>;

/** What is at the path before the call: nothing, or a file of `size` bytes whose head we keep for metadata. */
interface Existing {
  readonly size: number;
  /** The first MAX_CONTENT_METADATA_BYTES bytes (all of a small file), as text. */
  readonly head: string;
}

/** The opened file as it was before the call (null when this call created it); only its head is read, however large it is. */
async function existing(file: OpenedOrCreatedFile): Promise<Existing | null> {
  if (file.created) return null;
  const { size } = file.stats;
  const head = await readAt(file.handle, 0, Math.min(size, MAX_CONTENT_METADATA_BYTES));
  return { size, head: head.toString('utf8') };
}

function lines(content: string): string {
  return `${countLines(content)} lines`;
}

async function overwrite(handle: FileHandle, shown: string, args: Args, before: Existing | null): Promise<ToolResult> {
  // Truncated through the handle only now: fstat said it is a regular file inside the workspace.
  await replaceContent(handle, args.content);
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

async function append(handle: FileHandle, shown: string, args: Args, before: Existing | null): Promise<ToolResult> {
  const chunk = Buffer.from(args.content, 'utf8');
  const size = before?.size ?? 0;
  const expected = args.expected_offset;
  // A retry of a chunk that already landed: the file is exactly expected_offset + chunk and ends with it.
  const alreadyApplied =
    expected !== undefined &&
    expected !== size &&
    size === expected + chunk.length &&
    (await readAt(handle, expected, chunk.length)).equals(chunk);
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
  // O_APPEND: the chunk goes at the end of the opened file.
  if (!alreadyApplied) await writeAll(handle, chunk, null);
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
  permissionPaths: (args) => [{ path: args.file_path }],
  description: loadPrompt(import.meta.url, 'write.md'),
  parameters,
  readOnly: false,
  async execute(args, ctx): Promise<ToolResult> {
    const appending = args.mode === 'append';
    let file: OpenedOrCreatedFile | undefined;
    try {
      // Read and write through one handle of the confined walk: the head for metadata, then the new content.
      file = await openOrCreateRegularFile(
        ctx.files,
        args.file_path,
        constants.O_RDWR | (appending ? constants.O_APPEND : 0),
      );
      const before = await existing(file);
      return appending
        ? await append(file.handle, file.relative, args, before)
        : await overwrite(file.handle, file.relative, args, before);
    } catch (error) {
      if (error instanceof NotRegularFileError && error.kind === 'directory') {
        return toolError(`${args.file_path} is a directory; give the path of a file.`, { reason: 'is_directory' });
      }
      return pathErrorResult(error, args.file_path);
    } finally {
      await file?.handle.close().catch(() => undefined);
    }
  },
});
