import { CodeError } from '../../errors.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import { hasScope, type Caller } from '../ports/caller.js';

/**
 * The identity SessionOptions may claim: `tenantId` (the owner tenant) and `principal` (a label every event of
 * the session carries as its origin) of a caller without the `admin` scope must be the token's own, so no
 * tenant opens sessions of another, nor stamps its events with someone else's name. FORBIDDEN naming the
 * field otherwise. Admins (and the anonymous caller of a tokenless loopback server, which holds every scope)
 * may set both.
 */
export function assertOwnIdentity(options: Pick<SessionOptions, 'tenantId' | 'principal'>, caller: Caller): void {
  if (hasScope(caller, 'admin')) return;
  if (options.tenantId !== undefined && options.tenantId !== caller.tenantId) {
    throw new CodeError(
      'FORBIDDEN',
      `tenantId: "${options.tenantId}" is not the caller's tenant "${caller.tenantId}"; only admin tokens may name another tenant (leave tenantId out, or send the token's own)`,
      {
        field: 'tenantId',
        scope: 'admin',
      },
    );
  }
  if (options.principal !== undefined && options.principal !== caller.principal) {
    throw new CodeError(
      'FORBIDDEN',
      `principal: "${options.principal}" is not the caller's principal "${caller.principal}"; only admin tokens may name another principal (leave principal out, or send the token's own)`,
      {
        field: 'principal',
        scope: 'admin',
      },
    );
  }
}
