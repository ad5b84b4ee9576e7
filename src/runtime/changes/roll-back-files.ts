import { CodeError } from '../../errors.js';
import type { CapturedRun, SessionChanges } from './session-changes.js';

/** What a rollback did to the rolled-back run's files (run_files_rolled_back, the record's `metadata.rolled_back_files`). */
export interface RolledBackFiles {
  readonly status: 'restored' | 'unchanged' | 'no_change_set' | 'conflict' | 'failed';
  /** Paths written or removed. */
  readonly files: number;
  /** `conflict`: the paths changed since the run's capture (at most 100). */
  readonly paths?: string[];
  readonly reason?: string;
  readonly message?: string;
}

function treeOf(tree: string): string {
  return tree.slice('git-tree:'.length);
}

/**
 * Revert the files of a run cancelled by a rollback (multitaskStrategy rollback, docs/runs.md), still under its run
 * lease: its change set (just captured) from its result tree back to its base tree, through the revert's restore.
 * A path last changed outside the run's own calls (someone else's edit while it ran), or changed again between the
 * capture and the restore, is a conflict, and nothing is written. Never throws: what happened is the answer, for the
 * event and the run's record.
 */
export async function rollBackFiles(
  changes: SessionChanges | undefined,
  runId: string,
  captured: CapturedRun | undefined,
): Promise<RolledBackFiles> {
  if (!changes)
    return {
      status: 'no_change_set',
      files: 0,
      reason: 'capture_off',
      message: 'change capture is off for this session',
    };
  if (!captured) {
    const why = changes.whyNone(runId);
    if (why?.reason === 'no_mutating_call') return { status: 'unchanged', files: 0 };
    return {
      status: 'no_change_set',
      files: 0,
      reason: why?.reason ?? 'unknown',
      message: `the run has no change set, so its files were not reverted (${why?.message ?? 'not captured'})`,
    };
  }
  const { changeSet } = captured;
  if (changeSet.files.length === 0) return { status: 'unchanged', files: 0 };
  // Someone else changed a path while the run ran (outside its calls): its change set holds their edit too, so a
  // restore to the base would overwrite it. Nothing is written; the paths are named.
  if (captured.foreign.length > 0)
    return {
      status: 'conflict',
      files: 0,
      paths: captured.foreign.slice(0, 100),
      message: `${captured.foreign.length} path(s) the run's change set holds were last changed outside the run's own calls (by someone else, meanwhile): nothing was reverted`,
    };
  const paths = [...new Set(changeSet.files.flatMap((file) => [file.path, ...(file.oldPath ? [file.oldPath] : [])]))];
  try {
    const files = await changes.restore({
      expected: treeOf(changeSet.result_tree),
      goal: treeOf(changeSet.base_tree),
      paths,
      force: false,
    });
    return { status: 'restored', files: files.length };
  } catch (error) {
    if (error instanceof CodeError && error.code === 'REVERT_CONFLICT') {
      const conflicts = (error.details as { paths?: string[] } | undefined)?.paths ?? [];
      return { status: 'conflict', files: 0, paths: conflicts.slice(0, 100), message: error.message };
    }
    return { status: 'failed', files: 0, message: error instanceof Error ? error.message : String(error) };
  }
}
