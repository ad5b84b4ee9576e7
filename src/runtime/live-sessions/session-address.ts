import { CodeError } from '../../errors.js';
import { hasScope, type Caller } from '../ports/caller.js';

/** Longest tenant id a `tenantId` query may name (SessionOptions.tenantId's bound). */
const MAX_TENANT_ID = 200;

/**
 * The caller as it addresses a session route's `:id`: session ids are per tenant and resolve in the
 * caller's tenant, unless an admin names another with the `tenantId` query (the caller is then the admin
 * acting in that tenant). A non-admin naming another tenant gets FORBIDDEN, whether or not any such
 * session exists; a malformed value is VALIDATION_ERROR naming `<where>.tenantId`.
 */
export function addressedCaller(caller: Caller, tenantId: unknown, where = 'query'): Caller {
  if (tenantId === undefined) return caller;
  if (typeof tenantId !== 'string' || tenantId.length < 1 || tenantId.length > MAX_TENANT_ID) {
    const message = `${where}.tenantId: must be one tenant id of 1-${MAX_TENANT_ID} characters`;
    throw new CodeError('VALIDATION_ERROR', message, {
      issues: [{ path: `${where}.tenantId`, message: `must be one tenant id of 1-${MAX_TENANT_ID} characters` }],
    });
  }
  if (tenantId === caller.tenantId) return caller;
  if (!hasScope(caller, 'admin'))
    throw new CodeError('FORBIDDEN', `${where}.tenantId: only admin tokens may address another tenant's sessions`, {
      scope: 'admin',
      field: `${where}.tenantId`,
    });
  return { ...caller, tenantId };
}
