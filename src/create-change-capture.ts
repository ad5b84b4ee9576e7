import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { CodeConfig } from './config/code-config.js';
import { CodeError } from './errors.js';
import { ChangeCapture } from './runtime/changes/change-capture.js';
import { ShadowStores } from './runtime/changes/shadow-stores.js';
import type { HostEnv } from './runtime/ports/host-env.js';
import type { ChangeSetStore } from './runtime/ports/change-set-store.js';
import type { TenantQuotas } from './runtime/quotas/tenant-quotas.js';
import type { ServerSandbox } from './runtime/sandbox/session-commands.js';
import { FileChangeSetStore } from './stores/file-change-set-store.js';
import { MemoryChangeSetStore } from './stores/memory-change-set-store.js';
import { RedisChangeSetStore } from './stores/redis-change-set-store.js';
import type { RedisClient } from './stores/redis-client.js';

/** Files larger than this are left out of a capture (listed as not captured, `too_large`). */
export const CHANGE_MAX_FILE_BYTES = 1_048_576;
/** A workspace with more files is not captured (NO_CHANGE_SET `too_many_files`). */
export const CHANGE_MAX_FILES = 100_000;
/** The largest patch a change set keeps (the seed's 4 MiB); larger: digest and size only, `truncated`. */
export const CHANGE_MAX_PATCH_BYTES = 4 * 1024 * 1024;

/** The change set store beside the session store: Redis (under each session's hash tag), memory, or files under <data_dir>/changesets. */
export function createChangeSetStore(config: CodeConfig, redis: RedisClient | undefined): ChangeSetStore {
  if (redis) return new RedisChangeSetStore(redis, config.redisKeyPrefix);
  if (config.storageBackend === 'memory') return new MemoryChangeSetStore();
  return new FileChangeSetStore(path.join(config.dataDir, 'changesets'));
}

function within(dir: string, root: string): boolean {
  const rel = path.relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The directory of the shadow stores: `changes_dir` (made when missing, canonical), else `<data_dir>/changes`. A
 * `changes_dir` inside a workspace root, or holding one, fails startup: the stores would be the model's to read
 * and write (and a capture would capture them).
 */
export async function resolveChangesDir(config: CodeConfig, workspaceRoots: readonly string[]): Promise<string> {
  if (config.changesDir === undefined) return path.join(config.dataDir, 'changes');
  let dir: string;
  try {
    await mkdir(config.changesDir, { recursive: true, mode: 0o700 });
    dir = await realpath(config.changesDir);
  } catch (error) {
    throw new CodeError(
      'SESSION_INITIALIZATION_ERROR',
      `changes_dir ${config.changesDir} cannot be made: ${(error as Error).message}`,
      { resource: 'changesDir' },
    );
  }
  const roots = await Promise.all(
    [...workspaceRoots, ...config.sharedWorkspaceRoots].map((root) => realpath(root).catch(() => root)),
  );
  for (const root of roots)
    if (within(dir, root) || within(root, dir))
      throw new CodeError(
        'SESSION_INITIALIZATION_ERROR',
        `changes_dir ${dir} ${within(dir, root) ? 'is inside' : 'holds'} the workspace root ${root}: the shadow stores must be out of every workspace's reach (put them on their own shared volume)`,
        { resource: 'changesDir', root },
      );
  return dir;
}

/** The server's change capture: shadow stores under `dir` (resolveChangesDir), change sets counted in stored bytes. */
export function createChangeCapture(
  config: CodeConfig,
  dir: string,
  sandbox: ServerSandbox,
  quotas: TenantQuotas | undefined,
  hostEnv: HostEnv,
  store: ChangeSetStore,
): ChangeCapture {
  const shadows = new ShadowStores(dir, sandbox, {
    exclude: config.limits.changeCaptureExclude,
    maxFileBytes: CHANGE_MAX_FILE_BYTES,
    maxFiles: CHANGE_MAX_FILES,
    maxPatchBytes: CHANGE_MAX_PATCH_BYTES,
  });
  return new ChangeCapture({
    shadows,
    store,
    ...(quotas && store.kind !== 'memory' ? { quota: quotas } : {}),
    maxStoreBytes: config.limits.changeStoreBytes,
    now: () => hostEnv.now(),
  });
}
