import type { Scope } from '../../config/api-token.js';

/** The authenticated caller of a request: who, for which tenant, with which scopes. */
export interface Caller {
  readonly principal: string;
  readonly tenantId: string;
  readonly scopes: ReadonlySet<Scope>;
}

/** True when the caller holds the scope (admin implies every scope). */
export function hasScope(caller: Caller, scope: Scope): boolean {
  return caller.scopes.has(scope) || caller.scopes.has('admin');
}
