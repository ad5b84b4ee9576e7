import { constants } from 'node:fs';
import { mkdir, open, readdir, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { errorCode } from './fs-errors.js';

/** A directory below a held one: never through a symlink (ELOOP), never anything but a directory (ENOTDIR). */
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** A file of a held directory: never through a symlink, never blocking on a FIFO. */
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The path of `name` inside the directory held open as `dir`: the kernel follows the `/proc/self/fd/<fd>` magic
 * link to the opened directory itself, whatever its name leads to now, and resolves the one component `name`
 * there. Open it with O_NOFOLLOW (or create it with O_EXCL, rename or unlink it: none follows a final symlink).
 */
export function inHeld(dir: FileHandle, name = '.'): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/**
 * Open the directory `name` inside the held `parent`, never through a symlink; with `create`, make it (0o700)
 * first when it is missing. Undefined when it is missing and not created; a symlink or a non-directory there is
 * the OS error (ELOOP, ENOTDIR).
 */
export async function openHeldChild(
  parent: FileHandle,
  name: string,
  create: boolean,
): Promise<FileHandle | undefined> {
  try {
    return await open(inHeld(parent, name), DIR_FLAGS);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT' || !create) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw error;
    }
  }
  try {
    await mkdir(inHeld(parent, name), 0o700);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
  }
  return open(inHeld(parent, name), DIR_FLAGS);
}

/** A file the store wrote itself, read through its held directory, and when it was last written. */
export interface HeldFile {
  readonly data: Buffer;
  readonly mtimeMs: number;
}

/**
 * Read `name` of the held `dir` when it is a file this process wrote there (created, then renamed into place):
 * a regular file with one link. A symlink, a FIFO, a directory or a hard link to a file elsewhere (two links)
 * was planted and is undefined, like a missing file; so is a file of another size than `size`, when given.
 */
export async function readHeldFile(dir: FileHandle, name: string, size?: number): Promise<HeldFile | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(inHeld(dir, name), FILE_FLAGS);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ELOOP' || errorCode(error) === 'ENXIO') return undefined;
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.nlink !== 1 || (size !== undefined && stats.size !== size)) return undefined;
    const data = await handle.readFile();
    return size !== undefined && data.length !== size ? undefined : { data, mtimeMs: stats.mtimeMs };
  } finally {
    await handle.close();
  }
}

/**
 * Remove the entry `name` of the held `dir` and, when it is a directory, everything below it, each entry through
 * the directory opened before it: a symlink is removed itself, never followed, wherever it was planted.
 */
export async function removeHeldEntry(dir: FileHandle, name: string): Promise<void> {
  try {
    await unlink(inHeld(dir, name));
    return;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return;
    if (code !== 'EISDIR' && code !== 'EPERM') throw error;
  }
  let child: FileHandle | undefined;
  try {
    child = await openHeldChild(dir, name, false);
  } catch (error) {
    // Swapped for something else meanwhile: that is not a directory to empty.
    if (errorCode(error) !== 'ELOOP' && errorCode(error) !== 'ENOTDIR') throw error;
    await unlink(inHeld(dir, name)).catch(() => undefined);
    return;
  }
  if (child === undefined) return;
  try {
    for (const entry of await readdir(inHeld(child))) await removeHeldEntry(child, entry);
  } finally {
    await child.close();
  }
  try {
    await rmdir(inHeld(dir, name));
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ENOTEMPTY') throw error;
  }
}
