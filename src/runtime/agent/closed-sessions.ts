import { CodeError } from '../../errors.js';
import { hasScope, type Caller } from '../ports/caller.js';

/** How many closed session ids are remembered (oldest forgotten first). */
const MAX_CLOSED_IDS = 10_000;

/**
 * Recently closed session ids and their owner tenants, so requests for them answer SESSION_CLOSED
 * rather than SESSION_NOT_FOUND; only the owner's tenant (or an admin) learns that a session was closed.
 */
export class ClosedSessions {
  private readonly owners = new Map<string, string>();

  /** Remember that the session closed (here, or as stored closed). */
  remember(id: string, ownerTenantId: string): void {
    this.owners.set(id, ownerTenantId);
    if (this.owners.size > MAX_CLOSED_IDS) {
      const oldest = this.owners.keys().next().value;
      if (oldest !== undefined) this.owners.delete(oldest);
    }
  }

  /** Forget the id (the session was reopened). */
  forget(id: string): void {
    this.owners.delete(id);
  }

  /** True when the id is remembered as closed, whoever asks. */
  has(id: string): boolean {
    return this.owners.has(id);
  }

  /** True when `id` was closed and the caller may know it (its tenant's session, or an admin). */
  visibleTo(id: string, caller: Caller): boolean {
    const owner = this.owners.get(id);
    return owner !== undefined && (owner === caller.tenantId || hasScope(caller, 'admin'));
  }

  /** SESSION_CLOSED when the caller may know the session was closed. */
  assertNotClosed(id: string, caller: Caller): void {
    if (this.visibleTo(id, caller)) throw new CodeError('SESSION_CLOSED', `session ${id} is closed; create it with resume: true to reopen it`, { sessionId: id });
  }
}
