import { CodeError } from '../../errors.js';
import type { RevertedFile } from '../../protocol/revert.js';
import type { CaptureTarget, ShadowStores } from './shadow-stores.js';

/** One entry of `git diff --raw -z --no-renames`: the path and whether the second tree has it. */
interface RawEntry {
  readonly path: string;
  readonly inSecond: boolean;
}

/** The entries of `git diff --raw -z --no-renames` (`:<mode> <mode> <sha> <sha> <status>\0<path>\0`). */
export function parseRawDiff(raw: Buffer): RawEntry[] {
  const parts = raw.toString('utf8').split('\0');
  const entries: RawEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 1) {
    const meta = parts[i]!;
    if (!meta.startsWith(':')) continue;
    const status = meta.split(' ')[4] ?? '';
    entries.push({ path: parts[i + 1]!, inSecond: !status.startsWith('D') });
    i += 1;
  }
  return entries;
}

/** What a restore is asked: the tree the paths should match now, the tree to write them from, the paths. */
export interface TreeRestore {
  readonly expected: string;
  readonly goal: string;
  readonly paths: readonly string[];
  readonly force: boolean;
}

/**
 * Make `paths` of the workspace match `goal` (a path in it is written from it, one absent from it removed), in the
 * sandbox: first the workspace is captured and compared with `expected` (409 REVERT_CONFLICT listing the paths
 * changed since, unless `force`), then only the paths that differ from the goal are written.
 */
export async function restoreTree(
  shadows: ShadowStores,
  target: CaptureTarget,
  restore: TreeRestore,
): Promise<RevertedFile[]> {
  const wanted = new Set(restore.paths);
  const plan = await shadows.plan(target, restore.expected, restore.goal);
  const conflicts = parseRawDiff(plan.conflicts)
    .map((entry) => entry.path)
    .filter((file) => wanted.has(file));
  if (conflicts.length > 0 && !restore.force)
    throw new CodeError(
      'REVERT_CONFLICT',
      `${conflicts.length === 1 ? 'a path was' : `${conflicts.length} paths were`} changed since the last capture (by a person or another session): ${conflicts.slice(0, 5).join(', ')}${conflicts.length > 5 ? ', ...' : ''}; send force: true to overwrite ${conflicts.length === 1 ? 'it' : 'them'}`,
      { paths: conflicts.slice(0, 1000), count: conflicts.length },
    );
  const steps = parseRawDiff(plan.plan).filter((entry) => wanted.has(entry.path));
  const checkout = steps.filter((entry) => entry.inSecond).map((entry) => entry.path);
  const remove = steps.filter((entry) => !entry.inSecond).map((entry) => entry.path);
  if (steps.length > 0) await shadows.restore(target, plan.current, restore.goal, { checkout, remove });
  return steps
    .map((entry): RevertedFile => ({ path: entry.path, action: entry.inSecond ? 'restored' : 'deleted' }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
