import { CodeError } from '../../errors.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import { saveSnapshot, type SnapshotSaveDeps } from './session-persistence.js';
import { toSessionSnapshot, type SnapshotSource } from './session-snapshot-codec.js';

/** What a session's save bookkeeping needs from the session. */
export interface SessionSavesDeps extends SnapshotSaveDeps {
  readonly config: ResolvedSessionConfig;
  readonly events: SessionEventLog;
  readonly lifecycle: SessionLifecycle;
  /** The live parts one snapshot generation is made of. */
  source(): Omit<SnapshotSource, 'generation'>;
  /** Report a background save's failure (the agent logs it). */
  reportError(error: unknown): void;
}

/**
 * A session's snapshot and save bookkeeping: its store generation, the session_sequence it was last saved
 * at (so `dirty` knows whether anything happened since), and the autoSave saves.
 */
export class SessionSaves {
  private generationValue: number;
  /** session_sequence at the last saved generation (-1: never saved). */
  private savedAtSequence: number;

  constructor(
    private readonly deps: SessionSavesDeps,
    restored: { readonly generation: number } | undefined,
  ) {
    this.generationValue = restored?.generation ?? 0;
    // A restored session starts as saved: nothing changed since the generation it was read from.
    this.savedAtSequence = restored ? deps.events.lastSequence : -1;
  }

  /** The last generation saved (or read from the store); 0 when never saved. */
  get generation(): number {
    return this.generationValue;
  }

  /** True when this session was ever saved (its store holds a generation). */
  get saved(): boolean {
    return this.generationValue > 0;
  }

  /** True when something happened (any event) since the last saved generation, or it was never saved. */
  get dirty(): boolean {
    return this.deps.events.lastSequence !== this.savedAtSequence;
  }

  /** Save one complete snapshot generation through the store; emits persistence_failed on failure. */
  async save(): Promise<number> {
    const { config } = this.deps;
    if (config.parentSessionId !== null) throw new CodeError('CHILD_SESSION', `session ${config.sessionId} is a child of session ${config.parentSessionId}: its task is saved with the parent`, { parentSessionId: config.parentSessionId });
    this.generationValue += 1;
    const sequence = this.deps.events.lastSequence;
    const { sessionId, sessionKey, store, ownership, emit } = this.deps;
    await saveSnapshot({ sessionId, sessionKey, store, ownership, emit, ...(this.deps.onStored ? { onStored: this.deps.onStored } : {}) }, this.snapshot(this.generationValue));
    this.savedAtSequence = sequence;
    return this.generationValue;
  }

  /** The session as one SessionSnapshotV1 generation. */
  snapshot(generation = this.generationValue): SessionSnapshotV1 {
    return toSessionSnapshot({ generation, ...this.deps.source() });
  }

  /** With autoSave, save now; a failure is reported (persistence_failed, onPersistenceError), not thrown. */
  async saveIfAutoSave(): Promise<void> {
    if (this.deps.config.autoSave) await this.save().catch((error: unknown) => this.deps.reportError(error));
  }

  /** The save after a run ends: autoSave sessions still this node's (not abandoned, closed only for shutdown or passivation). */
  async saveAfterRun(): Promise<void> {
    if (this.deps.config.autoSave && this.deps.lifecycle.savesAfterRun()) await this.save().catch((error: unknown) => this.deps.reportError(error));
  }
}
