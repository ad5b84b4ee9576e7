import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { walkConfinedTree } from '../workspace/confined-tree-walk.js';
import { fdPath } from '../workspace/confined-walk.js';
import { DirectoryReopener } from '../workspace/directory-reopener.js';
import { WorkspaceEscapeError } from '../workspace/workspace-errors.js';
import type { OpenedDirectory, WorkspaceFiles } from '../workspace/workspace-files.js';
import { globTasks, withoutLeadingDot, type GlobOptions, type GlobTask } from './glob-tasks.js';

/** A regular file a glob matched. */
export interface GlobFile {
  /** Relative to the workspace, `/`-separated (through the names walked, not resolved further). */
  readonly path: string;
  readonly source: DirectoryReopener;
  /** Its directory relative to `source.start` ('' for the start itself). */
  readonly dir: string;
  readonly name: string;
}

/** The files matched, in walk order; `close()` once they are no longer opened. */
export interface GlobListing {
  readonly files: GlobFile[];
  /** More than `maxFiles` files matched: only the first ones found are listed. */
  readonly capped: boolean;
  close(): void;
}

/** Options of `globWorkspace`. */
export interface GlobWorkspaceOptions extends GlobOptions {
  readonly maxFiles: number;
  readonly signal: AbortSignal;
}

/** Opens a matched file for reading (not following a symlink: a file swapped for one since fails with ELOOP). */
export function openGlobFile(file: GlobFile): Promise<FileHandle> {
  return file.source.openFile(file.dir, file.name);
}

/** A base that is missing, not a directory, or leads out of the workspace matches nothing (WORKSPACE_CHANGED still fails). */
function isMissingBase(error: unknown): boolean {
  return (
    error instanceof WorkspaceEscapeError ||
    (error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string')
  );
}

/**
 * The regular files below an opened search directory that match `pattern`, with fast-glob's semantics as
 * the tools used it (dot files, onlyFiles, symlinks neither followed nor listed, errors suppressed), found
 * confined by what was opened: the search directory and each pattern's literal base are opened through the
 * workspace (`openDirectory`: a symlink there is followed only while it stays inside), then walked with
 * `walkConfinedTree`; a literal pattern path is looked up in its opened parent without following its last
 * name. Throws WorkspaceEscapeError for a pattern that climbs out (`..`, absolute, also in a brace alternative).
 */
export async function globWorkspace(
  files: WorkspaceFiles,
  base: OpenedDirectory,
  pattern: string,
  options: GlobWorkspaceOptions,
): Promise<GlobListing> {
  const tasks = globTasks(pattern, options);
  const baseRel = base.relative === '.' ? '' : base.relative;
  const display = (entry: string): string => (baseRel === '' ? entry : `${baseRel}/${entry}`);
  const sources = new Map<string, DirectoryReopener | null>();
  const found: GlobFile[] = [];
  const seen = new Set<string>();
  let capped = false;
  const add = (entry: string, file: GlobFile): boolean => {
    if (found.length >= options.maxFiles) {
      capped = true;
      return false;
    }
    seen.add(entry);
    found.push(file);
    return true;
  };
  /** The directory at `rel` below the search directory, opened confined (links inside followed); null when not there. */
  const open = (rel: string): DirectoryReopener | null => {
    if (sources.has(rel)) return sources.get(rel) ?? null;
    let source: DirectoryReopener | null = null;
    try {
      source =
        rel === '.'
          ? new DirectoryReopener(files, base, false)
          : new DirectoryReopener(files, files.openDirectory(path.posix.join(baseRel || '.', rel)), true);
    } catch (error) {
      if (!isMissingBase(error)) throw error;
    }
    sources.set(rel, source);
    return source;
  };
  const listing: GlobListing = {
    files: found,
    get capped() {
      return capped;
    },
    close: () => {
      for (const source of sources.values()) source?.close();
      sources.clear();
    },
  };
  try {
    for (const task of tasks) {
      if (capped || options.signal.aborted) break;
      if (task.dynamic) await walkTask(task, open, display, seen, add, files, options.signal);
      else await statTask(task, open, display, seen, add, options.signal);
    }
    return listing;
  } catch (error) {
    listing.close();
    throw error;
  }
}

type Add = (entry: string, file: GlobFile) => boolean;
type Open = (rel: string) => DirectoryReopener | null;

async function walkTask(
  task: GlobTask,
  open: Open,
  display: (entry: string) => string,
  seen: Set<string>,
  add: Add,
  files: WorkspaceFiles,
  signal: AbortSignal,
): Promise<void> {
  const source = open(task.base);
  if (!source) return;
  const prefix = task.base === '.' ? '' : task.base;
  const skip = prefix === '' ? 0 : prefix.length + 1;
  await walkConfinedTree(
    files,
    source.start,
    {
      descend: (entry) => task.descend(entry),
      entry: (_dir, dirent, entry) => {
        if (!dirent.isFile() || seen.has(entry) || !task.matches(entry)) return true;
        const slash = entry.lastIndexOf('/');
        const dir = slash < skip ? '' : entry.slice(skip, slash);
        return add(entry, { path: display(entry), source, dir, name: dirent.name });
      },
    },
    { signal, prefix },
  );
}

async function statTask(
  task: GlobTask,
  open: Open,
  display: (entry: string) => string,
  seen: Set<string>,
  add: Add,
  signal: AbortSignal,
): Promise<void> {
  for (const pattern of task.patterns) {
    if (signal.aborted) return;
    const entry = withoutLeadingDot(pattern);
    const normalized = path.posix.normalize(pattern).replace(/\/+$/, '');
    if (normalized === '.' || normalized === '' || seen.has(entry) || !task.matches(entry)) continue;
    const source = open(path.posix.dirname(normalized));
    if (!source) continue;
    const name = path.posix.basename(normalized);
    // lstat through the opened parent: the last name is not followed (a symlink is not a file).
    const stats = await lstat(fdPath(source.start.fd, name)).catch(() => null);
    if (stats?.isFile() && !add(entry, { path: display(normalized), source, dir: '', name })) return;
  }
}
