import { readAt } from './regular-file.js';
import { closeSync, constants, openSync, type Dirent, type Stats } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { fdPath, locate, MAX_LINK_HOPS, type ConfinedRoot } from './confined-walk.js';
import { NotRegularFileError, notRegularKindOf } from './not-regular-file-error.js';

// Never follow the last name (the walk resolved it), never wait on a FIFO: what was opened is checked with fstat.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A regular file opened for reading below a held directory. */
export interface ConfinedFile {
  readonly handle: FileHandle;
  /** Its canonical path relative to the held directory. */
  readonly relative: string;
  readonly size: number;
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/**
 * Opens for reading the file `userPath` leads to below the held directory `root`, confined by what was opened
 * (see `locate`): every component is walked from `root` without following a symlink out of it, a last symlink
 * is followed only while it stays inside, a name swapped for a symlink after the walk fails with ELOOP and is
 * walked again. The opened descriptor must be a regular file (NotRegularFileError otherwise). Throws
 * WorkspaceEscapeError for a path or link leading outside `root`, errno errors (ENOENT, ENOTDIR, ...) as they come.
 */
export async function openConfinedFile(root: ConfinedRoot, userPath: string): Promise<ConfinedFile> {
  for (let attempt = 0; ; attempt++) {
    const location = locate(root, userPath);
    let handle: FileHandle;
    try {
      handle = await open(location.via, FILE_FLAGS);
    } catch (error) {
      if (errnoCode(error) !== 'ELOOP' || attempt >= MAX_LINK_HOPS) throw error;
      continue;
    } finally {
      location.close();
    }
    let stats: Stats;
    try {
      stats = await handle.stat();
    } catch (error) {
      await handle.close();
      throw error;
    }
    if (!stats.isFile()) {
      await handle.close();
      throw new NotRegularFileError(userPath, notRegularKindOf(stats));
    }
    return { handle, relative: location.relative, size: stats.size };
  }
}

/** At most `maxBytes` of an opened file from its start, and whether it holds more. */
export async function readBounded(
  handle: FileHandle,
  maxBytes: number,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  // One byte past the bound tells a file that holds more.
  const bytes = await readAt(handle, 0, maxBytes + 1);
  return { bytes: bytes.subarray(0, Math.min(bytes.length, maxBytes)), truncated: bytes.length > maxBytes };
}

/** The entries of the directory `userPath` leads to below the held directory `root`, opened confined like `openConfinedFile`. */
export async function listConfinedDirectory(root: ConfinedRoot, userPath: string): Promise<Dirent[]> {
  for (let attempt = 0; ; attempt++) {
    const location = locate(root, userPath);
    let fd: number;
    try {
      fd = openSync(location.via, DIR_FLAGS);
    } catch (error) {
      if (errnoCode(error) !== 'ELOOP' || attempt >= MAX_LINK_HOPS) throw error;
      continue;
    } finally {
      location.close();
    }
    try {
      return await readdir(fdPath(fd), { withFileTypes: true });
    } finally {
      closeSync(fd);
    }
  }
}
