import type { ChangeSet } from '../protocol/change-set.js';
import type { ChangeSetStore } from '../runtime/ports/change-set-store.js';
import type { SessionKey } from './session-key.js';

/** ChangeSetStore in this process (storage_backend memory): gone with the process. */
export class MemoryChangeSetStore implements ChangeSetStore {
  readonly kind = 'memory';
  private readonly sessions = new Map<SessionKey, Map<string, string>>();

  put(session: SessionKey, changeSet: ChangeSet): Promise<void> {
    let runs = this.sessions.get(session);
    if (!runs) this.sessions.set(session, (runs = new Map()));
    runs.set(changeSet.run_id, JSON.stringify(changeSet));
    return Promise.resolve();
  }

  get(session: SessionKey, runId: string): Promise<ChangeSet | undefined> {
    const text = this.sessions.get(session)?.get(runId);
    return Promise.resolve(text === undefined ? undefined : (JSON.parse(text) as ChangeSet));
  }

  bytes(session: SessionKey): Promise<number> {
    let total = 0;
    for (const text of this.sessions.get(session)?.values() ?? []) total += Buffer.byteLength(text);
    return Promise.resolve(total);
  }

  deleteSession(session: SessionKey): Promise<void> {
    this.sessions.delete(session);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
