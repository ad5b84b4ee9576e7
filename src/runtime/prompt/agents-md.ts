import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { isInside, locate } from '../workspace/confined-walk.js';
import { openHeldDirectory, type HeldDirectory } from '../workspace/held-directory.js';
import { openConfinedFile, readBounded } from '../workspace/read-confined-file.js';
import { NotRegularFileError } from '../workspace/not-regular-file-error.js';
import { WorkspaceEscapeError } from '../workspace/workspace-errors.js';

/** A file the server would have read from a workspace and did not: where, and why (an init warning and a `workspace_warning` event). */
export interface SkippedFile {
  /** The file as the prompt names it: relative to the workspace (`AGENTS.md`, `../AGENTS.md`). */
  readonly path: string;
  readonly message: string;
}

/** The AGENTS.md text of a workspace and the files skipped on the way. */
export interface AgentsMd {
  readonly text: string;
  readonly skipped: readonly SkippedFile[];
}

/** Where the chain is read: the session's workspace and the directory no file may be read from outside of. */
export interface AgentsMdRequest {
  /** The session's canonical workspace. */
  readonly workspace: string;
  /** Its confinement root: the tenant's own directory (tenants split), else the workspace root holding it. */
  readonly confinement: string;
  readonly maxBytes: number;
}

/** The directories (relative to the confinement root) from `dir` up to the root itself: `a/b`, `a`, ``. */
function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    out.push(at === '.' ? '' : at);
    if (at === '' || at === '.') return out;
  }
}

/** True when `<dir>/.git` exists below the held root (not followed: a link named .git still marks a repo). */
function hasGit(root: HeldDirectory, dir: string): boolean {
  try {
    const location = locate(root, path.join(dir, '.git'), { followFinal: false });
    location.close();
    return location.stats !== null;
  } catch {
    return false;
  }
}

/** True when a directory above the confinement root (the operator's, never read) holds `.git`. */
async function gitAbove(confinement: string): Promise<boolean> {
  for (let dir = path.dirname(confinement); ; dir = path.dirname(dir)) {
    if (
      await lstat(path.join(dir, '.git')).then(
        () => true,
        () => false,
      )
    )
      return true;
    if (path.dirname(dir) === dir) return false;
  }
}

/**
 * The directories (relative to the confinement root, outermost first) whose AGENTS.md apply: from the git root
 * down to the workspace, cut at the confinement root when the repository starts above it; the workspace alone
 * when it is in no repository.
 */
export async function agentsMdChain(root: HeldDirectory, workspaceDir: string): Promise<string[]> {
  const dirs = ancestors(workspaceDir);
  const git = dirs.findIndex((dir) => hasGit(root, dir));
  if (git >= 0) return dirs.slice(0, git + 1).reverse();
  return (await gitAbove(root.path)) ? dirs.reverse() : [workspaceDir];
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/** Why a file was not read, or undefined when it is simply not there (no warning). */
function skipReason(error: unknown, confinement: string): string | undefined {
  if (error instanceof WorkspaceEscapeError)
    return `${error.reason}, outside ${confinement} (the directory this session's instruction files are read from)`;
  if (error instanceof NotRegularFileError) return `it is ${error.description}, not a regular file`;
  const code = errnoCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
  if (code === 'ELOOP') return 'too many levels of symbolic links';
  return `it could not be read (${code ?? (error instanceof Error ? error.message : String(error))})`;
}

/** One AGENTS.md, read confined: its text (at most `maxBytes`) or why it was skipped. */
async function readOne(
  root: HeldDirectory,
  file: string,
  maxBytes: number,
): Promise<{ text: string; bytes: number; truncated: boolean } | { skipped: string | undefined }> {
  let opened;
  try {
    opened = await openConfinedFile(root, file);
  } catch (error) {
    return { skipped: skipReason(error, root.path) };
  }
  try {
    const { bytes, truncated } = await readBounded(opened.handle, maxBytes);
    return { text: bytes.toString('utf8'), bytes: bytes.length, truncated };
  } catch (error) {
    return { skipped: skipReason(error, root.path) };
  } finally {
    await opened.handle.close();
  }
}

/**
 * The AGENTS.md instructions that apply to a workspace: every AGENTS.md from the git root down to the
 * workspace, outermost first, within `maxBytes` in all (the rest is cut with a note). Each is read through the
 * confinement root held open (see `openConfinedFile`): never above it, a symlink followed only while it stays
 * inside it, only regular files. One leading elsewhere (`/proc/self/environ`, another tenant's file, the data
 * directory) is skipped and named in `skipped`.
 */
export async function loadAgentsMd(request: AgentsMdRequest): Promise<AgentsMd> {
  const { workspace, maxBytes } = request;
  const confinement = isInside(request.confinement, workspace) ? request.confinement : workspace;
  const root = openHeldDirectory(confinement);
  try {
    const parts: string[] = [];
    const skipped: SkippedFile[] = [];
    let used = 0;
    for (const dir of await agentsMdChain(root, path.relative(confinement, workspace))) {
      const remaining = maxBytes - used;
      if (remaining <= 0) break;
      const file = path.join(dir, 'AGENTS.md');
      const label = path.relative(workspace, path.join(confinement, file)).split(path.sep).join('/');
      const read = await readOne(root, file, remaining);
      if ('skipped' in read) {
        if (read.skipped !== undefined)
          skipped.push({ path: label, message: `AGENTS.md "${label}" was skipped: ${read.skipped}` });
        continue;
      }
      used += read.bytes;
      const body = read.truncated ? `${read.text}\n[AGENTS.md cut at ${maxBytes} bytes]` : read.text;
      parts.push(`<agents_md path="${label}">\n${body.trim()}\n</agents_md>`);
    }
    return { text: parts.join('\n\n'), skipped };
  } finally {
    root.close();
  }
}
