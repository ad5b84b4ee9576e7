import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { nonGlobalRange } from './outbound-address.js';
import { OutboundUrlError } from './outbound-url-error.js';

/** One resolved address of a host. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (injectable so tests can play a DNS server). */
export type OutboundResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** How an outbound URL is checked. */
export interface OutboundCheckOptions {
  /** Private, loopback and other non-global addresses are allowed (host_direct callers, or config outbound.allow_private_networks). */
  allowPrivate: boolean;
  /** Name resolution (default: the system resolver, `dns.lookup` with every address). */
  resolve?: OutboundResolver;
  /** Longest wait for name resolution before the URL counts as unresolvable (default DEFAULT_RESOLVE_TIMEOUT_MS). */
  resolveTimeoutMs?: number;
}

/** Default bound on one name resolution of checkOutboundUrl. */
export const DEFAULT_RESOLVE_TIMEOUT_MS = 5000;

async function resolveBounded(
  resolver: OutboundResolver,
  hostname: string,
  timeoutMs: number,
): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error('resolution timed out'), { code: `no answer within ${timeoutMs} ms` })),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([resolver(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A URL that passed the check, with the addresses the request must connect to (and no other). */
export interface CheckedOutboundUrl {
  url: URL;
  /** The first checked address: the one a pinned dispatcher connects to first. */
  address: ResolvedAddress;
  /** Every checked address the host resolved to (all passed the check). */
  addresses: ResolvedAddress[];
}

/** The system resolver: every address, in the resolver's order. */
export const systemResolver: OutboundResolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

// RFC 6761: "localhost" and every name under it is loopback, whatever a resolver says.
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

function refuseAddress(url: URL, address: string, hostname: string): OutboundUrlError | undefined {
  const range = nonGlobalRange(address);
  if (range === undefined) return undefined;
  const via = address === hostname ? '' : ` (${hostname} resolves to ${address})`;
  return new OutboundUrlError(
    'private_address',
    `${url.host} is in the ${range} range${via}: the server does not call private, loopback or link-local addresses for callers without the host_direct scope`,
  );
}

/**
 * Check a URL a tenant named before the server calls it: an absolute http(s) URL without `user:password@`,
 * whose host resolves (once) to addresses that are all globally reachable unless `allowPrivate`. WHATWG URL
 * parsing normalises numeric hosts (`2130706433`, `0x7f.1`, `017700000001` are 127.0.0.1; `[::ffff:127.0.0.1]`
 * is `[::ffff:7f00:1]`), IPv6 zone ids do not parse, and `localhost` names are loopback without asking DNS.
 * The answer names the addresses to connect to: connect only there (pinnedDispatcher), never look the name up again.
 * Throws OutboundUrlError.
 */
export async function checkOutboundUrl(
  value: string | URL,
  options: OutboundCheckOptions,
): Promise<CheckedOutboundUrl> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OutboundUrlError('invalid_url', 'not an absolute URL (IPv6 zone ids such as %25eth0 are not accepted)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundUrlError('scheme', `scheme ${url.protocol} is not allowed: use http:// or https://`);
  if (url.username !== '' || url.password !== '')
    throw new OutboundUrlError(
      'credentials',
      'user information (user@ or user:password@) is not allowed in the URL: send credentials in headers',
    );
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (hostname === '') throw new OutboundUrlError('invalid_url', 'the URL has no host');
  const family = isIP(hostname);
  if (family !== 0) {
    const address: ResolvedAddress = { address: hostname, family: family === 6 ? 6 : 4 };
    const refused = options.allowPrivate ? undefined : refuseAddress(url, hostname, hostname);
    if (refused) throw refused;
    return { url, address, addresses: [address] };
  }
  if (!options.allowPrivate && isLocalhostName(hostname)) {
    throw new OutboundUrlError(
      'private_address',
      `${url.host} is a loopback name (localhost): the server does not call private, loopback or link-local addresses for callers without the host_direct scope`,
    );
  }
  let answers: ResolvedAddress[];
  try {
    answers = await resolveBounded(
      options.resolve ?? systemResolver,
      hostname,
      options.resolveTimeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS,
    );
  } catch (error) {
    const code =
      typeof error === 'object' && error !== null && 'code' in error
        ? ` (${String((error as { code: unknown }).code)})`
        : '';
    throw new OutboundUrlError('unresolvable', `${hostname} does not resolve${code}`);
  }
  const addresses = answers.map((entry): ResolvedAddress => {
    const entryFamily = isIP(entry.address);
    // A resolver answer that is not an IP address would make the connection look a name up again.
    if (entryFamily === 0)
      throw new OutboundUrlError(
        'unresolvable',
        `${hostname} resolved to "${entry.address}", which is not an IP address`,
      );
    // Every address must pass, not only the first: a mixed answer is how rebinding attacks start.
    const refused = options.allowPrivate ? undefined : refuseAddress(url, entry.address, hostname);
    if (refused) throw refused;
    return { address: entry.address, family: entryFamily === 6 ? 6 : 4 };
  });
  const first = addresses[0];
  if (first === undefined) throw new OutboundUrlError('unresolvable', `${hostname} resolves to no address`);
  return { url, address: first, addresses };
}
