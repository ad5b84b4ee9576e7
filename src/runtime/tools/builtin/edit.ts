import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { z } from 'zod';
import { openRegularFile, replaceContent, type OpenedRegularFile } from '../../workspace/regular-file.js';
import type { WorkspaceFiles } from '../../workspace/workspace-files.js';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { contentMetadata, existingPathErrorResult } from '../tool-file-helpers.js';

const parameters = z
  .object({
    file_path: z
      .string()
      .min(1)
      .describe('Required. Path of the file to edit, relative to the workspace (or absolute inside it).'),
    old_string: z
      .string()
      .min(1)
      .describe('Required, non-empty. The exact text to replace (must match the file, including whitespace).'),
    new_string: z
      .string()
      .describe('Required. The text to put in its place (must differ from old_string; empty deletes).'),
    replace_all: z
      .boolean()
      .optional()
      .describe('Replace every occurrence of old_string instead of requiring exactly one (default false).'),
    dry_run: z.boolean().optional().describe('Only count what would be replaced; nothing is written (default false).'),
    max_replacements: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Refuse the edit when it would replace more occurrences than this.'),
    expected_replacements: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'The number of occurrences you expect; the edit is refused unless old_string occurs exactly this often (all are then replaced).',
      ),
  })
  .strict();

type Args = z.infer<typeof parameters>;

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** Why the edit cannot be made with `count` occurrences, or undefined when it can. */
function refusal(args: Args, count: number, shown: string): ToolResult | undefined {
  const details = {
    occurrences: count,
    expected_replacements: args.expected_replacements ?? null,
    max_replacements: args.max_replacements ?? null,
  };
  if (count === 0) {
    return toolError(
      `old_string not found in ${shown}. Read the file again and copy the text exactly, including whitespace.`,
      { reason: 'not_found_in_file', ...details },
    );
  }
  if (args.expected_replacements !== undefined && count !== args.expected_replacements) {
    return toolError(
      `Expected ${args.expected_replacements} replacement(s) but old_string found ${count} time(s) in ${shown}; nothing was written.`,
      { reason: 'count_mismatch', ...details },
    );
  }
  const replacingAll = args.replace_all === true || args.expected_replacements !== undefined;
  if (count > 1 && !replacingAll) {
    return toolError(
      `old_string found ${count} times in ${shown}. Use replace_all=true to replace every occurrence, or include more surrounding context to make it unique.`,
      { reason: 'ambiguous', ...details },
    );
  }
  if (args.max_replacements !== undefined && count > args.max_replacements) {
    return toolError(
      `old_string found ${count} times in ${shown}, more than max_replacements (${args.max_replacements}); nothing was written.`,
      {
        reason: 'too_many_replacements',
        ...details,
      },
    );
  }
  return undefined;
}

/**
 * What the path holds now, read through a fresh confined open (what another writer, in place or by replacing
 * the file, left there since `file` was read), and whether it is still the same file.
 */
async function currentContent(
  files: WorkspaceFiles,
  userPath: string,
  file: OpenedRegularFile,
): Promise<{ text: string; same: boolean }> {
  const now = await openRegularFile(files, userPath, constants.O_RDONLY);
  try {
    const same = now.stats.ino === file.stats.ino && now.stats.dev === file.stats.dev;
    return { text: await now.handle.readFile('utf8'), same };
  } finally {
    await now.handle.close().catch(() => undefined);
  }
}

/** The `edit` tool: exact string replacement in a workspace file, refusing ambiguous matches. */
export const editTool = defineTool({
  name: 'edit',
  permissionPaths: (args) => [{ path: args.file_path }],
  description: loadPrompt(import.meta.url, 'edit.md'),
  parameters,
  readOnly: false,
  // A dry run only reads the file.
  readOnlyFor: (args) =>
    typeof args === 'object' && args !== null && (args as Record<string, unknown>).dry_run === true,
  async execute(args, ctx): Promise<ToolResult> {
    if (args.old_string === args.new_string) {
      return toolError('old_string and new_string are identical; there is nothing to change.', { reason: 'no_change' });
    }
    const dryRun = args.dry_run === true;
    let file: OpenedRegularFile | undefined;
    try {
      // One handle of the confined walk for reading and writing (read-only for a dry run); fstat said it is a regular file.
      file = await openRegularFile(ctx.files, args.file_path, dryRun ? constants.O_RDONLY : constants.O_RDWR);
      const shown = file.relative;
      const before = await file.handle.readFile('utf8');
      const count = countOccurrences(before, args.old_string);
      const refused = refusal(args, count, shown);
      if (refused) return refused;
      // split/join rather than String.replace, whose replacement string gives `$&`, `$1`... special meaning.
      const after = before.split(args.old_string).join(args.new_string);
      if (!dryRun) {
        // Compare-and-swap: refuse when the file changed since it was read (another writer in between).
        const current = await currentContent(ctx.files, args.file_path, file);
        if (current.text !== before || !current.same) {
          return {
            ...toolError(`${shown} changed while it was being edited; read it again and retry. Nothing was written.`, {
              reason: 'version_conflict',
            }),
            errorKind: {
              type: 'version_conflict',
              path: shown,
              expected: sha256(before),
              actual: sha256(current.text),
            },
          };
        }
        await replaceContent(file.handle, after);
      }
      return {
        output: dryRun
          ? `Dry run: would replace ${count} occurrence(s) in ${shown}; nothing was written`
          : `Replaced ${count} occurrence(s) in ${shown}`,
        exitCode: 0,
        metadata: {
          file_path: shown,
          ...contentMetadata('before', before),
          ...contentMetadata('after', after),
          dry_run: dryRun,
          replacement_count: count,
          expected_replacements: args.expected_replacements ?? null,
          max_replacements: args.max_replacements ?? null,
        },
      };
    } catch (error) {
      return existingPathErrorResult(error, args.file_path);
    } finally {
      await file?.handle.close().catch(() => undefined);
    }
  },
});
