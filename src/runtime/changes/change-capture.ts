import type { ChangeRange, ChangeSet } from '../../protocol/change-set.js';
import { sessionIdOf, tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import type { StoredBytesQuota } from '../attachments/counted-attachment-store.js';
import type { ChangeSetStore } from '../ports/change-set-store.js';
import { changeUsageKey } from '../quotas/change-usage-key.js';
import { parseChangedFiles } from './parse-diff-output.js';
import type { CaptureFiles, CaptureTarget, ShadowStores } from './shadow-stores.js';

/** The server's change capture: the shadow stores, where change sets are kept and how their bytes count. */
export interface ChangeCaptureDeps {
  readonly shadows: ShadowStores;
  readonly store: ChangeSetStore;
  /** The tenant's stored bytes (absent: not counted). */
  readonly quota?: StoredBytesQuota;
  /** limits.changeStoreBytes: the bytes one session's change sets may take; past it a patch is not kept. */
  readonly maxStoreBytes: number;
  now(): number;
}

/** The parts of a change set both a run's and a range's share, from a diff's outputs. */
export function diffFields(
  files: CaptureFiles,
): Pick<ChangeSet, 'patch_digest' | 'patch_bytes' | 'patch_base64' | 'truncated' | 'files'> {
  const { outputs, patch } = files;
  const empty = Buffer.alloc(0);
  return {
    patch_digest: patch?.digest ?? 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    patch_bytes: patch?.bytes ?? 0,
    patch_base64: patch?.data?.toString('base64') ?? '',
    truncated: patch !== undefined && patch.data === undefined,
    files: parseChangedFiles(outputs.raw ?? empty, outputs.numstat ?? empty, outputs.sizes ?? empty),
  };
}

/** Change capture for every session of the server (one object, built in context.ts). */
export class ChangeCapture {
  private readonly totals = new Map<SessionKey, number>();

  constructor(readonly deps: ChangeCaptureDeps) {}

  /** The run's stored change set. */
  get(session: SessionKey, runId: string): Promise<ChangeSet | undefined> {
    return this.deps.store.get(session, runId);
  }

  /**
   * Store a change set, counted in the tenant's stored bytes: when it would take the session past
   * limits.changeStoreBytes or the tenant past its quota, it is kept without its patch (`truncated`).
   */
  async put(session: SessionKey, changeSet: ChangeSet): Promise<ChangeSet> {
    const total = this.totals.get(session) ?? (await this.deps.store.bytes(session));
    let kept = changeSet;
    let bytes = Buffer.byteLength(JSON.stringify(kept));
    if (total + bytes > this.deps.maxStoreBytes || !this.hasRoom(session, bytes)) {
      kept = { ...changeSet, patch_base64: '', truncated: true };
      bytes = Buffer.byteLength(JSON.stringify(kept));
    }
    await this.deps.store.put(session, kept);
    this.totals.set(session, total + bytes);
    this.deps.quota?.recordStored(tenantIdOf(session), changeUsageKey(sessionIdOf(session)), total + bytes);
    return kept;
  }

  /** The diff from `from`'s base tree to `to`'s result tree, in this node's shadow store. */
  async range(target: CaptureTarget, session: SessionKey, from: ChangeSet, to: ChangeSet): Promise<ChangeRange> {
    const files = await this.deps.shadows.diff(target, treeOf(from.base_tree), treeOf(to.result_tree));
    return {
      schema: 'a3s.code.agent-change-range.v1',
      run_id: to.run_id,
      from_run_id: from.run_id,
      state: to.state,
      format: 'git_unified_diff_v1',
      encoding: 'base64',
      base_tree: from.base_tree,
      result_tree: to.result_tree,
      ...diffFields(files),
      not_captured: to.not_captured,
      observed_at_ms: this.deps.now(),
    };
  }

  /** Remove what the session holds: its change sets, its shadow store, its count (purge, close for good). */
  async removeSession(session: SessionKey): Promise<void> {
    this.totals.delete(session);
    await this.deps.store.deleteSession(session).catch(() => undefined);
    await this.deps.shadows.remove(tenantIdOf(session), sessionIdOf(session)).catch(() => undefined);
    this.deps.quota?.recordStored(tenantIdOf(session), changeUsageKey(sessionIdOf(session)), 0);
  }

  private hasRoom(session: SessionKey, bytes: number): boolean {
    try {
      this.deps.quota?.assertStoredRoom(tenantIdOf(session), bytes);
      return true;
    } catch {
      return false;
    }
  }
}

function treeOf(tree: string): string {
  return tree.slice('git-tree:'.length);
}
