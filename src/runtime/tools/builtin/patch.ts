import { constants } from 'node:fs';
import { applyPatch, parsePatch, type StructuredPatch, type StructuredPatchHunk } from 'diff';
import { z } from 'zod';
import { canonicalName } from '../../workspace/canonical-name.js';
import { openRegularFile, replaceContent, writeAll, type OpenedRegularFile } from '../../workspace/regular-file.js';
import type { WorkspaceFiles } from '../../workspace/workspace-files.js';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { contentMetadata, errnoCode, pathErrorResult } from '../tool-file-helpers.js';

const DEV_NULL = '/dev/null';

const parameters = z
  .object({
    file_path: z
      .string()
      .min(1)
      .describe('Required. Path of the file to patch, relative to the workspace (or absolute inside it).'),
    diff: z.string().min(1).describe('Required. Unified diff content with @@ hunk headers (---/+++ headers optional).'),
  })
  .strict();

type Action = 'A' | 'M' | 'D';

/** The change to the one file, fully computed before anything is written. */
interface PlannedChange {
  action: Action;
  /** The new content (empty for a deletion). */
  content: string;
}

/** The file being patched: its handle (read-write) and content when it exists, else only its name. */
interface PatchTarget {
  readonly file?: OpenedRegularFile;
  readonly before: string | null;
  /** Its canonical path relative to the workspace. */
  readonly shown: string;
}

/** A failure the model should see as the tool's result. */
class PatchFailure extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

function hunkHeader(hunk: StructuredPatchHunk): string {
  // parsePatch bumps the start of an empty side by one; undo it to quote the header as written.
  const oldStart = hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart;
  const newStart = hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart;
  return `@@ -${oldStart},${hunk.oldLines} +${newStart},${hunk.newLines} @@`;
}

/** File names from the headers, with git's `a/` and `b/` prefixes removed when both sides use them. */
function headerNames(entry: StructuredPatch): { oldName?: string; newName?: string } {
  let oldName = entry.oldFileName || undefined;
  let newName = entry.newFileName || undefined;
  const gitStyle =
    (oldName === undefined || oldName === DEV_NULL || oldName.startsWith('a/')) &&
    (newName === undefined || newName === DEV_NULL || newName.startsWith('b/')) &&
    (oldName !== undefined || newName !== undefined);
  if (gitStyle) {
    if (oldName && oldName !== DEV_NULL) oldName = oldName.slice(2);
    if (newName && newName !== DEV_NULL) newName = newName.slice(2);
  }
  return { oldName, newName };
}

/** Apply hunks exactly (no fuzz); on failure name the first hunk that does not fit. */
function applyHunks(source: string, entry: StructuredPatch, shown: string): string {
  const result = applyPatch(source, entry);
  if (result !== false) return result;
  let failing = entry.hunks[entry.hunks.length - 1];
  for (let count = 1; count <= entry.hunks.length; count++) {
    if (applyPatch(source, { ...entry, hunks: entry.hunks.slice(0, count) }) === false) {
      failing = entry.hunks[count - 1];
      break;
    }
  }
  throw new PatchFailure(
    `Hunk ${hunkHeader(failing)} does not apply to ${shown}: its context or removed lines do not match the file. No files were changed.`,
    'hunk_failed',
  );
}

/** Opens the file to patch through the confined walk and reads it; a missing file has no handle and no content. */
async function openTarget(files: WorkspaceFiles, userPath: string): Promise<PatchTarget> {
  let file: OpenedRegularFile;
  try {
    file = await openRegularFile(files, userPath, constants.O_RDWR);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
    return { before: null, shown: canonicalName(files, userPath).relative };
  }
  try {
    return { file, before: await file.handle.readFile('utf8'), shown: file.relative };
  } catch (error) {
    await file.handle.close().catch(() => undefined);
    throw error;
  }
}

/** Compute the change in memory (nothing is written): what the hunks make of the file, or why they do not apply. */
function planChange(entry: StructuredPatch, target: PatchTarget): PlannedChange {
  const { oldName, newName } = headerNames(entry);
  const creating = oldName === DEV_NULL;
  const deleting = newName === DEV_NULL;
  const { before, shown } = target;
  // `file_path` names the file; a patch of only added lines may create it without a /dev/null header.
  const pureAddition = entry.hunks.every((hunk) => hunk.oldLines === 0);
  if (before === null && !(creating || pureAddition)) {
    throw new PatchFailure(`File not found: ${shown} (use --- /dev/null to create a file).`, 'not_found');
  }
  if (creating && before !== null) {
    throw new PatchFailure(`${shown} already exists, but the patch creates it (--- /dev/null).`, 'already_exists');
  }
  const after = applyHunks(before ?? '', entry, shown);
  if (deleting) {
    if (after !== '')
      throw new PatchFailure(
        `The patch deletes ${shown} but does not remove all of its lines. No files were changed.`,
        'hunk_failed',
      );
    return { action: 'D', content: '' };
  }
  return { action: before === null ? 'A' : 'M', content: after };
}

/**
 * Write the change through handles of the confined walk: the opened file is rewritten in place (truncated only
 * now), a new file is created with O_CREAT|O_EXCL where the walk leads, a deleted one is unlinked in the
 * directory the walk holds. If a write fails midway, what was there is put back. Answers the file's name.
 */
async function commit(
  files: WorkspaceFiles,
  userPath: string,
  target: PatchTarget,
  change: PlannedChange,
): Promise<string> {
  const { file } = target;
  if (change.action === 'D') {
    if (!file) return target.shown;
    await file.handle.close();
    await files.remove(file.relative);
    return file.relative;
  }
  if (file) {
    try {
      await replaceContent(file.handle, change.content);
    } catch (error) {
      await replaceContent(file.handle, target.before ?? '').catch(() => undefined);
      throw error;
    }
    return file.relative;
  }
  let created: OpenedRegularFile;
  try {
    created = await openRegularFile(files, userPath, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, {
      createParents: true,
    });
  } catch (error) {
    if (errnoCode(error) === 'EEXIST')
      throw new PatchFailure(
        `${target.shown} already exists, but the patch creates it (--- /dev/null).`,
        'already_exists',
      );
    throw error;
  }
  try {
    await writeAll(created.handle, Buffer.from(change.content, 'utf8'), 0);
  } catch (error) {
    await files.remove(created.relative).catch(() => undefined);
    throw error;
  } finally {
    await created.handle.close().catch(() => undefined);
  }
  return created.relative;
}

/** The `patch` tool: apply a unified diff to one file (`file_path`), all or nothing. */
export const patchTool = defineTool({
  name: 'patch',
  permissionPaths: (args) => [{ path: args.file_path }],
  description: loadPrompt(import.meta.url, 'patch.md'),
  parameters,
  readOnly: false,
  async execute(args, ctx): Promise<ToolResult> {
    let entries: StructuredPatch[];
    try {
      entries = parsePatch(args.diff).filter((entry) => entry.hunks.length > 0);
    } catch (error) {
      return toolError(`Could not parse the patch: ${error instanceof Error ? error.message : String(error)}`, {
        reason: 'parse_error',
      });
    }
    if (entries.length === 0)
      return toolError('The patch contains no hunks (lines starting with @@).', { reason: 'parse_error' });
    if (entries.length > 1) {
      return toolError(
        `The diff changes ${entries.length} files; patch applies to one file (file_path). Call patch once per file.`,
        { reason: 'many_files' },
      );
    }
    let target: PatchTarget | undefined;
    let change: PlannedChange;
    let shown: string;
    try {
      target = await openTarget(ctx.files, args.file_path);
      change = planChange(entries[0], target);
      shown = await commit(ctx.files, args.file_path, target, change);
    } catch (error) {
      if (error instanceof PatchFailure) return toolError(error.message, { reason: error.reason });
      return pathErrorResult(error, args.file_path);
    } finally {
      await target?.file?.handle.close().catch(() => undefined);
    }
    const hunks = entries[0].hunks.length;
    return {
      output: `Applied ${hunks} hunk(s) to ${shown}`,
      exitCode: 0,
      metadata: {
        file_path: shown,
        ...contentMetadata('before', target.before ?? ''),
        ...contentMetadata('after', change.content),
        action: change.action,
      },
    };
  },
});
