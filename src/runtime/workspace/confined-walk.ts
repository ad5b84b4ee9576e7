import { closeSync, constants, lstatSync, mkdirSync, openSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';
import { WorkspaceEscapeError } from './workspace-errors.js';

/** Linux gives up after 40 symlink hops (ELOOP); so does the walk. */
export const MAX_LINK_HOPS = 40;

/** Opens one directory below a held one, never through a symlink (the walk follows links itself). */
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The path that reaches `name` inside the directory open as `fd`, with openat semantics: the kernel follows
 * the `/proc/self/fd/<fd>` magic link to the opened directory itself (whatever its name is now) and resolves
 * `name` there. `name` is one component; callers pass O_NOFOLLOW so a symlink there is not followed.
 */
export function fdPath(fd: number, name = '.'): string {
  return `/proc/self/fd/${fd}/${name}`;
}

/** A held directory every walk starts from and never climbs above: the pinned workspace. */
export interface ConfinedRoot {
  readonly fd: number;
  /** Its canonical path, for display, absolute user paths and absolute link targets inside it. */
  readonly path: string;
  /**
   * Canonical directories inside the root that nothing reaches (the server's data directory when it lies in a
   * workspace, as `./.a3s` does under the default root): a walk that ends in one is refused.
   */
  readonly hidden?: readonly string[];
}

/** True when the canonical `absolute` path is, or lies inside, one of the root's hidden directories. */
export function isHidden(root: ConfinedRoot, absolute: string): boolean {
  return root.hidden !== undefined && root.hidden.some((dir) => isInside(dir, absolute));
}

/** How `locate` treats the path. */
export interface LocateOptions {
  /** Follow a symlink in the last component (confined like every other hop). Default true. */
  readonly followFinal?: boolean;
  /** Create missing parent directories (mode 0777 less the umask). */
  readonly createParents?: boolean;
  /** Called with the path (through a held descriptor) of each directory the walk creates (fchown for run_as). */
  readonly onCreated?: (via: string) => void;
}

/** True when `candidate` is `root` or lies inside it (lexically; callers compare canonical paths). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

function errnoError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

/**
 * Where a confined path leads: the directory that holds the entry (held open) and the entry's name in it.
 * Open the entry through `via` with O_NOFOLLOW: what is opened is the entry of that directory, whatever
 * happened to the names above it since. `close()` releases the held directory (never the root).
 */
export class Location {
  private closed = false;

  constructor(
    readonly root: ConfinedRoot,
    /** Canonical components of the entry below the root (empty: the root itself). */
    readonly parts: readonly string[],
    /** The directory holding the entry; for a directory reached by `..` (and the root), the directory itself. */
    readonly dirFd: number,
    /** The entry's name in `dirFd`; `.` when the entry is `dirFd` itself. */
    readonly name: string,
    /** lstat of the entry when the walk reached it (not following it); null when it does not exist. */
    readonly stats: Stats | null,
  ) {}

  /** The path that opens exactly this entry (pass O_NOFOLLOW). */
  get via(): string {
    return fdPath(this.dirFd, this.name);
  }

  /** The path relative to the workspace with `/` separators (`.` for the workspace itself). */
  get relative(): string {
    return this.parts.length === 0 ? '.' : this.parts.join('/');
  }

  /** The entry's canonical absolute path (what a command inside the sandbox sees). */
  get absolute(): string {
    return path.join(this.root.path, ...this.parts);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.dirFd !== this.root.fd) closeSync(this.dirFd);
  }
}

/** Pushes the components of a relative path onto the pending stack (reversed: the next one is popped last). */
function pushComponents(pending: string[], relative: string): void {
  const parts = relative.split('/').filter((part) => part !== '' && part !== '.');
  for (let i = parts.length - 1; i >= 0; i--) pending.push(parts[i]);
}

/** The pending components of a user path: lexically normalized inside the root, else refused. */
function initialComponents(root: ConfinedRoot, userPath: string): string[] {
  const lexical = path.isAbsolute(userPath) ? path.resolve(userPath) : path.resolve(root.path, userPath);
  if (!isInside(root.path, lexical)) {
    throw new WorkspaceEscapeError(
      userPath,
      path.isAbsolute(userPath) ? 'absolute path outside the workspace' : 'it climbs out with ".."',
    );
  }
  const pending: string[] = [];
  pushComponents(pending, path.relative(root.path, lexical));
  return pending;
}

function lstatOrNull(at: string): Stats | null {
  return lstatSync(at, { throwIfNoEntry: false }) ?? null;
}

/**
 * Walks `userPath` from the held root one component at a time: each directory is opened relative to the one
 * before with O_NOFOLLOW, a symlink on the way is read and resolved by hand (relative targets against the
 * directory holding it, absolute ones only when they lie inside the root, from the root), `..` from a link
 * target pops back to the directory opened before and never above the root, at most MAX_LINK_HOPS links.
 * No name is checked and then used again: every step goes through a descriptor the walk holds.
 * Synchronous on purpose (a few opens of cached dentries); content I/O stays asynchronous.
 */
export function locate(root: ConfinedRoot, userPath: string, options: LocateOptions = {}): Location {
  const pending = initialComponents(root, userPath);
  const followFinal = options.followFinal ?? true;
  const stack: { fd: number; name: string }[] = [];
  let hops = 0;
  let done = false;
  const top = (): number => (stack.length > 0 ? stack[stack.length - 1].fd : root.fd);
  const follow = (dir: number, name: string): void => {
    hops += 1;
    if (hops > MAX_LINK_HOPS) throw errnoError('ELOOP', `too many levels of symbolic links in ${userPath}`);
    let target: string;
    try {
      target = readlinkSync(fdPath(dir, name));
    } catch (error) {
      // No longer a link (swapped back meanwhile): take the component again.
      if (errnoCode(error) === 'EINVAL') return void pending.push(name);
      throw error;
    }
    if (!path.isAbsolute(target)) return pushComponents(pending, target);
    const resolved = path.resolve(target);
    if (!isInside(root.path, resolved)) throw new WorkspaceEscapeError(userPath, `a symbolic link leads to ${target}`);
    // An absolute target inside the workspace: walk it again from the held root.
    for (const entry of stack.splice(0)) closeSync(entry.fd);
    pushComponents(pending, path.relative(root.path, resolved));
  };
  try {
    while (pending.length > 0) {
      const name = pending.pop() as string;
      if (name === '..') {
        const left = stack.pop();
        if (!left) throw new WorkspaceEscapeError(userPath, 'a symbolic link climbs out with ".."');
        closeSync(left.fd);
        continue;
      }
      const dir = top();
      if (pending.length === 0) {
        const stats = lstatOrNull(fdPath(dir, name));
        if (stats?.isSymbolicLink() && followFinal) {
          follow(dir, name);
          continue;
        }
        const parts = [...stack.map((entry) => entry.name), name];
        if (root.hidden && isHidden(root, path.join(root.path, ...parts)))
          throw new WorkspaceEscapeError(userPath, "it lies in the server's data directory");
        stack.pop();
        for (const entry of stack) closeSync(entry.fd);
        done = true;
        return new Location(root, parts, dir, name, stats);
      }
      let fd: number;
      try {
        fd = openSync(fdPath(dir, name), DIR_FLAGS);
      } catch (error) {
        const code = errnoCode(error);
        if (code === 'ELOOP' || (code === 'ENOTDIR' && lstatOrNull(fdPath(dir, name))?.isSymbolicLink())) {
          follow(dir, name);
          continue;
        }
        if (code !== 'ENOENT' || !options.createParents) throw error;
        hops += 1;
        if (hops > MAX_LINK_HOPS) throw errnoError('ELOOP', `${userPath} keeps changing while it is created`);
        try {
          mkdirSync(fdPath(dir, name));
          options.onCreated?.(fdPath(dir, name));
        } catch (mkdirError) {
          if (errnoCode(mkdirError) !== 'EEXIST') throw mkdirError;
        }
        pending.push(name);
        continue;
      }
      stack.push({ fd, name });
    }
    // The path ended at a directory (the root, or one reached by `..`): the entry is that directory itself.
    const last = stack[stack.length - 1];
    const parts = stack.map((entry) => entry.name);
    if (root.hidden && isHidden(root, path.join(root.path, ...parts)))
      throw new WorkspaceEscapeError(userPath, "it lies in the server's data directory");
    for (const entry of stack.slice(0, -1)) closeSync(entry.fd);
    done = true;
    const dir = last?.fd ?? root.fd;
    return new Location(root, parts, dir, '.', lstatOrNull(fdPath(dir, '.')));
  } finally {
    if (!done) for (const entry of stack) closeSync(entry.fd);
  }
}
