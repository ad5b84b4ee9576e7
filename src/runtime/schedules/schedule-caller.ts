import type { Scope } from '../../config/api-token.js';
import type { ScheduleRecord } from '../../protocol/schedules.js';
import type { Caller } from '../ports/caller.js';

/** What the configured tokens grant a principal in a tenant now (the server's authenticator). */
export interface TokenGrants {
  /** The scopes the tokens of this principal and tenant grant together; undefined when none is configured. */
  grantsOf(principal: string, tenantId: string): ReadonlySet<Scope> | undefined;
}

const SCOPES: readonly Scope[] = ['sessions', 'host_direct', 'admin'];

function holds(scopes: ReadonlySet<Scope>, scope: Scope): boolean {
  return scopes.has(scope) || scopes.has('admin');
}

/** Who a tick runs as, or why it cannot run (then the schedule is paused with that reason). */
export type ScheduleCallerResult = { caller: Caller } | { refused: { code: string; message: string } };

/**
 * A tick's caller: the schedule's owner with the scopes both its creation stored and its tokens grant now (an
 * admin token stands for every scope on either side). No token of the owner now, or none granting `sessions`, refuses.
 */
export function scheduleCaller(owner: ScheduleRecord['owner'], grants: TokenGrants): ScheduleCallerResult {
  const now = grants.grantsOf(owner.principal, owner.tenantId);
  if (now === undefined)
    return {
      refused: {
        code: 'TOKEN_REVOKED',
        message: `no configured token of principal "${owner.principal}" in tenant "${owner.tenantId}" remains: the schedule runs as its creator`,
      },
    };
  const stored = new Set(owner.scopes);
  const scopes = new Set(SCOPES.filter((scope) => holds(stored, scope) && holds(now, scope)));
  if (!holds(scopes, 'sessions'))
    return {
      refused: {
        code: 'SCOPE_REVOKED',
        message: `the tokens of principal "${owner.principal}" no longer grant the "sessions" scope a run needs`,
      },
    };
  return { caller: { principal: owner.principal, tenantId: owner.tenantId, scopes } };
}
