import {
  closeSync,
  constants,
  fchownSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  rmdirSync,
} from 'node:fs';
import path from 'node:path';
import { CodeError } from '../../errors.js';
import { openHeldDirectory, type HeldDirectory } from './held-directory.js';
import type { WorkspaceAccess, WorkspacePin } from './workspace-directory.js';
import type { FileOwner } from './workspace-files.js';

/** A new, empty directory the server made in a held one (a fork's copy), held open until `close()`. */
export interface CopyDirectory {
  /** Its canonical path (the held root's path and its name). */
  readonly path: string;
  /** Its identity, as a session pin records it. */
  readonly pin: WorkspacePin;
  /** Leases of the held descriptor (what a sandboxed command binds), never the name. */
  readonly access: WorkspaceAccess;
  /** True when the directory is no longer at its path (it, or the root, was moved or removed since). */
  moved(): boolean;
  /** Remove it (empty) from the held root, by name in that descriptor: never through a symlink. */
  remove(): void;
  close(): void;
}

/** How many suffixed names (`name-2`, ...) are tried when the name is taken. */
const MAX_NAMES = 100;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

function changed(root: string, reason: string): CodeError {
  return new CodeError('WORKSPACE_CHANGED', `workspace: the tenant's directory ${root} ${reason}`, {
    field: 'workspace',
  });
}

/** `name` made safe as one path component: letters, digits, `_`, `.`, `-`, at most 64 characters, no leading dot. */
export function copyName(name: string): string {
  const safe = name
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .replace(/^[.-]+/, '')
    .slice(0, 64);
  return safe === '' ? 'workspace' : safe;
}

/**
 * Make the directory `name` (or `name-2`, ... when taken) in the canonical directory `root`, confined by what was
 * opened: `root` is opened and must still be at its path (a name on the way swapped for a symlink is refused), the
 * new directory is made relative to that descriptor (mkdir never follows its last name) and opened from it with
 * O_NOFOLLOW, and what was opened must be the server's own new, empty directory at `<root>/<name>`. It is then
 * given to `owner` (sandbox.run_as). WORKSPACE_CHANGED otherwise.
 */
export function makeCopyDirectory(root: string, name: string, owner: FileOwner | undefined): CopyDirectory {
  let held: HeldDirectory;
  try {
    held = openHeldDirectory(root);
  } catch (error) {
    throw changed(root, `cannot be opened where it was checked (${(error as Error).message})`);
  }
  try {
    for (let attempt = 1; attempt <= MAX_NAMES; attempt += 1) {
      const chosen = attempt === 1 ? name : `${name}-${attempt}`;
      const inRoot = `/proc/self/fd/${held.fd}/${chosen}`;
      try {
        mkdirSync(inRoot, 0o700);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw error;
      }
      return openMade(held, chosen, owner);
    }
    throw new CodeError(
      'SESSION_INITIALIZATION_ERROR',
      `workspace: no free name for the copy (${name}, ${name}-2, ...)`,
      {
        resource: 'workspace',
      },
    );
  } catch (error) {
    held.close();
    throw error;
  }
}

/** Open the directory just made in `held` and check it is that one; it is removed again when it is not. */
function openMade(held: HeldDirectory, name: string, owner: FileOwner | undefined): CopyDirectory {
  const inRoot = `/proc/self/fd/${held.fd}/${name}`;
  const expected = path.join(held.path, name);
  let fd: number | undefined;
  try {
    fd = openSync(inRoot, DIR_FLAGS);
    const stats = fstatSync(fd, { bigint: true });
    const at = readlinkSync(`/proc/self/fd/${fd}`);
    if (at !== expected) throw changed(held.path, `was moved while the copy was made (it is at ${at} now)`);
    // Swapped for another directory between mkdir and open: not the server's own new, empty one.
    if (process.getuid && stats.uid !== BigInt(process.getuid()))
      throw changed(held.path, 'had the copy replaced by a directory the server did not make');
    if (readdirSync(`/proc/self/fd/${fd}`).length > 0)
      throw changed(held.path, 'had the copy replaced by a directory that is not empty');
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    const dirFd = fd;
    const pin: WorkspacePin = { path: expected, dev: String(stats.dev), ino: String(stats.ino) };
    let closed = false;
    return {
      path: expected,
      pin,
      access: { path: expected, acquire: () => ({ fd: dirFd, path: expected, release: () => undefined }) },
      moved: () => readlinkSync(`/proc/self/fd/${dirFd}`) !== expected,
      remove: () => {
        try {
          rmdirSync(inRoot);
        } catch {
          // Not empty or gone: left for the operator.
        }
      },
      close: () => {
        if (closed) return;
        closed = true;
        closeSync(dirFd);
        held.close();
      },
    };
  } catch (caught) {
    if (fd !== undefined) closeSync(fd);
    // The name swapped for a symlink (ELOOP) or removed between mkdir and open: not the server's directory.
    const error =
      caught instanceof CodeError
        ? caught
        : changed(
            held.path,
            `had the copy's name swapped while it was made (${(caught as NodeJS.ErrnoException).code ?? 'error'})`,
          );
    try {
      rmdirSync(inRoot);
    } catch {
      // A symlink or another directory now has the name: nothing of the server's to remove.
    }
    throw error;
  }
}
