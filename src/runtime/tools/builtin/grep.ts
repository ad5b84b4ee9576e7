import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import fg from 'fast-glob';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { looksBinary, pathErrorResult, truncateLine } from '../tool-file-helpers.js';
import { assertConfinedGlob, relativeToWorkspace, resolveInWorkspace } from '../workspace-path.js';

const DEFAULT_LIMIT = 200;
const MAX_LIMIT = 5000;
const MAX_CONTEXT = 20;
const MAX_FILE_BYTES = 10 * 1024 * 1024;
// Bounds the file list held in memory while walking a huge tree.
const MAX_FILES_WALKED = 200_000;
const IGNORED_DIRS = ['**/node_modules/**', '**/.git/**', '**/dist/**'];

const parameters = z
  .object({
    pattern: z.string().min(1).describe('JavaScript regular expression to search for, matched against each line.'),
    path: z.string().min(1).optional().describe('File or directory to search, relative to the workspace (default: the workspace).'),
    glob: z.string().min(1).optional().describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.{ts,tsx}".'),
    '-i': z.boolean().optional().describe('Case-insensitive search (default false).'),
    context: z.number().int().min(0).max(MAX_CONTEXT).optional().describe('Lines of context to show before and after each match (content mode only).'),
    output_mode: z
      .enum(['content', 'files_with_matches', 'count'])
      .optional()
      .describe('"content" (default): matching lines; "files_with_matches": file paths; "count": matches per file.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(`Maximum number of matching lines (content mode) or files (other modes) to return (default ${DEFAULT_LIMIT}).`),
  })
  .strict();

type Args = z.infer<typeof parameters>;

interface FileList {
  files: string[];
  walkCapped: boolean;
}

async function listFiles(target: string, glob: string | undefined): Promise<FileList> {
  if ((await stat(target)).isFile()) return { files: [target], walkCapped: false };
  const files: string[] = [];
  let walkCapped = false;
  // Symlinks are not followed (and, with onlyFiles, not listed), so the walk cannot leave the workspace.
  const stream = fg.stream(glob ?? '**/*', {
    cwd: target,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    baseNameMatch: true,
    ignore: IGNORED_DIRS,
    suppressErrors: true,
  });
  for await (const entry of stream) {
    if (files.length >= MAX_FILES_WALKED) {
      walkCapped = true;
      break;
    }
    files.push(String(entry));
  }
  files.sort();
  return { files, walkCapped };
}

interface Scan {
  out: string[];
  matches: number;
  matchedFiles: number;
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

async function scanFiles(files: string[], regex: RegExp, args: Args, workspace: string, signal: AbortSignal): Promise<Scan> {
  const mode = args.output_mode ?? 'content';
  const limit = args.limit ?? DEFAULT_LIMIT;
  const context = args.context ?? 0;
  const scan: Scan = { out: [], matches: 0, matchedFiles: 0, hitLimit: false, skippedLarge: 0 };
  for (const file of files) {
    if (signal.aborted) break;
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) continue;
    if (info.size > MAX_FILE_BYTES) {
      scan.skippedLarge++;
      continue;
    }
    const bytes = await readFile(file).catch(() => null);
    if (!bytes || looksBinary(bytes)) continue;
    const lines = bytes.toString('utf8').split(/\r?\n/);
    if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    const hits: number[] = [];
    for (let i = 0; i < lines.length; i++) if (regex.test(lines[i])) hits.push(i);
    if (hits.length === 0) continue;

    const shown = relativeToWorkspace(workspace, file);
    if (mode === 'content') {
      const budget = limit - scan.matches;
      contentLines(shown, lines, hits.slice(0, budget), context, scan.out);
      scan.matches += Math.min(hits.length, budget);
      scan.matchedFiles++;
      if (scan.matches >= limit) {
        // Further files are not searched once the cap is reached, so more matches may exist.
        scan.hitLimit = hits.length > budget || file !== files[files.length - 1];
        break;
      }
    } else {
      if (scan.matchedFiles >= limit) {
        scan.hitLimit = true;
        break;
      }
      scan.matchedFiles++;
      scan.matches += hits.length;
      scan.out.push(mode === 'count' ? `${shown}:${hits.length}` : shown);
    }
  }
  return scan;
}

/** The `grep` tool: regular-expression search over workspace files, bounded by a match limit. */
export const grepTool = defineTool({
  name: 'grep',
  description: loadPrompt(import.meta.url, 'grep.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx): Promise<ToolResult> {
    let regex: RegExp;
    try {
      regex = new RegExp(args.pattern, args['-i'] ? 'i' : '');
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return toolError(`Invalid regular expression ${JSON.stringify(args.pattern)}: ${detail}. Escape special characters to match them literally.`, {
        reason: 'invalid_regex',
      });
    }
    const userPath = args.path ?? '.';
    let listing: FileList;
    try {
      if (args.glob !== undefined) assertConfinedGlob(args.glob);
      const target = await resolveInWorkspace(ctx.workspace, userPath, { mustExist: true });
      listing = await listFiles(target, args.glob);
    } catch (error) {
      return pathErrorResult(error, userPath, 'Path');
    }

    const scan = await scanFiles(listing.files, regex, args, ctx.workspace, ctx.signal);
    if (ctx.signal.aborted) return toolError('grep was cancelled.', { reason: 'cancelled' });
    const notes: string[] = [];
    const limit = args.limit ?? DEFAULT_LIMIT;
    if (scan.hitLimit) {
      const unit = (args.output_mode ?? 'content') === 'content' ? 'matches' : 'files';
      notes.push(`(Stopped after ${limit} ${unit}; there may be more. Narrow the pattern, path or glob, or raise limit.)`);
    }
    if (listing.walkCapped) notes.push(`(Only the first ${MAX_FILES_WALKED} files were searched; narrow path or glob.)`);
    if (scan.skippedLarge > 0) notes.push(`(${scan.skippedLarge} files larger than 10 MiB were skipped.)`);
    const body = scan.out.length > 0 ? scan.out.join('\n') : 'No matches found.';
    return {
      output: notes.length > 0 ? `${body}\n\n${notes.join('\n')}` : body,
      exitCode: 0,
      metadata: {
        matches: scan.matches,
        files: scan.matchedFiles,
        truncated: scan.hitLimit || listing.walkCapped,
        path: relativeToWorkspace(ctx.workspace, path.resolve(ctx.workspace, userPath)),
      },
    };
  },
});
