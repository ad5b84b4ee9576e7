import { CodeError } from '../../errors.js';
import { sessionIdOf, tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import { hasScope, type Caller } from '../ports/caller.js';

/** How many closed session keys are remembered (oldest forgotten first). */
const MAX_CLOSED_IDS = 10_000;

/**
 * Recently closed sessions (by key: tenant and id), so requests for them answer SESSION_CLOSED rather
 * than SESSION_NOT_FOUND; only the owner's tenant (or an admin) learns that a session was closed.
 */
export class ClosedSessions {
  private readonly keys = new Set<SessionKey>();

  /** Remember that the session closed (here, or as stored closed). */
  remember(key: SessionKey): void {
    // Re-inserted so a key closed again counts as the newest.
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > MAX_CLOSED_IDS) {
      const oldest = this.keys.values().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
  }

  /** Forget the key (the session was reopened). */
  forget(key: SessionKey): void {
    this.keys.delete(key);
  }

  /** True when the key is remembered as closed, whoever asks. */
  has(key: SessionKey): boolean {
    return this.keys.has(key);
  }

  /** True when the session was closed and the caller may know it (its tenant's session, or an admin). */
  visibleTo(key: SessionKey, caller: Caller): boolean {
    return this.keys.has(key) && (tenantIdOf(key) === caller.tenantId || hasScope(caller, 'admin'));
  }

  /** SESSION_CLOSED when the caller may know the session was closed. */
  assertNotClosed(key: SessionKey, caller: Caller): void {
    const id = sessionIdOf(key);
    if (this.visibleTo(key, caller))
      throw new CodeError('SESSION_CLOSED', `session ${id} is closed; create it with resume: true to reopen it`, {
        sessionId: id,
      });
  }
}
