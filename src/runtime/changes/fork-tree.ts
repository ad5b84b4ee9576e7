import { CodeError } from '../../errors.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import { isTerminal } from '../session-kernel/session-runs.js';
import type { ChangeCapture } from './change-capture.js';

/** Why a copy fork has no tree (FORK_TREE_UNAVAILABLE's `details.reason`). */
export type ForkTreeReason = 'capture_off' | 'no_change_set' | 'nothing_captured' | 'tree_missing';

/** FORK_TREE_UNAVAILABLE: a copy fork has no tree to be written from. */
export function forkTreeUnavailable(reason: ForkTreeReason, message: string, runId?: string): CodeError {
  return new CodeError('FORK_TREE_UNAVAILABLE', `workspace "copy": ${message}; fork with workspace "shared" instead`, {
    field: 'body.workspace',
    reason,
    ...(runId !== undefined ? { runId } : {}),
  });
}

function treeOf(tree: string): string {
  return tree.slice('git-tree:'.length);
}

/**
 * True when the run's files are not in the workspace after it: it was reverted (a live revert, or reverted and then
 * dropped by a later run: no transcriptStart left), or rolled back with its files restored. Such a run left the
 * workspace as the run before it did.
 */
function leftNoFiles(run: RunRecord, reverted: ReadonlySet<string>): boolean {
  if (reverted.has(run.runId)) return true;
  if (run.transcriptStart === undefined) return true;
  const files = run.metadata?.rolled_back_files as { status?: string } | undefined;
  return files?.status === 'restored' || files?.status === 'unchanged';
}

/**
 * The tree a copy fork of `parent` is written from (docs/fork.md): with `atRunId`, the run's base tree (the
 * workspace before its first mutating call), else the workspace as the last run left it: a live revert's tree, or
 * the result tree of the last ended run that left files. Runs that made no mutating call (this node knows) and runs
 * reverted or rolled back are passed over; a run on the way without a change set, or none captured at all, is
 * FORK_TREE_UNAVAILABLE naming it.
 */
export async function forkTree(
  parent: AgentSession,
  capture: ChangeCapture | undefined,
  atRunId: string | undefined,
): Promise<string> {
  if (!capture || !parent.changes)
    throw forkTreeUnavailable('capture_off', 'change capture is off for this session, so it has no captured files');
  const runs = parent.runs.list();
  const transcript = parent.transcript;
  const state = transcript.reverted;
  const live =
    state !== undefined && state.epoch === transcript.epoch && state.atMessage === transcript.messages.length
      ? state
      : undefined;
  let from = runs.length - 1;
  if (atRunId !== undefined) {
    from = runs.findIndex((run) => run.runId === atRunId);
    const own = from >= 0 ? await capture.get(parent.key, atRunId) : undefined;
    if (own) return treeOf(own.base_tree);
    from -= 1;
  } else if (live?.baseTree !== undefined) return live.baseTree;
  const reverted = new Set(live?.runIds ?? []);
  for (let index = from; index >= 0; index -= 1) {
    const run = runs[index]!;
    if (run.sideQuestion || !isTerminal(run.status) || leftNoFiles(run, reverted)) continue;
    const changeSet = await capture.get(parent.key, run.runId);
    if (changeSet) return treeOf(changeSet.result_tree);
    // No tool call at all, or none that could change files (what this node remembers).
    if (run.result?.toolCallsCount === 0 || parent.changes.whyNone(run.runId)?.reason === 'no_mutating_call') continue;
    throw forkTreeUnavailable(
      'no_change_set',
      `run ${run.runId} has no change set (${parent.changes.whyNone(run.runId)?.message ?? 'it was not captured on this node, or before a restart'}), so the files after it are not known`,
      run.runId,
    );
  }
  throw forkTreeUnavailable(
    'nothing_captured',
    'no run of the session captured its files before the fork point (the workspace as it was before any run is not kept)',
  );
}
