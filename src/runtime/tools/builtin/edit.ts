import { readFile, stat, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError } from '../define-tool.js';
import { pathErrorResult } from '../tool-file-helpers.js';
import { relativeToWorkspace, resolveInWorkspace } from '../workspace-path.js';

const parameters = z
  .object({
    file_path: z.string().min(1).describe('Path of the file to edit, relative to the workspace (or absolute inside it).'),
    old_string: z.string().describe('The exact text to replace (must match the file, including whitespace).'),
    new_string: z.string().describe('The text to put in its place (must differ from old_string).'),
    replace_all: z.boolean().optional().describe('Replace every occurrence of old_string instead of requiring exactly one (default false).'),
  })
  .strict();

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** The `edit` tool: exact string replacement in a workspace file, refusing ambiguous matches. */
export const editTool = defineTool({
  name: 'edit',
  description: loadPrompt(import.meta.url, 'edit.md'),
  parameters,
  readOnly: false,
  async execute(args, ctx) {
    if (args.old_string === '') {
      return toolError('old_string must not be empty; use write to create a file or replace its whole content.', { reason: 'empty_old_string' });
    }
    if (args.old_string === args.new_string) {
      return toolError('old_string and new_string are identical; there is nothing to change.', { reason: 'no_change' });
    }
    try {
      const absPath = await resolveInWorkspace(ctx.workspace, args.file_path, { mustExist: true });
      if ((await stat(absPath)).isDirectory()) return toolError(`${args.file_path} is a directory, not a file.`, { reason: 'is_directory' });
      const shown = relativeToWorkspace(ctx.workspace, absPath);
      const text = await readFile(absPath, 'utf8');
      const occurrences = countOccurrences(text, args.old_string);
      if (occurrences === 0) {
        return toolError(`old_string was not found in ${shown}. Read the file again and copy the text exactly, including whitespace.`, {
          reason: 'not_found_in_file',
        });
      }
      if (occurrences > 1 && !args.replace_all) {
        return toolError(
          `old_string appears ${occurrences} times in ${shown}; the edit is ambiguous. Include more surrounding context to make it unique, or set replace_all to true to replace every occurrence.`,
          { reason: 'ambiguous', occurrences },
        );
      }
      // split/join rather than String.replace, whose replacement string gives `$&`, `$1`... special meaning.
      const updated = text.split(args.old_string).join(args.new_string);
      await writeFile(absPath, updated, 'utf8');
      const noun = occurrences === 1 ? 'occurrence' : 'occurrences';
      return { output: `Edited ${shown}: replaced ${occurrences} ${noun}.`, exitCode: 0, metadata: { path: shown, replacements: occurrences } };
    } catch (error) {
      return pathErrorResult(error, args.file_path);
    }
  },
});
