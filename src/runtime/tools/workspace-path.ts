import path from 'node:path';
import { isInside } from '../workspace/confined-walk.js';
import { WorkspaceEscapeError, WorkspacePathNotFoundError } from '../workspace/workspace-errors.js';

export { WorkspaceEscapeError, WorkspacePathNotFoundError };
// Paths are resolved only by the confined walk (src/runtime/workspace/confined-walk.ts): nothing here checks a
// path to be opened by name later.
export { isInside };

/** Present an absolute path relative to the workspace with `/` separators (`.` for the workspace itself). */
export function relativeToWorkspace(workspace: string, absPath: string): string {
  const rel = path.relative(workspace, absPath);
  if (rel === '') return '.';
  return rel.split(path.sep).join('/');
}

/**
 * Refuse glob patterns that could walk out of their base directory (absolute, or with a `..` segment).
 * Throws `WorkspaceEscapeError`.
 */
export function assertConfinedGlob(pattern: string): void {
  if (path.isAbsolute(pattern) || /^[A-Za-z]:/.test(pattern)) {
    throw new WorkspaceEscapeError(pattern, 'absolute glob patterns are not allowed');
  }
  if (pattern.split(/[\\/]/).some((segment) => segment === '..')) {
    throw new WorkspaceEscapeError(pattern, 'glob patterns must not contain ".."');
  }
}
