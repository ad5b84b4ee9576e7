import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceEscapeError, WorkspacePathNotFoundError } from '../workspace/workspace-errors.js';

export { WorkspaceEscapeError, WorkspacePathNotFoundError };

/** Options of `resolveInWorkspace`. */
export interface ResolveOptions {
  /** Throw `WorkspacePathNotFoundError` when the path does not exist. */
  mustExist?: boolean;
}

// Linux gives up after 40 symlink hops (ELOOP); so do we.
const MAX_LINK_HOPS = 40;

/** True when `candidate` is `root` or lies inside it (lexically; callers compare canonical paths). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

async function lstatOrNull(p: string): Promise<Awaited<ReturnType<typeof lstat>> | null> {
  try {
    return await lstat(p);
  } catch (error) {
    if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) return null;
    throw error;
  }
}

/**
 * The canonical form of `absPath`: realpath of its deepest existing ancestor plus the missing tail.
 * A dangling symlink on the way is followed by hand, because writing through it would create its target.
 */
async function canonicalize(absPath: string, userPath: string, hops = 0): Promise<{ real: string; exists: boolean }> {
  if (hops > MAX_LINK_HOPS) throw new WorkspaceEscapeError(userPath, 'too many levels of symbolic links');
  const tail: string[] = [];
  let current = absPath;
  for (;;) {
    const stats = await lstatOrNull(current);
    if (stats) {
      try {
        const real = await realpath(current);
        return { real: tail.length ? path.join(real, ...tail.reverse()) : real, exists: tail.length === 0 };
      } catch (error) {
        if (!stats.isSymbolicLink() || !isErrno(error, 'ENOENT')) throw error;
        // A dangling symlink: continue from the path it points at.
        const target = path.resolve(path.dirname(current), await readlink(current));
        const joined = tail.length ? path.join(target, ...tail.reverse()) : target;
        const resolved = await canonicalize(joined, userPath, hops + 1);
        return { real: resolved.real, exists: false };
      }
    }
    const parent = path.dirname(current);
    if (parent === current) return { real: absPath, exists: false };
    tail.push(path.basename(current));
    current = parent;
  }
}

/** Canonical form of `absPath`: one realpath when it exists (the common case), else the walk of `canonicalize`. */
async function canonicalOf(absPath: string, userPath: string): Promise<{ real: string; exists: boolean }> {
  try {
    return { real: await realpath(absPath), exists: true };
  } catch (error) {
    if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) return canonicalize(absPath, userPath);
    throw error;
  }
}

/**
 * Resolve `userPath` (relative to the workspace, or absolute inside it) to a canonical absolute path,
 * refusing `..` escapes and symlinks whose target lies outside the workspace.
 */
export async function resolveInWorkspace(workspace: string, userPath: string, opts: ResolveOptions = {}): Promise<string> {
  const root = path.resolve(workspace);
  const lexical = path.isAbsolute(userPath) ? path.resolve(userPath) : path.resolve(root, userPath);
  let rootReal: string;
  let canonical: { real: string; exists: boolean };
  if (isInside(root, lexical)) {
    canonical = await canonicalOf(lexical, userPath);
    // The usual case: an existing path whose realpath lies at or under the workspace's own path is inside it,
    // with no realpath of the workspace (every prefix of a realpath is canonical, so the workspace resolves to
    // itself). Anything else (a missing path, a workspace named through a symlink) is judged against where
    // the workspace really is.
    rootReal = canonical.exists && isInside(root, canonical.real) ? root : await realpath(root);
  } else {
    // Only a path under the canonical root (given through a symlinked workspace) may still be inside.
    rootReal = await realpath(root);
    if (!isInside(rootReal, lexical)) {
      throw new WorkspaceEscapeError(userPath, path.isAbsolute(userPath) ? 'absolute path outside the workspace' : 'it climbs out with ".."');
    }
    canonical = await canonicalOf(lexical, userPath);
  }
  const { real, exists } = canonical;
  if (!isInside(rootReal, real)) {
    throw new WorkspaceEscapeError(userPath, `a symbolic link leads to ${real}`);
  }
  if (opts.mustExist && !exists) throw new WorkspacePathNotFoundError(userPath);
  return real;
}

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
