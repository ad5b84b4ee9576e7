import { realpathSync } from 'node:fs';
import { CodeError } from '../../errors.js';
import { isInside } from './confined-walk.js';
import { pinDirectory, WorkspaceDirectory } from './workspace-directory.js';
import { WorkspaceChangedError } from './workspace-errors.js';

/** A session's pinned workspace, and the note to give when a restore pinned it again. */
export interface PinnedSessionWorkspace {
  readonly directory: WorkspaceDirectory;
  /** Set when a restored session's directory has another identity than the one stored (another node, or recreated). */
  readonly repinned?: string;
}

/**
 * Pins the canonical workspace a session was just resolved to (inside its tenant's space). A restored session
 * (whose path was checked again) gets a new pin when the stored identity differs (device numbers differ between nodes on shared storage; a
 * directory recreated under the same name), with a note for a warning event; one that cannot be opened where it
 * was checked answers WORKSPACE_CHANGED.
 */
export function pinSessionWorkspace(
  canonical: string,
  stored: { readonly dev: string; readonly ino: string } | undefined,
  restored: boolean,
  serverDirs: readonly string[] = [],
): PinnedSessionWorkspace {
  // The server's own directories are no workspace, nor is any directory in them (checkpoints, sandbox homes of
  // other sessions, session records): hiding them only works from a workspace above them.
  const inServerDir = canonicalServerDirs(serverDirs).find((dir) => isInside(dir, canonical));
  if (inServerDir !== undefined) {
    throw new CodeError(
      'WORKSPACE_NOT_FOUND',
      `workspace: ${canonical} lies in the server's own directory ${inServerDir}; it cannot be a workspace`,
      { field: 'workspace' },
    );
  }
  let pin;
  try {
    pin = pinDirectory(canonical);
  } catch (error) {
    const reason =
      error instanceof WorkspaceChangedError
        ? error.reason
        : `it cannot be opened (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
    throw new CodeError(
      'WORKSPACE_CHANGED',
      `workspace: ${canonical} is no longer the directory that was checked (${reason})`,
      { field: 'workspace' },
    );
  }
  const directory = new WorkspaceDirectory(pin, hiddenInside(canonical, serverDirs));
  // A snapshot older than pins has nothing to compare with: its workspace was just checked like any restore's.
  if (!restored || stored === undefined || (stored.dev === pin.dev && stored.ino === pin.ino)) return { directory };
  const repinned = `workspace ${canonical} was pinned again: its identity changed (device ${stored.dev} inode ${stored.ino} -> device ${pin.dev} inode ${pin.ino}: another node, or the directory was recreated)`;
  return { directory, repinned };
}

// Resolved once each (a directory not there yet is looked up again next time).
const canonicalDirs = new Map<string, string>();

/** The server's own directories (data dir, sessions dir) that exist, canonical (resolved once each). */
function canonicalServerDirs(serverDirs: readonly string[]): string[] {
  const found: string[] = [];
  for (const dir of serverDirs) {
    let canonical = canonicalDirs.get(dir);
    if (canonical === undefined) {
      try {
        canonical = realpathSync(dir);
        canonicalDirs.set(dir, canonical);
      } catch {
        continue;
      }
    }
    if (!found.includes(canonical)) found.push(canonical);
  }
  return found;
}

/** The server's own directories (data dir, sessions dir) that lie inside the workspace, canonical. */
function hiddenInside(workspace: string, serverDirs: readonly string[]): string[] {
  return canonicalServerDirs(serverDirs).filter((dir) => isInside(workspace, dir));
}
