import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { listPageMetadata, parseCursor, pathErrorResult } from '../tool-file-helpers.js';
import { globWorkspace } from '../glob-workspace.js';
import { openSearchBase } from '../open-search-base.js';
import { assertConfinedGlob } from '../workspace-path.js';

const DEFAULT_LIMIT = 200;
const MAX_LIMIT = 1000;
// Bounds memory on huge trees; beyond it paging is over the first entries found.
const MAX_ENTRIES = 100_000;
const IGNORED_DIRS = ['**/node_modules/**', '**/.git/**'];

const parameters = z
  .object({
    pattern: z
      .string()
      .min(1)
      .describe('Required. Glob pattern relative to path, e.g. "**/*.ts" or "src/**/*.{ts,tsx}".'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('Base directory to search in, relative to the workspace (default: the workspace).'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(`Maximum number of paths per page (1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}).`),
    cursor: z
      .string()
      .optional()
      .describe('The cursor from a previous glob call with the same pattern, to get the next page.'),
    sort: z
      .enum(['backend', 'path'])
      .optional()
      .describe(
        '"backend" (default): walk order, each directory\'s files before its subdirectories; "path": sorted by full path.',
      ),
  })
  .strict();

/** Walk order with sorted entries: at each directory level its files come before its subdirectories. */
function compareByDirectory(sa: readonly string[], sb: readonly string[]): number {
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    if (sa[i] === sb[i]) continue;
    const fileA = i === sa.length - 1;
    const fileB = i === sb.length - 1;
    if (fileA !== fileB) return fileA ? -1 : 1;
    return sa[i] < sb[i] ? -1 : 1;
  }
  return sa.length - sb.length;
}

/** The paths in compareByDirectory order (each split once, not at every comparison). */
function sortByDirectory(paths: readonly string[]): string[] {
  const keyed = paths.map((entry) => ({ entry, parts: entry.split('/') }));
  keyed.sort((a, b) => compareByDirectory(a.parts, b.parts));
  return keyed.map((item) => item.entry);
}

/**
 * Where a glob call reaches, for permission rules: its base joined with the pattern's leading literal
 * directories (`path: "src", pattern: "secret/**"` reaches `src/secret`).
 */
export function globSearchBase(base: string | undefined, pattern: string): string {
  const parts = pattern.split(/[\\/]/);
  const literal: string[] = [];
  for (const part of parts.slice(0, -1)) {
    if (/[*?[\]{}]/.test(part)) break;
    literal.push(part);
  }
  return [base ?? '.', ...literal].join('/');
}

/** The `glob` tool: paged file paths (walk order or sorted) under a workspace directory that match a pattern. */
export const globTool = defineTool({
  name: 'glob',
  permissionPaths: (args) => [{ path: globSearchBase(args.path, args.pattern), tree: true }],
  description: loadPrompt(import.meta.url, 'glob.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx): Promise<ToolResult> {
    const limit = args.limit ?? DEFAULT_LIMIT;
    const sort = args.sort ?? 'backend';
    const offset = parseCursor(args.cursor, 'glob');
    if (typeof offset === 'string')
      return {
        ...toolError(offset, { reason: 'invalid_cursor' }),
        errorKind: { type: 'invalid_argument', message: offset },
      };
    const userPath = args.path ?? '.';
    let paths: string[];
    let capped: boolean;
    try {
      assertConfinedGlob(args.pattern);
      const base = openSearchBase(ctx.files, userPath);
      if (base.kind !== 'directory') return toolError(`${userPath} is not a directory.`, { reason: 'not_a_directory' });
      try {
        // Walked from the opened directory, confined: symlinks are neither followed nor listed.
        const listing = await globWorkspace(ctx.files, base.dir, args.pattern, {
          ignore: IGNORED_DIRS,
          baseNameMatch: false,
          maxFiles: MAX_ENTRIES,
          signal: ctx.signal,
        });
        listing.close();
        paths = listing.files.map((file) => file.path);
        capped = listing.capped;
      } finally {
        base.dir.close();
      }
    } catch (error) {
      return pathErrorResult(error, userPath, 'Directory');
    }
    if (ctx.signal.aborted)
      return {
        ...toolError('glob was cancelled.', { reason: 'cancelled' }),
        errorKind: { type: 'cancelled', op: 'glob' },
      };

    // The walk's order depends on directory reading; "backend" sorts each directory's entries so pages
    // stay stable between calls, "path" sorts the whole list.
    if (sort === 'path') paths.sort();
    else paths = sortByDirectory(paths);
    if (paths.length === 0) {
      const request = { offset, limit, requestedLimit: limit };
      return {
        output: `No files found matching pattern: ${args.pattern}`,
        exitCode: 0,
        metadata: { page: listPageMetadata(request, 0, null, 0), sort, capped },
      };
    }
    if (offset > paths.length) {
      const message = `cursor offset ${offset} exceeds the ${paths.length} matching file(s)`;
      return { ...toolError(message, { reason: 'invalid_cursor' }), errorKind: { type: 'invalid_argument', message } };
    }
    const end = Math.min(paths.length, offset + limit);
    const next = end < paths.length ? String(end) : null;
    const page = paths.slice(offset, end);
    const lines = [...page, '', `${page.length} of ${paths.length} file(s) shown`];
    if (next !== null) lines.push(`More files available; continue with cursor=${next}`);
    if (capped) lines.push(`(The search stopped after ${MAX_ENTRIES} files; use a narrower pattern or path.)`);
    return {
      output: lines.join('\n'),
      exitCode: 0,
      metadata: {
        page: listPageMetadata({ offset, limit, requestedLimit: limit }, page.length, next, paths.length),
        sort,
        capped,
      },
    };
  },
});
