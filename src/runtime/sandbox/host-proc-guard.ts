import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { CommandRefusedError } from './sandbox.js';

/**
 * The host's `/proc` shows the server's own environment (`/proc/self/environ`, `/proc/<server pid>/environ`: provider
 * keys, API tokens, the cluster secret), its descriptors and every host process. A sandbox gets a fresh procfs of its
 * own PID namespace (`--proc /proc`) and never a bind of the host's: not `/proc`, nothing below it, and not `/` or any
 * other directory a proc file system is mounted below (bwrap's binds are recursive, so they would carry it along).
 */

/** bwrap options whose next argument is a host path bound into the sandbox. */
const BIND_OPTIONS = new Set(['--bind', '--bind-try', '--ro-bind', '--ro-bind-try', '--dev-bind', '--dev-bind-try']);
/** bwrap options whose next argument is a descriptor of a host path bound into the sandbox. */
const BIND_FD_OPTIONS = new Set(['--bind-fd', '--ro-bind-fd']);

/** A bind of the host's procfs (or of a directory holding it) was asked for: refused (a command is refused, not run). */
export class HostProcBindError extends CommandRefusedError {
  readonly bind = 'host-proc' as const;
}

/** Decode the octal escapes of a mountinfo path (`\040` for a space). */
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Mount points of every proc file system in this mount namespace (from /proc/self/mountinfo; `/proc` always). */
export function procMountPoints(mountinfo?: string): string[] {
  let text = mountinfo;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/mountinfo', 'utf8');
    } catch {
      text = '';
    }
  }
  const points = new Set(['/proc']);
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    const fields = left?.split(' ');
    const mountPoint = fields?.[4];
    if (right === undefined || mountPoint === undefined) continue;
    if (right.split(' ')[0] === 'proc') points.add(path.posix.normalize(unescapeMountPath(mountPoint)));
  }
  return [...points];
}

function overlaps(where: string, mountPoint: string): boolean {
  if (where === '/' || where === mountPoint) return true;
  return where.startsWith(`${mountPoint}/`) || mountPoint.startsWith(`${where}/`);
}

/** Normalise an absolute path as bwrap would see it lexically: `..`, `.`, repeated and trailing slashes resolved. */
function normalized(where: string): string {
  const result = path.posix.resolve('/', where);
  return result.length > 1 ? result.replace(/\/+$/, '') : result;
}

/**
 * Why `where` must not be bound into a sandbox, judged on its text alone (config validation): `/`, `/proc` and
 * anything below it, after `..`, `.` and slashes are resolved. Undefined when the text is fine.
 */
export function lexicalHostProcProblem(where: string): string | undefined {
  const at = normalized(where);
  if (overlaps(at, '/proc'))
    return `${JSON.stringify(where)} would show the host's /proc (the server's environment) inside the sandbox; it is never bound`;
  return undefined;
}

/**
 * Why `where` must not be bound into a sandbox: its text, or what it resolves to (symlinks followed), is a proc
 * mount point, lies below one, or holds one below it. Undefined when it is fine (a missing path is judged by its text).
 */
export function hostProcProblem(where: string, procMounts: readonly string[] = procMountPoints()): string | undefined {
  const candidates = [normalized(where)];
  try {
    candidates.push(realpathSync(where));
  } catch {
    // Missing: bwrap's --ro-bind-try skips it; the text was checked.
  }
  for (const candidate of candidates) {
    const mount = procMounts.find((point) => overlaps(candidate, point));
    if (mount !== undefined) {
      const via = candidate === normalized(where) ? '' : ` (it resolves to ${candidate})`;
      return `${JSON.stringify(where)}${via} would show the host's proc file system at ${mount} (the server's environment) inside the sandbox; it is never bound`;
    }
  }
  return undefined;
}

/** Throw HostProcBindError for the first path that would bind the host's procfs. */
export function assertNoHostProc(paths: readonly string[], procMounts: readonly string[] = procMountPoints()): void {
  for (const where of paths) {
    const problem = hostProcProblem(where, procMounts);
    if (problem !== undefined) throw new HostProcBindError(problem);
  }
}

/**
 * Check every host path a bwrap argument list binds (`--bind`, `--ro-bind`, their `-try` forms, `--dev-bind`, and the
 * paths behind `--bind-fd`/`--ro-bind-fd` descriptors: `fdPaths` maps the child's descriptor number to the server's
 * own descriptor). Arguments after `--` are the command's and not looked at.
 */
export function assertBwrapBindsSafe(
  args: readonly string[],
  fdPaths: ReadonlyMap<string, number>,
  procMounts: readonly string[] = procMountPoints(),
): void {
  const sources: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === '--') break;
    const next = args[index + 1];
    if (next === undefined) break;
    if (BIND_OPTIONS.has(arg)) sources.push(next);
    if (BIND_FD_OPTIONS.has(arg)) {
      const fd = fdPaths.get(next);
      if (fd === undefined) throw new HostProcBindError(`bwrap ${arg} ${next}: no known descriptor to check`);
      sources.push(readlinkSync(`/proc/self/fd/${fd}`));
    }
  }
  assertNoHostProc(sources, procMounts);
}
