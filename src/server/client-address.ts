import { BlockList, isIP } from 'node:net';
import type { CodeConfig } from '../config/code-config.js';

// The names proxy-addr (Fastify's trustProxy) accepts, as ranges.
const NAMED_RANGES: Record<string, readonly string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** A socket's remote address without the IPv4-mapped IPv6 prefix (`::ffff:10.0.0.1` -> `10.0.0.1`). */
export function plainAddress(address: string | undefined): string {
  if (address === undefined) return '';
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** True for a loopback client address (127.0.0.0/8, ::1, and their IPv4-mapped forms). */
export function isLoopbackAddress(address: string | undefined): boolean {
  const plain = plainAddress(address);
  return plain === '::1' || (isIP(plain) === 4 && plain.startsWith('127.'));
}

function addEntry(list: BlockList, entry: string): void {
  for (const item of NAMED_RANGES[entry] ?? [entry]) {
    const [address = '', bits] = item.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (isIP(address) === 0) throw new Error(`trust_proxy: "${entry}" is not an IP address, a CIDR or a known name`);
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
}

/** Decides which TCP peers are trusted proxies (config `trust_proxy`), the same way Fastify's trustProxy does. */
export class TrustedProxies {
  private readonly all: boolean;
  private readonly list = new BlockList();
  private readonly any: boolean;

  constructor(trustProxy: CodeConfig['trustProxy']) {
    this.all = trustProxy === true;
    const entries = Array.isArray(trustProxy) ? trustProxy : [];
    for (const entry of entries) addEntry(this.list, entry);
    this.any = this.all || entries.length > 0;
  }

  /** True when some peer may be a proxy (trust_proxy is set). */
  get enabled(): boolean {
    return this.any;
  }

  /** True when X-Forwarded-For from this TCP peer is believed. */
  trusts(peer: string | undefined): boolean {
    if (this.all) return true;
    if (!this.any) return false;
    const plain = plainAddress(peer);
    const family = isIP(plain);
    if (family === 0) return false;
    return this.list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/** Requests another node forwarded: the client address its valid A3S-Forwarded signature vouches for. */
const forwardedClients = new WeakMap<object, string>();

/** Remember the signed client address of a forwarded request (only after its A3S-Forwarded verified). */
export function recordForwardedClient(request: object, address: string): void {
  forwardedClients.set(request, address);
}

/**
 * The address of the client a request is from, for limits and logs: the signed client address of a
 * forwarded request (never an unsigned header), else `ip` (the TCP peer, or X-Forwarded-For's client behind a
 * trusted proxy).
 */
export function clientAddressOf(request: { readonly ip: string }): string {
  return forwardedClients.get(request) ?? request.ip;
}
