import { readdir, type Dirent } from 'node:fs';
import { fdPath } from './confined-walk.js';
import type { OpenedDirectory, WorkspaceFiles } from './workspace-files.js';

/** Directories listed at the same time (readdir runs on the libuv pool, which has 4 threads by default). */
const DEFAULT_CONCURRENCY = 8;

/** What the walk asks and tells its caller. Paths are relative to the start, `/`-separated, after `prefix`. */
export interface TreeWalkVisitor {
  /** Whether to list the subdirectory at `path`. */
  descend(path: string): boolean;
  /**
   * Every entry that is not a directory (files, symlinks, sockets...: the dirent says which; a symlink is
   * never followed). `dir` is open only during the call. Return false to stop the walk.
   */
  entry(dir: OpenedDirectory, dirent: Dirent, path: string): boolean | void;
}

/** Options of `walkConfinedTree`. */
export interface TreeWalkOptions {
  /** Ends the walk early (the caller checks `aborted` afterwards). */
  readonly signal?: AbortSignal;
  readonly concurrency?: number;
  /** Prepended to every path (`src` gives `src/a.ts`); empty by default. */
  readonly prefix?: string;
}

/** A directory held while its subdirectories wait to be opened from it. */
interface Held {
  readonly dir: OpenedDirectory;
  refs: number;
  /** The start directory belongs to the caller. */
  readonly owned: boolean;
}

interface Pending {
  readonly parent: Held;
  readonly name: string;
  readonly path: string;
}

function release(held: Held): void {
  held.refs -= 1;
  if (held.refs === 0 && held.owned) held.dir.close();
}

/**
 * The entries of an opened directory, read through its descriptor like `list()`, with the callback readdir
 * (fast-glob's): a directory costs noticeably less CPU than through fs/promises, and a walk lists many.
 */
function listOpened(dir: OpenedDirectory): Promise<Dirent[]> {
  return new Promise((resolve, reject) =>
    readdir(fdPath(dir.fd), { withFileTypes: true }, (error, entries) => (error ? reject(error) : resolve(entries))),
  );
}

function isErrno(error: unknown): boolean {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string';
}

/**
 * Walks the tree below an opened directory, confined by what was opened: each subdirectory is opened from
 * the directory that listed it (`openDirectoryAt`, O_NOFOLLOW|O_DIRECTORY), so a directory swapped for a
 * symlink meanwhile is not entered (ELOOP/ENOTDIR: skipped) and nothing outside the start is ever read;
 * symlinks met on the way are reported as entries, never followed. Unreadable or vanished directories are
 * skipped, as fast-glob's suppressErrors did. At most `concurrency` directories are listed at once, depth
 * first, so the descriptors held stay about depth × concurrency. Resolves once every directory it opened is
 * closed (after a stop or the signal too).
 */
export function walkConfinedTree(
  files: WorkspaceFiles,
  start: OpenedDirectory,
  visitor: TreeWalkVisitor,
  options: TreeWalkOptions = {},
): Promise<void> {
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  const join = (base: string, name: string): string => (base === '' ? name : `${base}/${name}`);
  const pending: Pending[] = [];
  let active = 0;
  let stopped = false;
  let failure: unknown;

  const list = async (held: Held, base: string): Promise<void> => {
    try {
      let entries: Dirent[];
      try {
        entries = await listOpened(held.dir);
      } catch (error) {
        if (isErrno(error)) return;
        throw error;
      }
      for (const dirent of entries) {
        if (stopped || options.signal?.aborted) return;
        const path = join(base, dirent.name);
        if (dirent.isDirectory()) {
          if (!visitor.descend(path)) continue;
          held.refs += 1;
          pending.push({ parent: held, name: dirent.name, path });
        } else if (visitor.entry(held.dir, dirent, path) === false) {
          stopped = true;
        }
      }
    } finally {
      release(held);
    }
  };

  const visit = async (job: Pending): Promise<void> => {
    let dir: OpenedDirectory;
    try {
      dir = files.openDirectoryAt(job.parent.dir, job.name);
    } catch (error) {
      if (isErrno(error)) return;
      throw error;
    } finally {
      release(job.parent);
    }
    await list({ dir, refs: 1, owned: true }, job.path);
  };

  return new Promise<void>((resolve, reject) => {
    const settle = (): void => {
      if (active > 0) return;
      if (failure !== undefined) reject(failure);
      else resolve();
    };
    const pump = (): void => {
      if (stopped || failure !== undefined || options.signal?.aborted) {
        // Return the parents' references of what will not be opened now.
        for (const job of pending.splice(0)) release(job.parent);
        settle();
        return;
      }
      while (active < concurrency && pending.length > 0) {
        const job = pending.pop() as Pending;
        active += 1;
        visit(job).then(done, fail);
      }
      if (pending.length === 0) settle();
    };
    const done = (): void => {
      active -= 1;
      pump();
    };
    const fail = (error: unknown): void => {
      failure ??= error;
      done();
    };
    active += 1;
    list({ dir: start, refs: 1, owned: false }, options.prefix ?? '').then(done, fail);
  });
}
