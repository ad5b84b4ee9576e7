import { stat } from 'node:fs/promises';
import fg from 'fast-glob';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { pathErrorResult } from '../tool-file-helpers.js';
import { assertConfinedGlob, relativeToWorkspace, resolveInWorkspace } from '../workspace-path.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
// Bounds memory on huge trees; beyond it paging is over the first entries found.
const MAX_ENTRIES = 100_000;

const parameters = z
  .object({
    pattern: z.string().min(1).describe('Glob pattern relative to path, e.g. "**/*.ts" or "src/**/*.{ts,tsx}".'),
    path: z.string().min(1).optional().describe('Directory to search in, relative to the workspace (default: the workspace).'),
    limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`Maximum number of paths per page (default ${DEFAULT_LIMIT}).`),
    cursor: z.string().optional().describe('The next_cursor value from a previous glob call with the same pattern, to get the next page.'),
  })
  .strict();

/** The `glob` tool: sorted, paged file paths under a workspace directory that match a pattern. */
export const globTool = defineTool({
  name: 'glob',
  description: loadPrompt(import.meta.url, 'glob.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx): Promise<ToolResult> {
    const limit = args.limit ?? DEFAULT_LIMIT;
    const offset = args.cursor === undefined ? 0 : /^\d+$/.test(args.cursor) ? Number(args.cursor) : NaN;
    if (!Number.isSafeInteger(offset)) {
      return toolError(`Invalid cursor ${JSON.stringify(args.cursor)}; pass the next_cursor value from a previous glob call.`, {
        reason: 'invalid_cursor',
      });
    }
    const userPath = args.path ?? '.';
    const paths: string[] = [];
    let capped = false;
    try {
      assertConfinedGlob(args.pattern);
      const base = await resolveInWorkspace(ctx.workspace, userPath, { mustExist: true });
      if (!(await stat(base)).isDirectory()) return toolError(`${userPath} is not a directory.`, { reason: 'not_a_directory' });
      const stream = fg.stream(args.pattern, {
        cwd: base,
        absolute: true,
        dot: true,
        onlyFiles: true,
        followSymbolicLinks: false,
        ignore: ['**/node_modules/**', '**/.git/**'],
        suppressErrors: true,
      });
      for await (const entry of stream) {
        if (ctx.signal.aborted) return toolError('glob was cancelled.', { reason: 'cancelled' });
        if (paths.length >= MAX_ENTRIES) {
          capped = true;
          break;
        }
        paths.push(relativeToWorkspace(ctx.workspace, String(entry)));
      }
    } catch (error) {
      return pathErrorResult(error, userPath, 'Directory');
    }

    paths.sort();
    const page = paths.slice(offset, offset + limit);
    const next = offset + limit < paths.length ? String(offset + limit) : undefined;
    const lines: string[] = [];
    if (paths.length === 0) lines.push('No files found.');
    else if (page.length === 0) lines.push(`No more files (${paths.length} in total).`);
    else lines.push(...page);
    if (capped) lines.push(`(The search stopped after ${MAX_ENTRIES} files; use a narrower pattern or path.)`);
    if (next !== undefined) lines.push(`next_cursor: ${next}`);
    return {
      output: lines.join('\n'),
      exitCode: 0,
      metadata: { count: page.length, total: paths.length, truncated: capped, ...(next !== undefined ? { next_cursor: next } : {}) },
    };
  },
});
