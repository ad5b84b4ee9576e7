import { CodeError } from '../errors.js';
import type { SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { parseSnapshot } from './parse-snapshot.js';
import type { SessionStore } from './session-store.js';

/** SessionStore in process memory: one map entry per session, replaced whole under a per-session lock. */
export class MemorySessionStore implements SessionStore {
  readonly kind = 'memory';
  private readonly entries = new Map<string, SessionSnapshotV1>();
  // Tail of each session's promise chain; removed when the last queued operation settles.
  private readonly locks = new Map<string, Promise<void>>();
  private closed = false;

  /** Store a deep copy of the snapshot as the session's only generation, after all earlier saves. */
  async save(snapshot: SessionSnapshotV1): Promise<void> {
    this.assertOpen();
    // Validate and copy at call time so later caller mutations never leak into the stored generation.
    const copy = structuredClone(parseSnapshot(snapshot, `snapshot of session ${describeId(snapshot)} being saved`));
    await this.withLock(copy.session.id, () => {
      this.entries.set(copy.session.id, copy);
    });
  }

  /** A deep copy of the session's latest generation, or undefined. */
  async load(sessionId: string): Promise<SessionSnapshotV1 | undefined> {
    this.assertOpen();
    const entry = this.entries.get(sessionId);
    return entry === undefined ? undefined : structuredClone(entry);
  }

  /** Remove the session's entry, after any save already queued for it. */
  async delete(sessionId: string): Promise<void> {
    this.assertOpen();
    await this.withLock(sessionId, () => {
      this.entries.delete(sessionId);
    });
  }

  /** Ids of every stored session. */
  async list(): Promise<string[]> {
    this.assertOpen();
    return [...this.entries.keys()];
  }

  /** Memory is always reachable while the store is open. */
  async ping(): Promise<boolean> {
    return !this.closed;
  }

  /** Wait for queued saves, then refuse further use. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.locks.values()]);
  }

  private assertOpen(): void {
    if (this.closed) throw new CodeError('PERSISTENCE_FAILED', 'the memory session store is closed');
  }

  private async withLock(sessionId: string, operation: () => void | Promise<void>): Promise<void> {
    const previous = this.locks.get(sessionId) ?? Promise.resolve();
    const current = previous.then(operation);
    // The chain continues past a failed operation; the failure still reaches this caller.
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(sessionId, tail);
    try {
      await current;
    } finally {
      if (this.locks.get(sessionId) === tail) this.locks.delete(sessionId);
    }
  }
}

function describeId(snapshot: unknown): string {
  const session = typeof snapshot === 'object' && snapshot !== null ? (snapshot as { session?: unknown }).session : undefined;
  const id = typeof session === 'object' && session !== null ? (session as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? JSON.stringify(id) : '(unknown id)';
}
