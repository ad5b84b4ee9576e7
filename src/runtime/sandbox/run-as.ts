import { execFile } from 'node:child_process';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { FileOwner } from '../workspace/workspace-files.js';

/** The dedicated user contained commands run as when the server runs as root (scripts/install-test-deps.sh creates it). */
export const DEFAULT_RUN_AS = 'a3s-sandbox';

/** The unprivileged host user a root server runs contained commands as (config sandbox.run_as), resolved at start. */
export interface RunAsUser extends FileOwner {
  /** The configured name or uid, as the operator wrote it (for messages). */
  readonly name: string;
}

/** What resolving sandbox.run_as found: the user, or why there is none (`explicit`: the operator named it). */
export type RunAsResolution =
  { readonly user: RunAsUser } | { readonly user?: undefined; readonly problem?: string; readonly explicit: boolean };

/** Resolutions per config object: the server's file owner is read by parts built from the same config (tenant directories). */
const resolutions = new WeakMap<object, RunAsUser>();

function getentPasswd(name: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('getent', ['passwd', name], { env: { PATH: '/usr/bin:/bin' }, timeout: 5000 }, (error, stdout) =>
      resolve(error ? undefined : String(stdout).split('\n')[0]),
    );
  });
}

/**
 * Resolve sandbox.run_as (default `a3s-sandbox`) to a uid and gid once, at start, when the server runs as root
 * (`getuid() === 0`); nothing otherwise: a non-root server's commands already run as an unprivileged user.
 * Names go through NSS (`getent passwd`); a bare number without a passwd entry is used as uid and gid.
 */
export async function resolveRunAs(
  configured: string | undefined,
  uid: number | undefined = process.getuid?.(),
): Promise<RunAsResolution> {
  const explicit = configured !== undefined;
  if (uid !== 0) return { explicit };
  const name = configured ?? DEFAULT_RUN_AS;
  const entry = await getentPasswd(name);
  const fields = entry?.split(':');
  let user: RunAsUser | undefined;
  if (fields && fields.length >= 4 && /^\d+$/.test(fields[2] ?? '') && /^\d+$/.test(fields[3] ?? ''))
    user = { name, uid: Number(fields[2]), gid: Number(fields[3]) };
  else if (/^\d+$/.test(name)) user = { name, uid: Number(name), gid: Number(name) };
  if (!user) {
    return {
      explicit,
      problem: `sandbox.run_as: the user "${name}" does not exist (create it, e.g. useradd --system --no-create-home --shell /usr/sbin/nologin ${name}, as scripts/install-test-deps.sh does, or name another unprivileged user)`,
    };
  }
  if (user.uid === 0 || user.gid === 0)
    return { explicit, problem: `sandbox.run_as: "${name}" is root (uid or gid 0); name an unprivileged user` };
  return { user };
}

/** Remember the server's resolved run_as for a configuration (the tenant directories built from it get that owner). */
export function rememberRunAs(config: object, user: RunAsUser | undefined): void {
  if (user) resolutions.set(config, user);
  else resolutions.delete(config);
}

/** The owner of what the server creates for tenants under this configuration (tenant directories): run_as, or none. */
export function runAsOf(config: object): RunAsUser | undefined {
  return resolutions.get(config);
}

/** True when the user may search (traverse) `dir` and every directory above it (mode bits; its primary group only). */
export async function searchableBy(dir: string, user: FileOwner): Promise<boolean> {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const stats = await lstat(at).catch(() => null);
    if (!stats) return false;
    const bit = stats.uid === user.uid ? 0o100 : stats.gid === user.gid ? 0o010 : 0o001;
    if (stats.isDirectory() && (stats.mode & bit) === 0) return false;
    if (at === path.dirname(at)) return true;
  }
}
