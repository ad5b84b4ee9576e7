import { CodeError } from '../../errors.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { SessionStore } from '../../stores/session-store.js';
import type { SessionOwnership } from '../ports/session-ownership.js';
import type { SessionEmit } from './session-emitter.js';

/** What saving a session's snapshot needs. */
export interface SnapshotSaveDeps {
  readonly sessionId: string;
  /** The session's key (tenant and id), whose lease fences the save. */
  readonly sessionKey: SessionKey;
  readonly store: SessionStore;
  readonly ownership: SessionOwnership;
  readonly emit: SessionEmit;
  /** Told the bytes the store now holds for the session (the tenant's stored-bytes quota). */
  onStored?(bytes: number): void;
}

/**
 * Save one complete snapshot generation through the store. A save refused by the lease fence is retried
 * once when the lease could be renewed or safely retaken; a failure emits persistence_failed and throws a CodeError.
 */
export async function saveSnapshot(deps: SnapshotSaveDeps, snapshot: SessionSnapshotV1): Promise<void> {
  const { sessionId, sessionKey, store, ownership } = deps;
  try {
    let bytes: number;
    try {
      bytes = await store.save(snapshot);
    } catch (error) {
      // Refused by the lease fence: retry once if the lease could be renewed or safely retaken.
      if (!(error instanceof CodeError && error.details.reason === 'fenced' && (await ownership.fenced(sessionKey))))
        throw error;
      bytes = await store.save(snapshot);
    }
    deps.onStored?.(bytes);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    deps.emit(undefined, 'persistence_failed', {
      session_id: sessionId,
      operation: 'save',
      error: message,
      code: error instanceof CodeError ? error.code : 'PERSISTENCE_FAILED',
    });
    throw error instanceof CodeError
      ? error
      : new CodeError('PERSISTENCE_FAILED', `saving session ${sessionId} failed`, { sessionId });
  }
}
