import { CodeError, type ErrorCode } from '../../errors.js';
import { heldDirectory, type HeldDirectory } from '../workspace/held-directory.js';
import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import { WorkspaceChangedError, WorkspaceEscapeError } from '../workspace/workspace-errors.js';
import { WorkspaceFiles } from '../workspace/workspace-files.js';

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/**
 * Opens a directory a session names (agentDirs, skillDirs, POST .../agents/dirs) inside its pinned workspace,
 * confined by what was opened: relative paths walk from the held workspace descriptor, symlinks are followed
 * only while they stay inside it. The caller reads the files below the returned held directory (see
 * `openConfinedFile`) and closes it.
 */
export function resolveWorkspaceAgentDir(
  workspace: WorkspaceAccess,
  requested: string,
  field: string,
  errorCode: ErrorCode,
): HeldDirectory {
  const files = new WorkspaceFiles(workspace);
  try {
    const opened = files.openDirectory(requested);
    return heldDirectory(opened.fd, opened.absolute);
  } catch (error) {
    if (error instanceof WorkspaceEscapeError) {
      throw new CodeError(
        errorCode,
        `${field}: "${requested}" resolves outside the session's workspace; directories a session names (agentDirs, skillDirs) must be inside it`,
        { field },
      );
    }
    if (error instanceof WorkspaceChangedError)
      throw new CodeError('WORKSPACE_CHANGED', `${field}: ${error.message}`, { field });
    const code = errnoCode(error);
    if (code === 'ENOTDIR') throw new CodeError(errorCode, `${field}: "${requested}" is not a directory`, { field });
    if (code === 'ENOENT')
      throw new CodeError(errorCode, `${field}: "${requested}" does not exist in the session's workspace`, { field });
    throw new CodeError(errorCode, `${field}: "${requested}" cannot be opened (${code ?? String(error)})`, { field });
  } finally {
    files.release();
  }
}
