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
  /** The node's canonical workspace roots. */
  readonly roots: readonly string[];
}

/** The hash of root path -> marker token every node of the cluster agrees on. */
export function sharedRootsKey(keyPrefix: string): string {
  return `${keyPrefix}workspace-roots`;
}

function notShared(root: string, why: string): CodeError {
  return new CodeError(
    'SESSION_INITIALIZATION_ERROR',
    `workspace root ${root} is not the cluster's: ${why}. Every node must mount the same shared storage at the same path (workspace_roots on shared storage); see "Running a cluster"`,
    { resource: 'workspaceRoots', root },
  );
}

/**
 * Read the marker of `root` without following a link and only from a small regular file (a workspace
 * can be written by the model: the marker is read as untrusted input). Undefined when there is none.
 */
async function readMarker(root: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path.join(root, ROOT_MARKER), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw notShared(root, `its marker ${ROOT_MARKER} cannot be opened as a plain file (${code ?? 'error'})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MARKER_MAX_BYTES)
      throw notShared(root, `its marker ${ROOT_MARKER} is not a small regular file`);
    const text = (await handle.readFile()).toString('utf8');
    const match = MARKER_PATTERN.exec(text);
    if (!match?.[1]) throw notShared(root, `its marker ${ROOT_MARKER} is not one this server wrote`);
    return match[1];
  } finally {
    await handle.close();
  }
}

/** Create the marker of `root` unless one exists (atomic: written aside, then linked into place). */
async function writeMarker(root: string): Promise<void> {
  const token = randomBytes(16).toString('hex');
  const aside = path.join(root, `${ROOT_MARKER}.${token}`);
  try {
    await writeFile(aside, `a3s-root v1 ${token}\n`, { flag: 'wx', mode: 0o644 });
    await link(aside, path.join(root, ROOT_MARKER));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw notShared(root, `its marker ${ROOT_MARKER} cannot be written (${(error as Error).message})`);
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
  for (const root of options.roots) {
    const known = await options.redis.hget(key, root);
    let found = await readMarker(root);
    if (known !== null) {
      if (found === undefined)
        throw notShared(
          root,
          `other nodes found marker ${known.slice(0, 8)}... in ${ROOT_MARKER} there, and it is missing here`,
        );
      if (found !== known)
        throw notShared(
          root,
          `its marker ${ROOT_MARKER} (${found.slice(0, 8)}...) differs from the one other nodes found there (${known.slice(0, 8)}...)`,
        );
      continue;
    }
    if (found === undefined) {
      await writeMarker(root);
      found = await readMarker(root);
      if (found === undefined) throw notShared(root, `its marker ${ROOT_MARKER} vanished right after it was written`);
    }
    await options.redis.hsetnx(key, root, found);
    const agreed = await options.redis.hget(key, root);
    if (agreed !== found) throw notShared(root, `another node registered a different marker for it at the same time`);
  }
}
