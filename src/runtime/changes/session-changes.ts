import type { ChangeSet } from '../../protocol/change-set.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { ChangeCapture } from './change-capture.js';
import { diffFields } from './change-capture.js';
import { parseNotCaptured } from './parse-diff-output.js';
import type { RevertedFile } from '../../protocol/revert.js';
import { restoreTree, type TreeRestore } from './restore-tree.js';
import { CaptureError } from './capture-error.js';
import type { CaptureTarget } from './shadow-stores.js';

/** Why a run has no change set (NO_CHANGE_SET's `details.reason`). */
export type NoChangeSetReason = 'no_mutating_call' | 'commands_refused' | 'too_many_files' | 'capture_failed';

/** How a run without a change set came to have none, kept for the runs this node ran. */
export interface NoChangeSet {
  readonly reason: NoChangeSetReason;
  readonly message: string;
}

/** What a finished capture tells the run: the event to emit when files changed. */
export interface CapturedRun {
  readonly changeSet: ChangeSet;
  /**
   * Changed paths whose last change was outside every one of the run's calls that could change files (someone else's
   * edit, meanwhile): a rollback does not overwrite them (docs/runs.md#rollback).
   */
  readonly foreign: readonly string[];
}

/**
 * How far a file's status-change time may lie outside a call's span and still be the call's: the kernel stamps files
 * from a coarse clock (a tick behind the wall clock the spans are read from).
 */
const SPAN_SLACK_MS = 25;

/** The wall-clock spans of one run's calls that could change files (`end` undefined: still running). */
interface Span {
  readonly start: number;
  end?: number;
}

/** The runs whose "why not" this node remembers (oldest forgotten first). */
const MAX_REMEMBERED = 200;

/**
 * One session's change capture: a run is opened when it starts (costs nothing), its base tree is captured before
 * its first call that is not read-only (`beforeMutation`, awaited by the tool invoker), and at its end
 * (`finishRun`, before agent_end) the result tree and the diff are captured and the change set stored. A run with
 * only read-only calls never starts a capture.
 */
export class SessionChanges {
  // Created on first use: an idle session pays for none of them.
  private bases: Map<string, Promise<string | undefined>> | undefined;
  private open: Set<string> | undefined;
  private missing: Map<string, NoChangeSet> | undefined;
  private spans: Map<string, Span[]> | undefined;

  constructor(
    private readonly capture: ChangeCapture,
    private readonly key: SessionKey,
    readonly target: CaptureTarget,
  ) {}

  /** The run started: its mutating calls capture its base first. */
  openRun(runId: string): void {
    (this.open ??= new Set()).add(runId);
  }

  /** Before a call that may change files: the run's base tree, captured once (a failure is remembered, never thrown). */
  async beforeMutation(runId: string): Promise<void> {
    if (!this.open?.has(runId)) return;
    this.bases ??= new Map();
    let base = this.bases.get(runId);
    if (!base) {
      base = this.capture.deps.shadows.capture(this.target).then(
        (captured) => captured.tree,
        (error: unknown) => {
          this.remember(runId, error);
          return undefined;
        },
      );
      this.bases.set(runId, base);
    }
    await base;
    // The call runs from here until afterMutation: the files it changes are the run's.
    let spans = this.spans?.get(runId);
    if (!spans) (this.spans ??= new Map()).set(runId, (spans = []));
    spans.push({ start: wallClock() });
  }

  /** A call beforeMutation let through has ended (done, failed or aborted). */
  afterMutation(runId: string): void {
    const open = this.spans?.get(runId)?.find((span) => span.end === undefined);
    if (open) open.end = wallClock();
  }

  /** The run's last round is over: capture its result and store the change set (undefined: none was made). */
  async finishRun(runId: string, state: string): Promise<CapturedRun | undefined> {
    this.open?.delete(runId);
    const base = this.bases?.get(runId);
    this.bases?.delete(runId);
    const spans = this.spans?.get(runId) ?? [];
    this.spans?.delete(runId);
    // A call still running when the run ends (aborted by a cancel) may have written until now.
    const ended = wallClock();
    for (const span of spans) span.end ??= ended;
    if (!base) {
      this.forget(runId, { reason: 'no_mutating_call', message: `run ${runId} made no call that could change files` });
      return undefined;
    }
    const baseTree = await base;
    if (baseTree === undefined) return undefined;
    try {
      const { tree, files } = await this.capture.deps.shadows.capture(this.target, baseTree);
      const empty = Buffer.alloc(0);
      const changeSet: ChangeSet = {
        schema: 'a3s.code.agent-change-set.v1',
        run_id: runId,
        state,
        format: 'git_unified_diff_v1',
        encoding: 'base64',
        base_tree: `git-tree:${baseTree}`,
        result_tree: `git-tree:${tree}`,
        ...diffFields(files),
        not_captured: parseNotCaptured(files.outputs.excluded ?? empty, files.outputs.big ?? empty),
        observed_at_ms: this.capture.deps.now(),
      };
      const foreign = foreignPaths(changeSet, parseCtimes(files.outputs.ctimes ?? empty), spans);
      return { changeSet: await this.capture.put(this.key, changeSet), foreign };
    } catch (error) {
      this.remember(runId, error);
      return undefined;
    }
  }

  /** Make `restore.paths` of the workspace match a tree (restoreTree over this session's store). */
  restore(restore: TreeRestore): Promise<RevertedFile[]> {
    return restoreTree(this.capture.deps.shadows, this.target, restore);
  }

  /** Remove the session's shadow store (closed by its client); its stored change sets stay until purge. */
  removeShadow(): Promise<void> {
    return this.capture.deps.shadows.remove(this.target.tenantId, this.target.sessionId);
  }

  /** Why the run has no change set, when this node ran it. */
  whyNone(runId: string): NoChangeSet | undefined {
    return this.missing?.get(runId);
  }

  private remember(runId: string, error: unknown): void {
    const reason: NoChangeSetReason =
      error instanceof CaptureError
        ? error.reason === 'commands_refused' || error.reason === 'too_many_files'
          ? error.reason
          : 'capture_failed'
        : 'capture_failed';
    this.forget(runId, { reason, message: error instanceof Error ? error.message : String(error) });
  }

  private forget(runId: string, why: NoChangeSet): void {
    this.missing ??= new Map();
    this.missing.set(runId, why);
    if (this.missing.size > MAX_REMEMBERED) {
      const oldest = this.missing.keys().next().value;
      if (oldest !== undefined) this.missing.delete(oldest);
    }
  }
}

/**
 * The wall clock, in ms, that file status-change times are compared with (never a test's or the host env's clock:
 * the kernel stamps files with the real time).
 */
function wallClock(): number {
  return Date.now();
}

/** The capture's `ctimes` output: path -> status-change time in ms. */
function parseCtimes(raw: Buffer): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of raw.toString('utf8').split('\0')) {
    const space = entry.indexOf(' ');
    if (space <= 0) continue;
    const seconds = Number(entry.slice(0, space));
    if (Number.isFinite(seconds)) out.set(entry.slice(space + 1), seconds * 1000);
  }
  return out;
}

/**
 * The changed paths (both names of a rename) whose last change lies outside every span: a path's own status-change
 * time, or for a deleted path its nearest directory's (a deletion changes its directory). A path with no time at all
 * counts as foreign, never as the run's.
 */
function foreignPaths(changeSet: ChangeSet, ctimes: Map<string, number>, spans: readonly Span[]): string[] {
  const inSpan = (ms: number) =>
    spans.some((span) => ms >= span.start - SPAN_SLACK_MS && ms <= (span.end ?? span.start) + SPAN_SLACK_MS);
  const timeOf = (path: string): number | undefined => {
    for (let at = path; ;) {
      const found = ctimes.get(at);
      if (found !== undefined) return found;
      if (at === '.') return undefined;
      const slash = at.lastIndexOf('/');
      at = slash < 0 ? '.' : at.slice(0, slash);
    }
  };
  const paths = new Set(changeSet.files.flatMap((file) => [file.path, ...(file.oldPath ? [file.oldPath] : [])]));
  return [...paths].filter((path) => {
    const ms = timeOf(path);
    return ms === undefined || !inSpan(ms);
  });
}
