import { closeSync, constants, lchownSync, openSync, type Dirent, type Stats } from 'node:fs';
import { open, readdir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import {
  fdPath,
  isHidden,
  locate,
  MAX_LINK_HOPS,
  type ConfinedRoot,
  type Location,
  type LocateOptions,
} from './confined-walk.js';
import type { WorkspaceAccess, WorkspaceLease } from './workspace-directory.js';

/**
 * Refuses to open a path whose place changed since the call's permission was decided on it (a symlink swapped
 * in between): called with the user path and where the walk leads now; throws to refuse.
 */
export type OpenGuard = (userPath: string, location: Location) => void;

/** The uid/gid files and directories the file tools create are given (sandbox.run_as when the server is root). */
export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
}

/** A file opened inside the workspace, and where it is. */
export interface OpenedFile {
  readonly handle: FileHandle;
  /** The entry's canonical path relative to the workspace. */
  readonly relative: string;
  readonly absolute: string;
}

/** A file opened inside the workspace as a raw descriptor (close it with closeSync), and where it is. */
export interface OpenedDescriptor {
  readonly fd: number;
  readonly relative: string;
  readonly absolute: string;
}

/** A directory opened inside the workspace: list it with `list()`, open children with `openDirectoryAt`/`openFileAt`. */
export interface OpenedDirectory {
  readonly fd: number;
  readonly relative: string;
  readonly absolute: string;
  list(): Promise<Dirent[]>;
  close(): void;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// Never follow the last name (the walk resolved it), and never wait on a FIFO: callers fstat what they got.
const FILE_FLAGS = constants.O_NOFOLLOW | constants.O_NONBLOCK;

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/** An opened directory's listing and lifetime. */
function openedDirectory(fd: number, relative: string, absolute: string): OpenedDirectory {
  let closed = false;
  return {
    fd,
    relative,
    absolute,
    list: () => readdir(fdPath(fd), { withFileTypes: true }),
    close: () => {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

/**
 * The file operations of one tool call (or one server-side read), confined to the pinned workspace by what
 * was opened: the first operation takes a lease of the workspace descriptor, every path is walked from it
 * (see `locate`), and the final open never follows a symlink (a name swapped for one meanwhile fails with
 * ELOOP and is walked again, confined). `release()` returns the lease.
 */
export class WorkspaceFiles {
  private lease: WorkspaceLease | undefined;

  constructor(
    private readonly access: WorkspaceAccess,
    private readonly owner?: FileOwner,
    /** Checked before a path is opened by name (`open`, `openDescriptor`, `openDirectory`): throws to refuse it (see OpenGuard). */
    private readonly guard?: OpenGuard,
  ) {}

  /** The workspace's canonical path (display, and the path commands see). */
  get path(): string {
    return this.access.path;
  }

  /** The held workspace directory (taken on first use; throws WorkspaceChangedError). */
  root(): ConfinedRoot {
    this.lease ??= this.access.acquire();
    return this.lease;
  }

  release(): void {
    this.lease?.release();
    this.lease = undefined;
  }

  /** Where a user path leads, confined; the caller closes the location. */
  locate(userPath: string, options: LocateOptions = {}): Location {
    return locate(this.root(), userPath, this.owner ? { ...options, onCreated: (via) => this.chown(via) } : options);
  }

  /** lstat of what the path leads to (a last symlink is followed, confined); null when it does not exist. */
  stat(userPath: string): Stats | null {
    const location = this.locate(userPath);
    location.close();
    return location.stats;
  }

  /**
   * Opens the file the path leads to with `flags` (O_NOFOLLOW and O_NONBLOCK are added; check the handle's
   * stat before using it). With O_CREAT, missing parents are created first when `createParents` is set.
   */
  async open(
    userPath: string,
    flags: number,
    options: { mode?: number; createParents?: boolean } = {},
  ): Promise<OpenedFile> {
    for (let attempt = 0; ; attempt++) {
      const location = this.locate(userPath, { createParents: options.createParents });
      try {
        this.guard?.(userPath, location);
        const handle = await open(location.via, flags | FILE_FLAGS, options.mode ?? 0o666);
        if (this.owner && (flags & constants.O_CREAT) !== 0) await this.chownHandle(handle);
        return { handle, relative: location.relative, absolute: location.absolute };
      } catch (error) {
        // The last name became a symlink after the walk looked at it: walk again (the link is followed, confined).
        if (errnoCode(error) !== 'ELOOP' || attempt >= MAX_LINK_HOPS) throw error;
      } finally {
        location.close();
      }
    }
  }

  /**
   * Opens the existing file the path leads to, synchronously, as a raw descriptor (O_NOFOLLOW and O_NONBLOCK
   * added: the last step of the confined walk, which never blocks on a FIFO); `flags` must not create. The
   * caller fstats it before use and closes it with closeSync. Cheaper than `open` (no FileHandle, no thread-pool
   * hop for the open), for the reads on the run path; content I/O on it stays asynchronous.
   */
  openDescriptor(userPath: string, flags: number): OpenedDescriptor {
    if ((flags & constants.O_CREAT) !== 0) throw new Error('openDescriptor never creates: use open');
    for (let attempt = 0; ; attempt++) {
      const location = this.locate(userPath);
      try {
        this.guard?.(userPath, location);
        return {
          fd: openSync(location.via, flags | FILE_FLAGS),
          relative: location.relative,
          absolute: location.absolute,
        };
      } catch (error) {
        if (errnoCode(error) !== 'ELOOP' || attempt >= MAX_LINK_HOPS) throw error;
      } finally {
        location.close();
      }
    }
  }

  /** Opens the directory the path leads to. */
  openDirectory(userPath: string): OpenedDirectory {
    for (let attempt = 0; ; attempt++) {
      const location = this.locate(userPath);
      try {
        this.guard?.(userPath, location);
        return openedDirectory(openSync(location.via, DIR_FLAGS), location.relative, location.absolute);
      } catch (error) {
        if (errnoCode(error) !== 'ELOOP' || attempt >= MAX_LINK_HOPS) throw error;
      } finally {
        location.close();
      }
    }
  }

  /** Opens the subdirectory `name` of an opened directory, not following a symlink (ELOOP/ENOTDIR for one). */
  openDirectoryAt(dir: OpenedDirectory, name: string): OpenedDirectory {
    const relative = dir.relative === '.' ? name : `${dir.relative}/${name}`;
    const absolute = `${dir.absolute}/${name}`;
    // The server's data directory inside the workspace is not walked into (walks skip what they cannot open).
    if (isHidden(this.root(), absolute))
      throw Object.assign(new Error(`EACCES: ${relative} is the server's data directory`), { code: 'EACCES' });
    const fd = openSync(fdPath(dir.fd, name), DIR_FLAGS);
    return openedDirectory(fd, relative, absolute);
  }

  /** Opens the file `name` of an opened directory for reading, not following a symlink. */
  openFileAt(dir: OpenedDirectory, name: string): Promise<FileHandle> {
    return open(fdPath(dir.fd, name), constants.O_RDONLY | FILE_FLAGS);
  }

  /** Removes the file (or empty directory with `directory`) the path names; a last symlink itself is removed, not its target. */
  async remove(userPath: string, options: { directory?: boolean } = {}): Promise<void> {
    const location = this.locate(userPath, { followFinal: false });
    try {
      await (options.directory ? rmdir(location.via) : unlink(location.via));
    } finally {
      location.close();
    }
  }

  /** Renames `from` to `to` (parents of `to` created); neither last name is followed. */
  async rename(from: string, to: string): Promise<void> {
    const source = this.locate(from, { followFinal: false });
    try {
      const target = this.locate(to, { followFinal: false, createParents: true });
      try {
        await rename(source.via, target.via);
      } finally {
        target.close();
      }
    } finally {
      source.close();
    }
  }

  private chown(via: string): void {
    if (this.owner) lchownSync(via, this.owner.uid, this.owner.gid);
  }

  private async chownHandle(handle: FileHandle): Promise<void> {
    const owner = this.owner as FileOwner;
    const stats = await handle.stat();
    if (stats.uid !== owner.uid || stats.gid !== owner.gid) await handle.chown(owner.uid, owner.gid);
  }
}
