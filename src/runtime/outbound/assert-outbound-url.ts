import type { CodeConfig } from '../../config/code-config.js';
import { CodeError } from '../../errors.js';
import { hasScope, type Caller } from '../ports/caller.js';
import { checkOutboundUrl, type OutboundResolver } from './check-outbound-url.js';
import { OutboundUrlError } from './outbound-url-error.js';

/** True when the caller may name private, loopback or link-local URLs: it has host_direct, or config outbound.allow_private_networks is on. */
export function privateOutboundAllowed(caller: Caller, config: Pick<CodeConfig, 'outbound'>): boolean {
  return hasScope(caller, 'host_direct') || config.outbound.allowPrivateNetworks;
}

/**
 * Check a URL a caller registers (a webhook the server will call later) and answer a 400 VALIDATION_ERROR
 * naming `field` when it is refused: bad scheme, credentials in it,
 * or an address in a private, loopback, link-local or other non-global range for a caller without
 * allowPrivate. A name that does not resolve now is accepted: DNS may be down or not set up yet, and the
 * same check runs again at every call (a failure there fails the hook or budget check closed).
 */
export async function assertOutboundUrl(
  url: string,
  field: string,
  allowPrivate: boolean,
  resolve?: OutboundResolver,
): Promise<void> {
  try {
    await checkOutboundUrl(url, { allowPrivate, ...(resolve ? { resolve } : {}) });
  } catch (error) {
    if (!(error instanceof OutboundUrlError)) throw error;
    if (error.refusal === 'unresolvable') return;
    const hint =
      error.refusal === 'private_address'
        ? ' (a host_direct token, or config outbound.allow_private_networks = true, may name private addresses)'
        : '';
    throw new CodeError('VALIDATION_ERROR', `${field}: ${error.message}${hint}`, {
      field,
      refusal: error.refusal,
      issues: [{ path: field, message: error.message }],
    });
  }
}
