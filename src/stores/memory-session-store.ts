import { CodeError } from '../errors.js';
import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { KeyedLock } from './keyed-lock.js';
import { parseSnapshot } from './parse-snapshot.js';
import { sessionKeyOf, tenantIdOf, type SessionKey } from './session-key.js';
import type { SessionStore } from './session-store.js';

/** SessionStore in process memory: one map entry per session key, replaced whole under a per-session lock. */
export class MemorySessionStore implements SessionStore {
  readonly kind = 'memory';
  private readonly entries = new Map<SessionKey, SessionSnapshotV1>();
  private readonly lock = new KeyedLock();
  private closed = false;

  /** Store a deep copy of the snapshot as the session's only generation, after all earlier saves. */
  async save(snapshot: SessionSnapshotV1): Promise<number> {
    this.assertOpen();
    // Validate and copy at call time so later caller mutations never leak into the stored generation.
    const copy = structuredClone(parseSnapshot(snapshot, `snapshot of session ${describeId(snapshot)} being saved`));
    const key = sessionKeyOf(copy);
    await this.lock.run(key, () => {
      this.entries.set(key, copy);
    });
    // Process memory, not storage: the stored-bytes quota counts the file and Redis stores.
    return 0;
  }

  /** A deep copy of the session's latest generation, or undefined. */
  async load(key: SessionKey): Promise<SessionSnapshotV1 | undefined> {
    this.assertOpen();
    const entry = this.entries.get(key);
    return entry === undefined ? undefined : structuredClone(entry);
  }

  /** Remove the session's entry, after any save already queued for it. */
  async delete(key: SessionKey): Promise<void> {
    this.assertOpen();
    await this.lock.run(key, () => {
      this.entries.delete(key);
    });
  }

  /** Keys of the stored sessions (of one tenant when given), sorted. */
  async list(tenantId?: string): Promise<SessionKey[]> {
    this.assertOpen();
    return [...this.entries.keys()].filter((key) => tenantId === undefined || tenantIdOf(key) === tenantId).sort();
  }

  /** Memory is always reachable while the store is open. */
  async ping(): Promise<boolean> {
    return !this.closed;
  }

  /** Wait for queued saves, then refuse further use. */
  async close(): Promise<void> {
    this.closed = true;
    await this.lock.drain();
  }

  private assertOpen(): void {
    if (this.closed) throw new CodeError('PERSISTENCE_FAILED', 'the memory session store is closed');
  }
}

function describeId(snapshot: unknown): string {
  const session =
    typeof snapshot === 'object' && snapshot !== null ? (snapshot as { session?: unknown }).session : undefined;
  const id = typeof session === 'object' && session !== null ? (session as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? JSON.stringify(id) : '(unknown id)';
}
