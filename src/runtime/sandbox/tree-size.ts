import { constants, fstat } from 'node:fs';
import { lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';

const fstatAsync = promisify(fstat);

/** What a size walk found: bytes on disk (allocated blocks), entries seen, and whether the walk saw everything. */
export interface TreeSize {
  readonly bytes: number;
  readonly entries: number;
  /** False when the walk stopped at its entry bound (bytes then count what it saw). */
  readonly complete: boolean;
}

/** How far a walk may go. */
export interface TreeSizeBounds {
  /** Entries (files, directories, links) a walk looks at before it stops. */
  readonly maxEntries: number;
  /** Directories below the root it descends into at most. */
  readonly maxDepth: number;
}

export const DEFAULT_TREE_BOUNDS: TreeSizeBounds = { maxEntries: 100_000, maxDepth: 64 };

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** lstat calls in flight at once (the libuv pool has 4 threads: more only queues). */
const BATCH = 16;

function via(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

/**
 * The disk usage of the tree under a held directory descriptor, walked by descriptors: each subdirectory is opened
 * from its parent's descriptor with O_NOFOLLOW (a symlink is counted as itself, never followed; a directory swapped
 * for a link meanwhile fails to open and is skipped), entries are lstat-ed, never stat-ed. Only the root's file system
 * is counted (a mount point below it is not entered); a file with several links is counted once. Asynchronous and
 * bounded by `bounds`: the caller measures after a command, not during it.
 */
export async function treeSize(rootFd: number, bounds: TreeSizeBounds = DEFAULT_TREE_BOUNDS): Promise<TreeSize> {
  // The held directory itself (fstat: an lstat of /proc/self/fd/N would be the magic link's).
  const root = await fstatAsync(rootFd);
  const seenLinks = new Set<string>();
  let bytes = root.blocks * 512;
  let entries = 0;
  let complete = true;

  const walk = async (dirFd: number, depth: number): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(via(dirFd));
    } catch {
      return;
    }
    const subdirs: string[] = [];
    for (let i = 0; i < names.length; i += BATCH) {
      if (entries >= bounds.maxEntries) {
        complete = false;
        return;
      }
      const batch = names.slice(i, i + BATCH);
      entries += batch.length;
      const stats = await Promise.all(batch.map((name) => lstat(via(dirFd, name)).catch(() => null)));
      for (const [index, stat] of stats.entries()) {
        if (!stat || stat.dev !== root.dev) continue;
        if (stat.nlink > 1 && !stat.isDirectory()) {
          const key = String(stat.ino);
          if (seenLinks.has(key)) continue;
          seenLinks.add(key);
        }
        bytes += stat.blocks * 512;
        if (stat.isDirectory()) subdirs.push(batch[index] as string);
      }
    }
    if (depth >= bounds.maxDepth) {
      if (subdirs.length > 0) complete = false;
      return;
    }
    for (const name of subdirs) {
      if (entries >= bounds.maxEntries) {
        complete = false;
        return;
      }
      let handle: FileHandle;
      try {
        handle = await open(via(dirFd, name), DIR_FLAGS);
      } catch {
        continue;
      }
      try {
        await walk(handle.fd, depth + 1);
      } finally {
        await handle.close();
      }
    }
  };

  await walk(rootFd, 0);
  return { bytes, entries, complete };
}
