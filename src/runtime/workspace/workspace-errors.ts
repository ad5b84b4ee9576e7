/** Thrown when a path would leave the workspace (through `..`, an absolute path or a symlink). */
export class WorkspaceEscapeError extends Error {
  override readonly name = 'WorkspaceEscapeError';

  constructor(
    readonly userPath: string,
    /** Why (e.g. `a symbolic link leads to /etc/passwd`): for messages that name another confinement than the workspace. */
    readonly reason: string,
  ) {
    super(`Path "${userPath}" is outside the workspace (${reason}); only paths inside the workspace are allowed.`);
  }
}

/** Thrown with `mustExist` when the (confined) path does not exist. */
export class WorkspacePathNotFoundError extends Error {
  override readonly name = 'WorkspacePathNotFoundError';

  constructor(readonly userPath: string) {
    super(`Path "${userPath}" does not exist.`);
  }
}

/**
 * The session's workspace is no longer the directory it was pinned to (swapped for another directory or a
 * symlink, moved out of the tenant's space, removed): nothing runs and no file is touched until it is back.
 */
export class WorkspaceChangedError extends Error {
  override readonly name = 'WorkspaceChangedError';
  readonly code = 'WORKSPACE_CHANGED';

  constructor(
    readonly workspace: string,
    readonly reason: string,
  ) {
    super(
      `The session's workspace ${workspace} is no longer the directory the session was created with (${reason}); no file was touched and no command ran.`,
    );
  }
}
