import type { Location } from '../workspace/confined-walk.js';
import { WorkspacePathNotFoundError } from '../workspace/workspace-errors.js';
import type { OpenedDirectory, WorkspaceFiles } from '../workspace/workspace-files.js';
import { errnoCode } from './tool-file-helpers.js';

/** What the path of ls, glob or grep names: a directory (opened: the caller closes it), a regular file, or something else. */
export type SearchBase =
  | { readonly kind: 'directory'; readonly dir: OpenedDirectory }
  | { readonly kind: 'file'; readonly relative: string }
  | { readonly kind: 'other'; readonly relative: string };

/**
 * Opens the directory a tool's path leads to, confined (a symlink on the way, the last one too, is followed
 * only while it stays inside the workspace); for a path that is no directory says whether it is a regular
 * file. A path below a file is not found (WorkspacePathNotFoundError), as before; escapes and other errors
 * are thrown for pathErrorResult.
 */
export function openSearchBase(files: WorkspaceFiles, userPath: string): SearchBase {
  try {
    return { kind: 'directory', dir: files.openDirectory(userPath) };
  } catch (error) {
    if (errnoCode(error) !== 'ENOTDIR') throw error;
  }
  let location: Location;
  try {
    location = files.locate(userPath);
  } catch (error) {
    throw errnoCode(error) === 'ENOTDIR' ? new WorkspacePathNotFoundError(userPath) : error;
  }
  location.close();
  if (!location.stats) throw new WorkspacePathNotFoundError(userPath);
  return { kind: location.stats.isFile() ? 'file' : 'other', relative: location.relative };
}
