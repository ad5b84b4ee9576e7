import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent } from 'undici';
import type { CheckedOutboundUrl, ResolvedAddress } from './check-outbound-url.js';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that answers only the checked addresses of one host, never asking DNS. */
export function pinnedLookup(
  hostname: string,
  addresses: readonly ResolvedAddress[],
): (host: string, options: LookupOptions, callback: LookupCallback) => void {
  const expected = hostname.toLowerCase();
  return (host, options, callback) => {
    if (host.toLowerCase() !== expected) {
      const error: NodeJS.ErrnoException = new Error(
        `connection to ${host} refused: this connection is pinned to the checked address of ${hostname}`,
      );
      error.code = 'ENOTFOUND';
      callback(error, '');
      return;
    }
    const wanted =
      options.family === 4 || options.family === 6
        ? addresses.filter((entry) => entry.family === options.family)
        : [...addresses];
    if (options.all) {
      callback(
        null,
        wanted.map((entry) => ({ address: entry.address, family: entry.family })),
      );
      return;
    }
    const first = wanted[0];
    if (first === undefined) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} has no checked IPv${String(options.family)} address`);
      error.code = 'ENOTFOUND';
      callback(error, '');
      return;
    }
    callback(null, first.address, first.family);
  };
}

/**
 * An undici dispatcher whose connections go to the checked addresses of one URL's host and nowhere else:
 * name resolution is answered from the check (no second DNS lookup, so DNS rebinding between the check
 * and the connection cannot redirect it), while the Host header and TLS server name stay the URL's host.
 * A request to any other host through it fails. Close it when the request is done.
 */
export function pinnedDispatcher(checked: CheckedOutboundUrl): Agent {
  const hostname = checked.url.hostname.startsWith('[') ? checked.url.hostname.slice(1, -1) : checked.url.hostname;
  return new Agent({ connect: { lookup: pinnedLookup(hostname, checked.addresses) } });
}
