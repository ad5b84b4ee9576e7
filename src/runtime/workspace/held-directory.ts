import { closeSync, constants, openSync, readlinkSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceChangedError } from './workspace-errors.js';
import type { ConfinedRoot } from './confined-walk.js';

/** A directory the server holds open to read files below it with `locate` (see confined-walk): close it when done. */
export interface HeldDirectory extends ConfinedRoot {
  close(): void;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;

/** A held descriptor as a HeldDirectory (closing it closes the descriptor once). */
export function heldDirectory(fd: number, canonicalPath: string): HeldDirectory {
  let closed = false;
  return {
    fd,
    path: canonicalPath,
    close: () => {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

/**
 * Opens a directory by its canonical path (one the server resolved a moment ago: a confinement root, an
 * operator's skill or agent directory) and checks that what was opened is at that path: a name on the way
 * swapped for a symbolic link since then leads elsewhere and is refused (WorkspaceChangedError).
 */
export function openHeldDirectory(canonicalPath: string): HeldDirectory {
  const fd = openSync(canonicalPath, DIR_FLAGS);
  let at: string;
  try {
    at = readlinkSync(`/proc/self/fd/${fd}`);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (at !== canonicalPath) {
    closeSync(fd);
    throw new WorkspaceChangedError(canonicalPath, `it resolves to ${at} now`);
  }
  return heldDirectory(fd, canonicalPath);
}

/** Runs `read` on a held directory, then closes it. */
export async function withHeldDirectory<T>(held: HeldDirectory, read: (root: HeldDirectory) => Promise<T>): Promise<T> {
  try {
    return await read(held);
  } finally {
    held.close();
  }
}

/**
 * The operator's directory (skill_dirs, agent_dirs: relative to the server's working directory) held open, or
 * undefined when it does not exist or is no directory.
 */
export async function openConfiguredDirectory(dir: string): Promise<HeldDirectory | undefined> {
  const canonical = await realpath(path.resolve(dir)).catch(() => undefined);
  if (canonical === undefined) return undefined;
  try {
    return openHeldDirectory(canonical);
  } catch {
    return undefined;
  }
}
