import path from 'node:path';
import type { WorkspaceFiles } from './workspace-files.js';

/** Where a workspace path leads by the confined walk, whether or not it exists yet. */
export interface CanonicalName {
  /** Relative to the workspace with `/` separators (`.` for the workspace itself). */
  readonly relative: string;
  /** Absolute (what a command inside the sandbox sees). */
  readonly absolute: string;
  readonly exists: boolean;
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/**
 * The canonical name of a workspace path: the deepest ancestor the confined walk reaches (symlinks resolved
 * by hand, never out), plus the missing rest. Only walks and lstat: nothing is opened for content or created.
 * Throws WorkspaceEscapeError for a path that leads out, ENOTDIR when a file stands where a directory must be.
 */
export function canonicalName(files: WorkspaceFiles, userPath: string): CanonicalName {
  const rest: string[] = [];
  let at = path.resolve(files.path, userPath);
  for (;;) {
    try {
      const location = files.locate(at);
      location.close();
      const parts = [...(location.relative === '.' ? [] : [location.relative]), ...rest];
      return {
        relative: parts.length === 0 ? '.' : parts.join('/'),
        absolute: path.join(location.absolute, ...rest),
        exists: rest.length === 0 && location.stats !== null,
      };
    } catch (error) {
      // A missing directory on the way: its parent names the path (the walk refused anything outside already).
      if (errnoCode(error) !== 'ENOENT' || path.dirname(at) === at) throw error;
      rest.unshift(path.basename(at));
      at = path.dirname(at);
    }
  }
}
