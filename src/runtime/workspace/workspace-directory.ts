import { closeSync, constants, fstatSync, openSync, readlinkSync } from 'node:fs';
import { WorkspaceChangedError } from './workspace-errors.js';

/** A session's workspace as pinned when the session was created: canonical path and identity. */
export interface WorkspacePin {
  readonly path: string;
  /** st_dev and st_ino of the directory, as decimal strings (they need not fit a double). */
  readonly dev: string;
  readonly ino: string;
}

/** A held descriptor of the pinned workspace; `release()` once the call, run or server using it is done. */
export interface WorkspaceLease {
  readonly fd: number;
  readonly path: string;
  /** Directories inside the workspace nothing may reach (the server's data directory, when it lies inside). */
  readonly hidden?: readonly string[];
  release(): void;
}

/** What gives out leases of a session's workspace (the session's WorkspaceDirectory, or a child's parent's). */
export interface WorkspaceAccess {
  readonly path: string;
  /** Throws WorkspaceChangedError when the directory is no longer the pinned one. */
  acquire(): WorkspaceLease;
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;

/** Opens a directory by its canonical path and reads its identity: the pin a new session records. */
export function pinDirectory(canonicalPath: string): WorkspacePin {
  const fd = openSync(canonicalPath, OPEN_FLAGS);
  try {
    // The path was checked (realpath, inside the tenant's space) a moment ago: what was opened must be there still.
    const at = readlinkSync(`/proc/self/fd/${fd}`);
    if (at !== canonicalPath) throw new WorkspaceChangedError(canonicalPath, `it resolves to ${at} now`);
    const stats = fstatSync(fd, { bigint: true });
    return { path: canonicalPath, dev: String(stats.dev), ino: String(stats.ino) };
  } finally {
    closeSync(fd);
  }
}

/**
 * One session's workspace directory. While anything uses it (a run, a tool call, a command, an MCP server)
 * the server holds one descriptor of it, and every file tool and command goes through that descriptor:
 * swapping the name for a symlink or another directory changes nothing for them. Opening it again after
 * idle checks the identity (device and inode) against the pin; each lease checks that the held directory
 * still sits at the pinned path (not moved elsewhere, not removed). Anything else is WORKSPACE_CHANGED.
 * The descriptor is closed when the last lease is released, so idle sessions hold none.
 */
export class WorkspaceDirectory implements WorkspaceAccess {
  private fd: number | undefined;
  private refs = 0;
  /** Why the last acquire failed (session info shows it); cleared once the workspace is back. */
  changed: { readonly reason: string; readonly atMs: number } | undefined;

  /**
   * `hidden`: canonical directories inside the workspace that no file tool reaches and the sandbox covers with an
   * empty tmpfs (the server's data directory when it lies inside the workspace).
   */
  constructor(
    readonly pin: WorkspacePin,
    readonly hidden: readonly string[] = [],
  ) {}

  get path(): string {
    return this.pin.path;
  }

  /** How many leases are out (0: no descriptor held). */
  get held(): number {
    return this.refs;
  }

  acquire(): WorkspaceLease {
    const fd = this.fd === undefined ? this.open() : this.fd;
    try {
      this.checkPlace(fd);
    } catch (error) {
      if (this.refs === 0) {
        closeSync(fd);
        this.fd = undefined;
      }
      throw error;
    }
    this.fd = fd;
    this.refs += 1;
    this.changed = undefined;
    let released = false;
    return {
      fd,
      path: this.pin.path,
      ...(this.hidden.length > 0 ? { hidden: this.hidden } : {}),
      release: () => {
        if (released) return;
        released = true;
        this.refs -= 1;
        if (this.refs === 0 && this.fd !== undefined) {
          closeSync(this.fd);
          this.fd = undefined;
        }
      },
    };
  }

  private fail(reason: string): never {
    this.changed = { reason, atMs: Date.now() };
    throw new WorkspaceChangedError(this.pin.path, reason);
  }

  private open(): number {
    let fd: number;
    try {
      fd = openSync(this.pin.path, OPEN_FLAGS);
    } catch (error) {
      return this.fail(`it cannot be opened: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    const stats = fstatSync(fd, { bigint: true });
    if (String(stats.dev) !== this.pin.dev || String(stats.ino) !== this.pin.ino) {
      closeSync(fd);
      return this.fail('another directory, or a symbolic link to one, is at its path now');
    }
    return fd;
  }

  /** The held directory must still be at the pinned path: not moved (out of the tenant's space or anywhere), not removed. */
  private checkPlace(fd: number): void {
    const at = readlinkSync(`/proc/self/fd/${fd}`);
    if (at !== this.pin.path) this.fail(at.endsWith(' (deleted)') ? 'it was removed' : `it was moved to ${at}`);
  }
}
