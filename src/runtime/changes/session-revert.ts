import { CodeError } from '../../errors.js';
import type { ChangeSet } from '../../protocol/change-set.js';
import type { RevertResponse, RevertState, RevertedFile } from '../../protocol/revert.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { ChangeCapture } from './change-capture.js';
import { restoreTree } from './restore-tree.js';
import { CaptureError } from './capture-error.js';

function treeOf(tree: string): string {
  return tree.slice('git-tree:'.length);
}

function noChangeSet(runId: string, reason: string, message: string): CodeError {
  return new CodeError('NO_CHANGE_SET', `run ${runId} cannot be reverted: ${message}`, { runId, reason });
}

/** The change sets of `runs` (oldest first); a run without one is refused unless it made no call that could change files. */
async function changeSetsOf(
  session: AgentSession,
  capture: ChangeCapture | undefined,
  runs: readonly RunRecord[],
): Promise<ChangeSet[]> {
  const found: ChangeSet[] = [];
  for (const run of runs) {
    const changeSet = capture ? await capture.get(session.key, run.runId) : undefined;
    if (changeSet) {
      found.push(changeSet);
      continue;
    }
    const why = session.changes?.whyNone(run.runId);
    if (why?.reason === 'no_mutating_call') continue;
    throw noChangeSet(
      run.runId,
      why?.reason ?? 'unknown',
      `it has no change set, so its files cannot be restored (${why?.message ?? (session.changes ? 'it was not captured on this node' : 'change capture is off for this session')})`,
    );
  }
  return found;
}

/** Restore through the session's capture target, with the store's errors as NO_CHANGE_SET. */
async function restoreFiles(
  session: AgentSession,
  capture: ChangeCapture | undefined,
  runId: string,
  restore: { expected: string; goal: string; paths: readonly string[]; force: boolean },
): Promise<RevertedFile[]> {
  if (!capture || !session.changes)
    throw noChangeSet(runId, 'unknown', 'change capture is off for this session, its files cannot be restored');
  try {
    return await restoreTree(capture.deps.shadows, session.changes.target, restore);
  } catch (error) {
    if (!(error instanceof CaptureError)) throw error;
    throw noChangeSet(
      runId,
      error.reason === 'failed' ? 'capture_failed' : error.reason,
      error.reason === 'tree_missing'
        ? "this node's shadow store does not hold the runs' trees (they were captured on another node)"
        : `the restore failed: ${error.message}`,
    );
  }
}

function unavailable(runId: string, message: string): CodeError {
  return new CodeError('REVERT_UNAVAILABLE', `run ${runId} cannot be reverted: ${message}`, { runId });
}

/**
 * POST .../runs/:runId/revert (docs/changes.md), under the run lease: the files the run and every later run changed
 * go back to the run's base tree, and the transcript from the run's start on is cut from what the model sees (kept
 * in `transcript.reverted` for an unrevert). A run already reverted is refused; reverting an earlier run while some
 * are reverted extends the revert.
 */
export async function revertRun(
  session: AgentSession,
  capture: ChangeCapture | undefined,
  runId: string,
  force: boolean,
): Promise<RevertResponse> {
  const runs = session.runs.list();
  const index = runs.findIndex((run) => run.runId === runId);
  const record = index >= 0 ? runs[index]! : session.runs.get(runId);
  const transcript = session.transcript;
  const existing = transcript.reverted;
  if (existing?.runIds.includes(runId)) throw unavailable(runId, 'it is already reverted (unrevert first)');
  if (record.sideQuestion) throw unavailable(runId, 'it is a side question, which has no messages in the transcript');
  const start = record.transcriptStart;
  if (start === undefined)
    throw unavailable(
      runId,
      'it has no recorded start in the transcript (it was reverted and then dropped by a later run, or recorded by an older server)',
    );
  if ((record.transcriptEpoch ?? 0) !== transcript.epoch || start > transcript.messages.length)
    throw unavailable(
      runId,
      'its messages were compacted into a summary (or the transcript was cleared or rewritten) since, so they cannot be hidden from the model',
    );
  const reverted = new Set(existing?.runIds ?? []);
  const newRuns = runs.slice(index).filter((run) => !reverted.has(run.runId));
  const changeSets = await changeSetsOf(session, capture, newRuns);
  const first = changeSets[0];
  const last = changeSets.at(-1);
  const goal = first ? treeOf(first.base_tree) : existing?.baseTree;
  // The workspace as the last capture left it: the earlier revert's tree, else the last run's result.
  const expected = existing?.baseTree ?? (last ? treeOf(last.result_tree) : undefined);
  const paths = [
    ...new Set([
      ...changeSets.flatMap((set) => set.files.flatMap((file) => [file.path, ...(file.oldPath ? [file.oldPath] : [])])),
      ...(existing?.paths ?? []),
    ]),
  ];
  const files =
    goal !== undefined && expected !== undefined
      ? await restoreFiles(session, capture, runId, { expected, goal, paths, force })
      : [];
  const hidden = transcript.messages.slice(start);
  const resultTree = existing?.resultTree ?? (last ? treeOf(last.result_tree) : undefined);
  const state: RevertState = {
    runId,
    runIds: [...newRuns.map((run) => run.runId), ...(existing?.runIds ?? [])],
    atMessage: start,
    epoch: transcript.epoch,
    messages: [...hidden, ...(existing?.messages ?? [])],
    ...(goal !== undefined ? { baseTree: goal } : {}),
    ...(resultTree !== undefined ? { resultTree } : {}),
    paths,
  };
  transcript.messages = transcript.messages.slice(0, start);
  transcript.reverted = state;
  session.emit(undefined, 'session_reverted', {
    run_id: runId,
    run_ids: state.runIds,
    files: files.length,
    hidden_messages: state.messages.length,
  });
  await session.persistence.saveIfAutoSave();
  return {
    run_id: runId,
    reverted_run_ids: state.runIds,
    files,
    messages: state.messages.length,
    ...(goal !== undefined ? { tree: `git-tree:${goal}` } : {}),
  };
}

/** POST .../unrevert: the reverted runs' files back to the last one's result and their messages visible again. */
export async function unrevertRuns(
  session: AgentSession,
  capture: ChangeCapture | undefined,
  force: boolean,
): Promise<RevertResponse> {
  const transcript = session.transcript;
  const state = transcript.reverted;
  if (!state || state.epoch !== transcript.epoch || state.atMessage !== transcript.messages.length)
    throw new CodeError(
      'NOTHING_REVERTED',
      `session ${session.id} has nothing reverted: no revert, an unrevert already made, or a run started after the revert and dropped the reverted messages for good`,
      { sessionId: session.id },
    );
  const files =
    state.baseTree !== undefined && state.resultTree !== undefined
      ? await restoreFiles(session, capture, state.runId, {
          expected: state.baseTree,
          goal: state.resultTree,
          paths: state.paths,
          force,
        })
      : [];
  transcript.messages = [...transcript.messages, ...state.messages];
  transcript.reverted = undefined;
  session.emit(undefined, 'session_unreverted', {
    run_id: state.runId,
    run_ids: state.runIds,
    files: files.length,
    restored_messages: state.messages.length,
  });
  await session.persistence.saveIfAutoSave();
  return {
    run_id: state.runId,
    reverted_run_ids: state.runIds,
    files,
    messages: state.messages.length,
    ...(state.resultTree !== undefined ? { tree: `git-tree:${state.resultTree}` } : {}),
  };
}
