import { CodeError } from '../../errors.js';
import { sessionIdOf, type SessionKey } from '../../stores/session-key.js';
import type { OwnershipResult, SessionOwnership } from '../ports/session-ownership.js';

/** SESSION_OWNED_ELSEWHERE (421) naming the node that holds the session's lease and its address when known. */
export function ownedElsewhere(session: SessionKey, owner: Extract<OwnershipResult, { ok: false }>): CodeError {
  const sessionId = sessionIdOf(session);
  return new CodeError(
    'SESSION_OWNED_ELSEWHERE',
    `session ${sessionId} is owned by node ${owner.ownerNodeId}${owner.ownerUrl ? ` at ${owner.ownerUrl}` : ''}; send the request there`,
    { sessionId, ownerNodeId: owner.ownerNodeId, ownerUrl: owner.ownerUrl ?? null },
  );
}

/** Take the session's lease; SESSION_OWNED_ELSEWHERE (421, with the owner's URL) when another live node holds it. */
export async function takeLease(ownership: SessionOwnership, session: SessionKey): Promise<void> {
  const result = await ownership.acquire(session);
  if (!result.ok) throw ownedElsewhere(session, result);
}

/** Run `build`; when it fails, release the session's lease (taken for it) before the error goes on. */
export async function releasingLeaseOnFailure<T>(
  ownership: SessionOwnership,
  session: SessionKey,
  build: () => Promise<T>,
): Promise<T> {
  try {
    return await build();
  } catch (error) {
    await ownership.release(session).catch(() => undefined);
    throw error;
  }
}
