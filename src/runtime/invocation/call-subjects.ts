import { CallSubjects, type PathResolver } from '../policy/permission-subjects.js';
import { canonicalName } from '../workspace/canonical-name.js';
import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import { WorkspaceEscapeError } from '../workspace/workspace-errors.js';
import { WorkspaceFiles, type OpenGuard } from '../workspace/workspace-files.js';
import type { ToolCallState } from './tool-call-state.js';

/**
 * Where a workspace path leads by the confined walk (symlinks resolved by hand, never out), for permission
 * rules; undefined when it cannot be walked (it leads out, a file stands in the way, the workspace changed):
 * the rules then see its lexical forms, and the tool itself refuses what it cannot reach.
 */
export function workspacePathResolver(access: WorkspaceAccess): PathResolver {
  return (given) => {
    const files = new WorkspaceFiles(access);
    try {
      const name = canonicalName(files, given);
      return { relative: name.relative, absolute: name.absolute };
    } catch {
      return undefined;
    } finally {
      files.release();
    }
  };
}

/** The call's permission subjects, made once per call (after the hooks settled its arguments) and kept on the state. */
export function callSubjects(state: ToolCallState): CallSubjects {
  if (state.subjects === undefined || state.subjects.args !== state.args) {
    const name = state.tool?.name ?? state.call.name;
    state.subjects = new CallSubjects(
      name,
      state.args,
      state.tool?.permissionPaths,
      state.ctx.workspace,
      workspacePathResolver(state.deps.workspace),
    );
  }
  return state.subjects;
}

/**
 * The execute stage's open guard for a call whose permission looked at its paths: opening one of them (by its
 * spelling or its decided place) must reach the place the rules were checked on, else the call is refused
 * (a symlink swapped between the check and the open, e.g. while a confirmation waited). Undefined otherwise.
 */
export function openGuardOf(state: ToolCallState): OpenGuard | undefined {
  const subjects = state.subjects;
  if (subjects === undefined || !subjects.pathsResolved) return undefined;
  const places = subjects.decidedPlaces();
  if (places.size === 0) return undefined;
  return (userPath, location) => {
    const decided = places.get(userPath);
    if (decided === undefined || decided === location.relative) return;
    throw new WorkspaceEscapeError(
      userPath,
      `it led to ${decided} when its permission was checked and leads to ${location.relative} now`,
    );
  };
}
