import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { isInside, locate } from '../workspace/confined-walk.js';
import { openConfiguredDirectory, openHeldDirectory, type HeldDirectory } from '../workspace/held-directory.js';
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
  /** The combined budget in bytes; 0 disables the chain (nothing is opened). */
  readonly maxBytes: number;
  /** File names tried in each directory after AGENTS.override.md and AGENTS.md (project_doc_fallback_filenames). */
  readonly fallbackNames?: readonly string[];
  /** The operator's personal instructions directory (user_instructions_dir): read first, when set. */
  readonly personalDir?: string;
}

/** The seed's (and Codex's) names tried first in each directory: the override wins over AGENTS.md. */
export const AGENTS_MD_NAMES = ['AGENTS.override.md', 'AGENTS.md'] as const;

/** The names tried in each directory, in order: AGENTS.override.md, AGENTS.md, then the fallbacks (each once). */
export function instructionFileNames(fallbackNames: readonly string[] = []): string[] {
  return [...new Set([...AGENTS_MD_NAMES, ...fallbackNames])];
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

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The text of bytes that must be UTF-8, or undefined; a cut may split the last character, which is dropped then. */
function decodeUtf8(bytes: Buffer, truncated: boolean): string | undefined {
  for (let drop = 0; drop <= (truncated ? 3 : 0) && drop < bytes.length; drop++) {
    try {
      return UTF8.decode(bytes.subarray(0, bytes.length - drop));
    } catch {
      // try one byte shorter (a cut character)
    }
  }
  return bytes.length === 0 ? '' : undefined;
}

type ReadResult = { text: string; bytes: number; truncated: boolean } | { skipped: string | undefined };

/** One instruction file, read confined: its text (at most `maxBytes`) or why it was skipped. */
async function readOne(root: HeldDirectory, file: string, maxBytes: number): Promise<ReadResult> {
  let opened;
  try {
    opened = await openConfinedFile(root, file);
  } catch (error) {
    return { skipped: skipReason(error, root.path) };
  }
  try {
    const { bytes, truncated } = await readBounded(opened.handle, maxBytes);
    const text = decodeUtf8(bytes, truncated);
    if (text === undefined) return { skipped: 'it is not valid UTF-8' };
    return { text, bytes: Buffer.byteLength(text), truncated };
  } catch (error) {
    return { skipped: skipReason(error, root.path) };
  } finally {
    await opened.handle.close();
  }
}

/**
 * The instructions that apply to a workspace: the operator's personal directory first (AGENTS.override.md, else
 * AGENTS.md), then in each directory from the git root down to the workspace
 * (outermost first) the first non-empty of AGENTS.override.md, AGENTS.md and the fallback names, within
 * `maxBytes` in all (the rest is cut with a note; 0 reads nothing). Each is read through the confinement root
 * held open (see `openConfinedFile`): never above it, a symlink followed only while it stays inside it, only
 * regular UTF-8 files. One leading elsewhere (`/proc/self/environ`, another tenant's file, the data directory)
 * is skipped, named in `skipped`, and the next name of that directory is tried.
 */
export async function loadAgentsMd(request: AgentsMdRequest): Promise<AgentsMd> {
  const { workspace, maxBytes } = request;
  if (maxBytes <= 0) return { text: '', skipped: [] };
  const chain = new ChainReader(maxBytes);
  if (request.personalDir !== undefined) {
    // The operator's own directory (trusted config), held open like a workspace: links stay inside it.
    const personal = await openConfiguredDirectory(request.personalDir);
    if (personal !== undefined) {
      try {
        await chain.directory(personal, '', AGENTS_MD_NAMES, (file) => path.join(personal.path, file));
      } finally {
        personal.close();
      }
    }
  }
  const names = instructionFileNames(request.fallbackNames);
  const confinement = isInside(request.confinement, workspace) ? request.confinement : workspace;
  const root = openHeldDirectory(confinement);
  try {
    for (const dir of await agentsMdChain(root, path.relative(confinement, workspace))) {
      if (chain.full) break;
      await chain.directory(root, dir, names, (file) =>
        path.relative(workspace, path.join(confinement, file)).split(path.sep).join('/'),
      );
    }
    return chain.result();
  } finally {
    root.close();
  }
}

/** Reads the chain's directories in order within one budget, collecting the parts and the skipped files. */
class ChainReader {
  private readonly parts: string[] = [];
  private readonly skipped: SkippedFile[] = [];
  private used = 0;

  constructor(private readonly maxBytes: number) {}

  get full(): boolean {
    return this.maxBytes - this.used <= 0;
  }

  /** The first non-empty of `names` in `dir` below `root` (a skipped one passes to the next name). */
  async directory(
    root: HeldDirectory,
    dir: string,
    names: readonly string[],
    labelOf: (file: string) => string,
  ): Promise<void> {
    for (const name of names) {
      if (this.full) return;
      const file = path.join(dir, name);
      const label = labelOf(file);
      const read = await readOne(root, file, this.maxBytes - this.used);
      if ('skipped' in read) {
        if (read.skipped !== undefined)
          this.skipped.push({ path: label, message: `AGENTS.md "${label}" was skipped: ${read.skipped}` });
        continue;
      }
      // An empty file does not count: the next name of the directory is tried.
      if (read.text.trim() === '') continue;
      this.used += read.bytes;
      const body = read.truncated ? `${read.text}\n[AGENTS.md cut at ${this.maxBytes} bytes]` : read.text;
      this.parts.push(`<agents_md path="${label}">\n${body.trim()}\n</agents_md>`);
      return;
    }
  }

  result(): AgentsMd {
    return { text: this.parts.join('\n\n'), skipped: this.skipped };
  }
}
