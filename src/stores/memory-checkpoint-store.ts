import { CodeError } from '../errors.js';
import type { LoopCheckpoint } from '../protocol/loop-checkpoint.js';
import type { CheckpointStore } from './checkpoint-store.js';
import { parseCheckpoint } from './parse-checkpoint.js';
import type { SessionKey } from './session-key.js';

/** CheckpointStore in process memory (one map entry per session key and run); not shared, so no cross-node resume. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly kind = 'memory';
  readonly shared = false;
  private readonly entries = new Map<string, LoopCheckpoint>();
  private closed = false;

  /** Validate the checkpoint and store a deep copy as the run's only checkpoint. */
  async save(session: SessionKey, checkpoint: LoopCheckpoint): Promise<void> {
    this.assertOpen();
    // Validated at call time; the parse already built a fresh tree of every typed field, so later caller
    // mutations never reach the stored checkpoint. Only the untyped report items are still the caller's.
    const parsed = parseCheckpoint(checkpoint, 'the checkpoint being saved');
    const copy =
      parsed.verification_reports.length > 0
        ? { ...parsed, verification_reports: structuredClone(parsed.verification_reports) }
        : parsed;
    this.entries.set(entryKey(session, copy.run_id), copy);
  }

  /** A deep copy of the run's checkpoint, or undefined. */
  async load(session: SessionKey, runId: string): Promise<LoopCheckpoint | undefined> {
    this.assertOpen();
    const entry = this.entries.get(entryKey(session, runId));
    return entry === undefined ? undefined : structuredClone(entry);
  }

  /** Remove the run's checkpoint; no error when absent. */
  async delete(session: SessionKey, runId: string): Promise<void> {
    this.assertOpen();
    this.entries.delete(entryKey(session, runId));
  }

  /** Drop every checkpoint and refuse further use. */
  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
  }

  private assertOpen(): void {
    if (this.closed) throw new CodeError('PERSISTENCE_FAILED', 'the memory checkpoint store is closed');
  }
}

// Keys never contain a space, so `<key> <run id>` names one run of one session.
function entryKey(session: SessionKey, runId: string): string {
  return `${session} ${runId}`;
}
