import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { applyPatch, parsePatch, type StructuredPatch, type StructuredPatchHunk } from 'diff';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { contentMetadata, errnoCode, pathErrorResult } from '../tool-file-helpers.js';
import { relativeToWorkspace, resolveInWorkspace } from '../workspace-path.js';

const DEV_NULL = '/dev/null';

const parameters = z
  .object({
    file_path: z.string().min(1).describe('Required. Path of the file to patch, relative to the workspace (or absolute inside it).'),
    diff: z.string().min(1).describe('Required. Unified diff content with @@ hunk headers (---/+++ headers optional).'),
  })
  .strict();

type Action = 'A' | 'M' | 'D' | 'R';

/** One file change, fully computed before anything is written. */
interface PlannedChange {
  action: Action;
  /** Where the new content goes (absent for a deletion). */
  target?: string;
  /** The file that disappears (deletion or rename source). */
  removed?: string;
  content: string;
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

async function readExisting(absPath: string, shown: string): Promise<string> {
  try {
    if ((await stat(absPath)).isDirectory()) throw new PatchFailure(`${shown} is a directory, not a file.`, 'is_directory');
    return await readFile(absPath, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw new PatchFailure(`File not found: ${shown} (use --- /dev/null to create a file).`, 'not_found');
    throw error;
  }
}

async function exists(absPath: string): Promise<boolean> {
  try {
    await stat(absPath);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}

async function resolveHeaderPath(workspace: string, name: string): Promise<string> {
  try {
    return await resolveInWorkspace(workspace, name);
  } catch (error) {
    const result = pathErrorResult(error, name);
    throw new PatchFailure(`${result.output} (in patch header for ${name})`, 'workspace_escape');
  }
}

/** Compute every change in memory; later entries for the same file see the earlier entries' result. */
async function planChanges(workspace: string, entries: StructuredPatch[], filePath: string | undefined): Promise<PlannedChange[]> {
  const pending = new Map<string, string | null>();
  const current = async (absPath: string, shown: string): Promise<string | null> =>
    pending.has(absPath) ? (pending.get(absPath) ?? null) : (await exists(absPath)) ? readExisting(absPath, shown) : null;
  const plan: PlannedChange[] = [];

  for (const entry of entries) {
    const { oldName, newName } = headerNames(entry);
    const creating = oldName === DEV_NULL;
    const deleting = newName === DEV_NULL;
    const sourceName = filePath ?? (creating ? newName : oldName ?? newName);
    const targetName = filePath ?? (deleting ? oldName : newName ?? oldName);
    if (!sourceName || !targetName || sourceName === DEV_NULL || targetName === DEV_NULL) {
      throw new PatchFailure('The patch has no ---/+++ file headers; add them or pass file_path.', 'no_file_name');
    }
    const sourceAbs = await resolveHeaderPath(workspace, sourceName);
    const targetAbs = await resolveHeaderPath(workspace, targetName);
    const shown = relativeToWorkspace(workspace, targetAbs);
    const before = await current(sourceAbs, relativeToWorkspace(workspace, sourceAbs));
    const pureAddition = entry.hunks.every((hunk) => hunk.oldLines === 0);

    if (before === null && !(creating || (filePath !== undefined && pureAddition))) {
      throw new PatchFailure(`File not found: ${relativeToWorkspace(workspace, sourceAbs)} (use --- /dev/null to create a file).`, 'not_found');
    }
    if (creating && before !== null) {
      throw new PatchFailure(`${shown} already exists, but the patch creates it (--- /dev/null).`, 'already_exists');
    }
    const after = applyHunks(before ?? '', entry, shown);
    if (deleting) {
      if (after !== '') throw new PatchFailure(`The patch deletes ${shown} but does not remove all of its lines. No files were changed.`, 'hunk_failed');
      pending.set(sourceAbs, null);
      plan.push({ action: 'D', removed: sourceAbs, content: '' });
      continue;
    }
    const renaming = sourceAbs !== targetAbs;
    if (renaming && (await current(targetAbs, shown)) !== null) {
      throw new PatchFailure(`${shown} already exists, but the patch renames ${oldName} to it.`, 'already_exists');
    }
    pending.set(targetAbs, after);
    if (renaming) pending.set(sourceAbs, null);
    plan.push({
      action: renaming ? 'R' : before === null ? 'A' : 'M',
      target: targetAbs,
      removed: renaming ? sourceAbs : undefined,
      content: after,
    });
  }
  return plan;
}

/** Write the plan; if a write fails midway, put back what was already changed. */
async function commit(plan: PlannedChange[]): Promise<void> {
  const originals = new Map<string, string | null>();
  const remember = async (absPath: string): Promise<void> => {
    if (!originals.has(absPath)) originals.set(absPath, (await exists(absPath)) ? await readFile(absPath, 'utf8') : null);
  };
  try {
    for (const change of plan) {
      if (change.target) {
        await remember(change.target);
        await mkdir(path.dirname(change.target), { recursive: true });
        await writeFile(change.target, change.content, 'utf8');
      }
      if (change.removed) {
        await remember(change.removed);
        await rm(change.removed, { force: true });
      }
    }
  } catch (error) {
    for (const [absPath, content] of originals) {
      if (content === null) await rm(absPath, { force: true }).catch(() => undefined);
      else await writeFile(absPath, content, 'utf8').catch(() => undefined);
    }
    throw error;
  }
}

/** The `patch` tool: apply a multi-file unified diff, all or nothing. */
export const patchTool = defineTool({
  name: 'patch',
  description: loadPrompt(import.meta.url, 'patch.md'),
  parameters,
  readOnly: false,
  async execute(args, ctx): Promise<ToolResult> {
    let entries: StructuredPatch[];
    try {
      entries = parsePatch(args.diff).filter((entry) => entry.hunks.length > 0);
    } catch (error) {
      return toolError(`Could not parse the patch: ${error instanceof Error ? error.message : String(error)}`, { reason: 'parse_error' });
    }
    if (entries.length === 0) return toolError('The patch contains no hunks (lines starting with @@).', { reason: 'parse_error' });
    if (entries.length > 1) {
      return toolError(`The diff changes ${entries.length} files; patch applies to one file (file_path). Call patch once per file.`, { reason: 'many_files' });
    }
    let before: string | null;
    try {
      const absPath = await resolveInWorkspace(ctx.workspace, args.file_path);
      before = (await exists(absPath)) ? await readFile(absPath, 'utf8') : null;
    } catch (error) {
      return pathErrorResult(error, args.file_path);
    }
    let plan: PlannedChange[];
    try {
      plan = await planChanges(ctx.workspace, entries, args.file_path);
      await commit(plan);
    } catch (error) {
      if (error instanceof PatchFailure) return toolError(error.message, { reason: error.reason });
      return pathErrorResult(error, args.file_path);
    }
    const change = plan[0];
    const shown = relativeToWorkspace(ctx.workspace, (change.target ?? change.removed) as string);
    const hunks = entries[0].hunks.length;
    return {
      output: `Applied ${hunks} hunk(s) to ${shown}`,
      exitCode: 0,
      metadata: { file_path: shown, ...contentMetadata('before', before ?? ''), ...contentMetadata('after', change.target ? change.content : ''), action: change.action },
    };
  },
});
