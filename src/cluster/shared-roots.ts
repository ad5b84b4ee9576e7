import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CodeError } from '../errors.js';
import type { RedisClient } from '../stores/redis-client.js';

/** The file in each workspace root that says which shared storage it is. */
export const ROOT_MARKER = '.a3s-cluster-root';

/** A marker is one line: "a3s-root v1 <32 hex>". */
const MARKER_PATTERN = /^a3s-root v1 ([0-9a-f]{32})\n?$/;
const MARKER_MAX_BYTES = 256;

/** What the check needs. */
export interface SharedRootsOptions {
  readonly redis: RedisClient;
  readonly keyPrefix: string;
  /** The node's canonical workspace roots (or another directory that must be shared, such as changes_dir). */
  readonly roots: readonly string[];
  /** What a root is, in errors: `workspace root` unless told (`changes_dir`). */
  readonly label?: string;
  /** The config field errors name: `workspaceRoots` unless told. */
  readonly resource?: string;
}

/** The hash of root path -> marker token every node of the cluster agrees on. */
export function sharedRootsKey(keyPrefix: string): string {
  return `${keyPrefix}workspace-roots`;
}

/** Who is asking: the errors name the root as a workspace root unless told otherwise. */
interface RootKind {
  readonly label: string;
  readonly resource: string;
}

const WORKSPACE_ROOT: RootKind = { label: 'workspace root', resource: 'workspaceRoots' };

function notShared(root: string, why: string, kind: RootKind = WORKSPACE_ROOT): CodeError {
  return new CodeError(
    'SESSION_INITIALIZATION_ERROR',
    `${kind.label} ${root} is not the cluster's: ${why}. Every node must mount the same shared storage at the same path (${kind.label === WORKSPACE_ROOT.label ? 'workspace_roots' : kind.label} on shared storage); see "Running a cluster"`,
    { resource: kind.resource, root },
  );
}

/**
 * Read the marker of `root` without following a link and only from a small regular file (a workspace
 * can be written by the model: the marker is read as untrusted input). Undefined when there is none.
 */
async function readMarker(root: string, kind: RootKind): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path.join(root, ROOT_MARKER), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw notShared(root, `its marker ${ROOT_MARKER} cannot be opened as a plain file (${code ?? 'error'})`, kind);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MARKER_MAX_BYTES)
      throw notShared(root, `its marker ${ROOT_MARKER} is not a small regular file`, kind);
    const text = (await handle.readFile()).toString('utf8');
    const match = MARKER_PATTERN.exec(text);
    if (!match?.[1]) throw notShared(root, `its marker ${ROOT_MARKER} is not one this server wrote`, kind);
    return match[1];
  } finally {
    await handle.close();
  }
}

/** Create the marker of `root` unless one exists (atomic: written aside, then linked into place). */
async function writeMarker(root: string, kind: RootKind): Promise<void> {
  const token = randomBytes(16).toString('hex');
  const aside = path.join(root, `${ROOT_MARKER}.${token}`);
  try {
    await writeFile(aside, `a3s-root v1 ${token}\n`, { flag: 'wx', mode: 0o644 });
    await link(aside, path.join(root, ROOT_MARKER));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw notShared(root, `its marker ${ROOT_MARKER} cannot be written (${(error as Error).message})`, kind);
  } finally {
    await unlink(aside).catch(() => undefined);
  }
}

/**
 * At startup on Redis: check that this node's workspace roots are the storage the other nodes use. Each
 * root holds a marker file with a random token, and Redis maps each root path to the token the first node
 * found there. A root whose marker is missing or different while Redis knows it (a local disk mounted where
 * the shared volume should be) fails startup; a root Redis does not know yet is registered.
 */
export async function checkSharedRoots(options: SharedRootsOptions): Promise<void> {
  const key = sharedRootsKey(options.keyPrefix);
  const kind: RootKind =
    options.label !== undefined
      ? { label: options.label, resource: options.resource ?? WORKSPACE_ROOT.resource }
      : WORKSPACE_ROOT;
  for (const root of options.roots) {
    const known = await options.redis.hget(key, root);
    let found = await readMarker(root, kind);
    if (known !== null) {
      if (found === undefined)
        throw notShared(
          root,
          `other nodes found marker ${known.slice(0, 8)}... in ${ROOT_MARKER} there, and it is missing here`,
          kind,
        );
      if (found !== known)
        throw notShared(
          root,
          `its marker ${ROOT_MARKER} (${found.slice(0, 8)}...) differs from the one other nodes found there (${known.slice(0, 8)}...)`,
          kind,
        );
      continue;
    }
    if (found === undefined) {
      await writeMarker(root, kind);
      found = await readMarker(root, kind);
      if (found === undefined)
        throw notShared(root, `its marker ${ROOT_MARKER} vanished right after it was written`, kind);
    }
    await options.redis.hsetnx(key, root, found);
    const agreed = await options.redis.hget(key, root);
    if (agreed !== found)
      throw notShared(root, `another node registered a different marker for it at the same time`, kind);
  }
}
