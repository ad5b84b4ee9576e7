import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { CodeError, type ErrorCode } from '../../errors.js';
import { isInside } from '../tools/workspace-path.js';

/**
 * A directory a session names (agentDirs, POST .../agents/dirs): relative paths resolve against the session's
 * canonical workspace, and the real path (symlinks followed) must be a directory inside it.
 */
export async function resolveWorkspaceAgentDir(workspace: string, requested: string, field: string, errorCode: ErrorCode): Promise<string> {
  let canonical: string;
  try {
    canonical = await realpath(path.resolve(workspace, requested));
  } catch {
    throw new CodeError(errorCode, `${field}: "${requested}" does not exist in the session's workspace`, { field });
  }
  if (!isInside(workspace, canonical)) throw new CodeError(errorCode, `${field}: "${requested}" resolves outside the session's workspace; directories a session names (agentDirs, skillDirs) must be inside it`, { field });
  if (!(await stat(canonical)).isDirectory()) throw new CodeError(errorCode, `${field}: "${requested}" is not a directory`, { field });
  return canonical;
}
