import type { Dirent } from 'node:fs';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { listPageMetadata, parseCursor, pathErrorResult } from '../tool-file-helpers.js';
import { openSearchBase } from '../open-search-base.js';

const DEFAULT_LIMIT = 200;
const MAX_LIMIT = 1000;

const parameters = z
  .object({
    path: z
      .string()
      .min(1)
      .optional()
      .describe('Directory to list, relative to the workspace (default ".", the workspace).'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(`Maximum number of entries per page (1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}).`),
    cursor: z
      .string()
      .optional()
      .describe('The cursor from a previous ls call of the same directory, to get the next page.'),
  })
  .strict();

/** The `ls` tool: sorted, paged entries of one workspace directory, directories suffixed with `/`. */
export const lsTool = defineTool({
  name: 'ls',
  permissionPaths: (args) => [{ path: args.path ?? '.' }],
  description: loadPrompt(import.meta.url, 'ls.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx): Promise<ToolResult> {
    const userPath = args.path ?? '.';
    const limit = args.limit ?? DEFAULT_LIMIT;
    const offset = parseCursor(args.cursor, 'ls');
    if (typeof offset === 'string')
      return {
        ...toolError(offset, { reason: 'invalid_cursor' }),
        errorKind: { type: 'invalid_argument', message: offset },
      };
    try {
      // The directory is opened confined and listed through its descriptor: what is listed is what was opened.
      const base = openSearchBase(ctx.files, userPath);
      if (base.kind !== 'directory')
        return toolError(`${userPath} is not a directory; use read to see a file.`, { reason: 'not_a_directory' });
      let entries: Dirent[];
      try {
        entries = await base.dir.list();
      } finally {
        base.dir.close();
      }
      const names = entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).sort();
      if (offset > names.length) {
        const message = `cursor offset ${offset} exceeds the ${names.length} entries of ${userPath}`;
        return {
          ...toolError(message, { reason: 'invalid_cursor' }),
          errorKind: { type: 'invalid_argument', message },
        };
      }
      const end = Math.min(names.length, offset + limit);
      const next = end < names.length ? String(end) : null;
      const shown = names.slice(offset, end);
      const lines = names.length === 0 ? ['(empty directory)'] : [...shown];
      // A listing that fits one page is just the entries; a paged one says where it is.
      if (next !== null || offset > 0) {
        lines.push('', `${shown.length} of ${names.length} entries shown`);
        if (next !== null) lines.push(`More entries available; continue with cursor=${next}`);
      }
      return {
        output: lines.join('\n'),
        exitCode: 0,
        metadata: {
          path: base.dir.relative,
          entries: names.length,
          truncated: next !== null,
          page: listPageMetadata({ offset, limit, requestedLimit: limit }, shown.length, next, names.length),
        },
      };
    } catch (error) {
      return pathErrorResult(error, userPath, 'Directory');
    }
  },
});
