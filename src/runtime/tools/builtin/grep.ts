import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { listPageMetadata, looksBinary, parseCursor, pathErrorResult, truncateLine } from '../tool-file-helpers.js';
import { globWorkspace, openGlobFile } from '../glob-workspace.js';
import { openSearchBase } from '../open-search-base.js';
import type { WorkspaceFiles } from '../../workspace/workspace-files.js';
import { assertConfinedGlob, relativeToWorkspace } from '../workspace-path.js';

const DEFAULT_LIMIT = 200;
const MAX_LIMIT = 1000;
const MAX_CONTEXT = 20;
const MAX_FILE_BYTES = 10 * 1024 * 1024;
// Bounds the file list held in memory while walking a huge tree.
const MAX_FILES_WALKED = 200_000;
// Files read ahead of the one being searched (the libuv pool has 4 threads by default).
const READ_AHEAD = 4;
const IGNORED_DIRS = ['**/node_modules/**', '**/.git/**', '**/dist/**'];
const PAGED_MODES = ['files_with_matches', 'count', 'summary'] as const;

const parameters = z
  .object({
    pattern: z
      .string()
      .min(1)
      .describe('Required. JavaScript regular expression to search for, matched against each line.'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('File or directory to search, relative to the workspace (default: the workspace).'),
    glob: z.string().min(1).optional().describe('Only search files matching this glob, e.g. "*.ts" or "*.{ts,tsx}".'),
    context: z
      .number()
      .int()
      .min(0)
      .max(MAX_CONTEXT)
      .optional()
      .describe(`Lines of context before and after each match (content mode only, 0-${MAX_CONTEXT}).`),
    '-i': z.boolean().optional().describe('Case-insensitive search (default false).'),
    output_mode: z
      .enum(['content', ...PAGED_MODES])
      .optional()
      .describe(
        '"content" (default): matching lines; "files_with_matches": file paths; "count": matches per file; "summary": per file its match count and first match.',
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(
        `Files per page in the paged modes; matching lines shown in content mode (1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}).`,
      ),
    cursor: z
      .string()
      .optional()
      .describe('Paged modes only: the cursor from a previous grep call with the same arguments, for the next page.'),
  })
  .strict()
  .superRefine((args, ctx) => {
    if (args.cursor !== undefined && (args.output_mode ?? 'content') === 'content') {
      ctx.addIssue({
        code: 'custom',
        path: ['cursor'],
        message: 'cursor is only for output_mode files_with_matches, count or summary',
      });
    }
  });

type Args = z.infer<typeof parameters>;

/** A file to search: the path shown for it, and how to open it (confined; the handle is fstat'ed before reading). */
interface SearchTarget {
  readonly shown: string;
  open(): Promise<FileHandle>;
}

interface FileList {
  /** In path order. */
  files: SearchTarget[];
  walkCapped: boolean;
  /** Releases the directories the files are opened from, once the scan is done. */
  close(): void;
}

async function listFiles(
  files: WorkspaceFiles,
  userPath: string,
  glob: string | undefined,
  signal: AbortSignal,
): Promise<FileList> {
  const base = openSearchBase(files, userPath);
  if (base.kind === 'file') {
    const { relative } = base;
    const open = async (): Promise<FileHandle> => (await files.open(relative, constants.O_RDONLY)).handle;
    return { files: [{ shown: relative, open }], walkCapped: false, close: () => undefined };
  }
  // A FIFO, socket or device is not searched (nor walked).
  if (base.kind === 'other') return { files: [], walkCapped: false, close: () => undefined };
  try {
    // Symlinks are not followed (nor listed), and every directory is opened from the one that listed it, so
    // the walk cannot leave the workspace, not even when a directory is swapped for a symlink meanwhile.
    const listing = await globWorkspace(files, base.dir, glob ?? '**/*', {
      ignore: IGNORED_DIRS,
      baseNameMatch: true,
      maxFiles: MAX_FILES_WALKED,
      signal,
    });
    const found = listing.files.map((file) => ({ shown: file.path, open: () => openGlobFile(file) }));
    found.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
    return {
      files: found,
      walkCapped: listing.capped,
      close: () => {
        listing.close();
        base.dir.close();
      },
    };
  } catch (error) {
    base.dir.close();
    throw error;
  }
}

/** One file with matches (paged modes keep every one, to page over them). */
interface FileHits {
  shown: string;
  count: number;
  firstLine: number;
  firstText: string;
}

interface Scan {
  /** Content mode: the output lines. */
  out: string[];
  /** Paged modes: every matching file, in path order. */
  hits: FileHits[];
  anchors: string[];
  matches: number;
  matchedFiles: number;
  /** Content mode stopped at `limit` matching lines. */
  hitLimit: boolean;
  skippedLarge: number;
}

function contentLines(shown: string, lines: string[], hits: number[], context: number, out: string[]): void {
  const hitSet = new Set(hits);
  let last = -1;
  for (const hit of hits) {
    const from = Math.max(0, hit - context, last + 1);
    const to = Math.min(lines.length - 1, hit + context);
    if (context > 0 && out.length > 0 && from > last + 1) out.push('--');
    for (let i = from; i <= to; i++) {
      const sep = hitSet.has(i) ? ':' : '-';
      out.push(`${shown}${sep}${i + 1}${sep}${truncateLine(lines[i])}`);
    }
    last = Math.max(last, to);
  }
}

/** A file's content, or why it is not searched. */
type Loaded = Buffer | 'large' | null;

/** Reads a search target through its opened handle: regular files only (fstat), at most MAX_FILE_BYTES. */
async function load(target: SearchTarget): Promise<Loaded> {
  let handle: FileHandle;
  try {
    handle = await target.open();
  } catch {
    // Gone, or swapped for a symlink or a directory since the walk: not searched.
    return null;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return null;
    if (info.size > MAX_FILE_BYTES) return 'large';
    // The size fstat gave, read at once (readFile would fstat again).
    const bytes = Buffer.allocUnsafe(info.size);
    let total = 0;
    while (total < bytes.length) {
      const { bytesRead } = await handle.read(bytes, total, bytes.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    return bytes.subarray(0, total);
  } catch {
    return null;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

async function scanFiles(
  files: readonly SearchTarget[],
  regex: RegExp,
  args: Args,
  signal: AbortSignal,
): Promise<Scan> {
  const content = (args.output_mode ?? 'content') === 'content';
  const limit = args.limit ?? DEFAULT_LIMIT;
  const context = args.context ?? 0;
  const scan: Scan = { out: [], hits: [], anchors: [], matches: 0, matchedFiles: 0, hitLimit: false, skippedLarge: 0 };
  // Files are searched in path order; the next few are read meanwhile.
  const ahead: Promise<Loaded>[] = [];
  let next = 0;
  try {
    for (let index = 0; index < files.length; index++) {
      if (signal.aborted) break;
      while (ahead.length < READ_AHEAD && next < files.length) ahead.push(load(files[next++]));
      const bytes = await (ahead.shift() as Promise<Loaded>);
      if (bytes === 'large') {
        scan.skippedLarge++;
        continue;
      }
      if (!bytes || looksBinary(bytes)) continue;
      const lines = bytes.toString('utf8').split(/\r?\n/);
      if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
      const hits: number[] = [];
      for (let i = 0; i < lines.length; i++) if (regex.test(lines[i])) hits.push(i);
      if (hits.length === 0) continue;

      const { shown } = files[index];
      if (!content) {
        scan.matchedFiles++;
        scan.matches += hits.length;
        scan.hits.push({ shown, count: hits.length, firstLine: hits[0] + 1, firstText: truncateLine(lines[hits[0]]) });
        continue;
      }
      const budget = limit - scan.matches;
      contentLines(shown, lines, hits.slice(0, budget), context, scan.out);
      scan.anchors.push(shown);
      scan.matches += Math.min(hits.length, budget);
      scan.matchedFiles++;
      if (scan.matches >= limit) {
        // Further files are not searched once the cap is reached, so more matches may exist.
        scan.hitLimit = hits.length > budget || index !== files.length - 1;
        break;
      }
    }
  } finally {
    // Reads started ahead finish (and close their handles) before the directories they use are released.
    await Promise.allSettled(ahead);
  }
  return scan;
}

function pagedLine(mode: Exclude<Args['output_mode'], 'content' | undefined>, hit: FileHits): string {
  if (mode === 'count') return `${hit.shown}:${hit.count}`;
  if (mode === 'summary')
    return `${hit.shown}: ${hit.count} match(es); first at line ${hit.firstLine}: ${hit.firstText}`;
  return hit.shown;
}

/** The `grep` tool: regular-expression search over workspace files, content capped, file lists paged. */
export const grepTool = defineTool({
  name: 'grep',
  permissionPaths: (args) => [{ path: args.path ?? '.', tree: true }],
  description: loadPrompt(import.meta.url, 'grep.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx): Promise<ToolResult> {
    let regex: RegExp;
    try {
      regex = new RegExp(args.pattern, args['-i'] ? 'i' : '');
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      const message = `Invalid regex pattern '${args.pattern}': ${detail}. Escape special characters to match them literally.`;
      return { ...toolError(message, { reason: 'invalid_regex' }), errorKind: { type: 'invalid_argument', message } };
    }
    const mode = args.output_mode ?? 'content';
    const limit = args.limit ?? DEFAULT_LIMIT;
    const offset = parseCursor(args.cursor, 'grep');
    if (typeof offset === 'string')
      return {
        ...toolError(offset, { reason: 'invalid_cursor' }),
        errorKind: { type: 'invalid_argument', message: offset },
      };
    const userPath = args.path ?? '.';
    let listing: FileList;
    try {
      if (args.glob !== undefined) assertConfinedGlob(args.glob);
      listing = await listFiles(ctx.files, userPath, args.glob, ctx.signal);
    } catch (error) {
      return pathErrorResult(error, userPath, 'Path');
    }

    let scan: Scan;
    try {
      scan = await scanFiles(listing.files, regex, args, ctx.signal);
    } finally {
      listing.close();
    }
    if (ctx.signal.aborted)
      return {
        ...toolError('grep was cancelled.', { reason: 'cancelled' }),
        errorKind: { type: 'cancelled', op: 'grep' },
      };
    const notes: string[] = [];
    if (listing.walkCapped)
      notes.push(`(Only the first ${MAX_FILES_WALKED} files were searched; narrow path or glob.)`);
    if (scan.skippedLarge > 0) notes.push(`(${scan.skippedLarge} files larger than 10 MiB were skipped.)`);
    const request = { offset, limit, requestedLimit: limit };
    const search = {
      matching_lines: scan.matches,
      matching_files: scan.matchedFiles,
      truncated: scan.hitLimit || listing.walkCapped,
    };
    const searched = relativeToWorkspace(ctx.workspace, path.resolve(ctx.workspace, userPath));
    const result = (body: string[], anchors: string[], page: Record<string, unknown>): ToolResult => ({
      output: [...body, ...(notes.length > 0 ? ['', ...notes] : [])].join('\n'),
      exitCode: 0,
      metadata: { source_anchors: anchors, output_mode: mode, page, search, path: searched },
    });

    if (scan.matches === 0)
      return result([`No matches found for pattern: ${args.pattern}`], [], listPageMetadata(request, 0, null, 0));
    if (mode === 'content') {
      const footer = `${scan.matches} match(es) in ${scan.matchedFiles} file(s)`;
      const stop = scan.hitLimit
        ? [
            `(Stopped after ${limit} matching lines; there may be more. Narrow the pattern, path or glob, or raise limit.)`,
          ]
        : [];
      const page = {
        ...listPageMetadata(request, scan.matches, null, scan.hitLimit ? null : scan.matches),
        truncated: scan.hitLimit,
      };
      return result([...scan.out, '', footer, ...stop], scan.anchors, page);
    }
    if (offset > scan.hits.length) {
      const message = `cursor offset ${offset} exceeds the ${scan.hits.length} matching file(s)`;
      return { ...toolError(message, { reason: 'invalid_cursor' }), errorKind: { type: 'invalid_argument', message } };
    }
    const end = Math.min(scan.hits.length, offset + limit);
    const next = end < scan.hits.length ? String(end) : null;
    const shown = scan.hits.slice(offset, end);
    const footer = [
      `${end - offset} of ${scan.hits.length} matching file(s) shown`,
      ...(next !== null ? [`More files available; continue with cursor=${next}`] : []),
    ];
    return result(
      [...shown.map((hit) => pagedLine(mode, hit)), '', ...footer],
      shown.map((hit) => hit.shown),
      listPageMetadata(request, shown.length, next, scan.hits.length),
    );
  },
});
