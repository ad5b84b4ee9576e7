import { BlockList, isIP } from 'node:net';

interface Range {
  readonly prefix: string;
  readonly bits: number;
  readonly name: string;
}

// IPv4 ranges that are not globally reachable (IANA special-purpose registry, RFC 6890 and successors).
const V4_RANGES: readonly Range[] = [
  { prefix: '0.0.0.0', bits: 8, name: '"this network" 0.0.0.0/8 (unspecified)' },
  { prefix: '10.0.0.0', bits: 8, name: 'private 10.0.0.0/8' },
  { prefix: '100.64.0.0', bits: 10, name: 'carrier-grade NAT 100.64.0.0/10' },
  { prefix: '127.0.0.0', bits: 8, name: 'loopback 127.0.0.0/8' },
  { prefix: '169.254.0.0', bits: 16, name: 'link-local 169.254.0.0/16 (cloud metadata endpoints included)' },
  { prefix: '172.16.0.0', bits: 12, name: 'private 172.16.0.0/12' },
  { prefix: '192.0.0.0', bits: 24, name: 'IETF protocol assignments 192.0.0.0/24' },
  { prefix: '192.0.2.0', bits: 24, name: 'documentation 192.0.2.0/24' },
  { prefix: '192.88.99.0', bits: 24, name: '6to4 relay anycast 192.88.99.0/24' },
  { prefix: '192.168.0.0', bits: 16, name: 'private 192.168.0.0/16' },
  { prefix: '198.18.0.0', bits: 15, name: 'benchmarking 198.18.0.0/15' },
  { prefix: '198.51.100.0', bits: 24, name: 'documentation 198.51.100.0/24' },
  { prefix: '203.0.113.0', bits: 24, name: 'documentation 203.0.113.0/24' },
  { prefix: '224.0.0.0', bits: 4, name: 'multicast 224.0.0.0/4' },
  { prefix: '240.0.0.0', bits: 4, name: 'reserved 240.0.0.0/4 (broadcast included)' },
];

// IPv6 ranges inside the global unicast block 2000::/3 that are still not globally reachable.
const V6_RANGES: readonly Range[] = [
  { prefix: '64:ff9b:1::', bits: 48, name: 'local-use NAT64 64:ff9b:1::/48' },
  { prefix: '2001::', bits: 23, name: 'IETF protocol assignments 2001::/23 (Teredo included)' },
  { prefix: '2001:db8::', bits: 32, name: 'documentation 2001:db8::/32' },
  { prefix: '2002::', bits: 16, name: '6to4 2002::/16' },
  { prefix: '3fff::', bits: 20, name: 'documentation 3fff::/20' },
  { prefix: '5f00::', bits: 16, name: 'SRv6 SIDs 5f00::/16' },
];

// IPv6 ranges outside 2000::/3 with their own names in refusals (anything else outside 2000::/3 is refused as non-global).
const V6_NAMED_OUTSIDE_GLOBAL: readonly Range[] = [
  { prefix: '::', bits: 128, name: 'unspecified ::' },
  { prefix: '::1', bits: 128, name: 'loopback ::1' },
  { prefix: '::', bits: 96, name: 'IPv4-compatible ::/96 (deprecated)' },
  { prefix: '100::', bits: 64, name: 'discard-only 100::/64' },
  { prefix: 'fc00::', bits: 7, name: 'unique local fc00::/7' },
  { prefix: 'fe80::', bits: 10, name: 'link-local fe80::/10' },
  { prefix: 'fec0::', bits: 10, name: 'site-local fec0::/10 (deprecated)' },
  { prefix: 'ff00::', bits: 8, name: 'multicast ff00::/8' },
];

function blockListOf(ranges: readonly Range[], type: 'ipv4' | 'ipv6'): Array<{ list: BlockList; name: string }> {
  return ranges.map((range) => {
    const list = new BlockList();
    list.addSubnet(range.prefix, range.bits, type);
    return { list, name: range.name };
  });
}

// Node's BlockList matches IPv4 rules against IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) as well, so the
// IPv4 rules cover the mapped forms; NAT64 (64:ff9b::/96) embeds an IPv4 address too and gets its own rules.
const V4_LISTS = blockListOf(V4_RANGES, 'ipv4');
const NAT64_LISTS = blockListOf(
  V4_RANGES.map((range) => ({
    prefix: `64:ff9b::${range.prefix}`,
    bits: 96 + range.bits,
    name: `NAT64 of ${range.name}`,
  })),
  'ipv6',
);
const V6_LISTS = blockListOf(V6_RANGES, 'ipv6');
const V6_NAMED_LISTS = blockListOf(V6_NAMED_OUTSIDE_GLOBAL, 'ipv6');

// Where a globally reachable IPv6 address may lie: global unicast, and the two forms embedding an IPv4 address.
const V6_GLOBAL = new BlockList();
V6_GLOBAL.addSubnet('2000::', 3, 'ipv6');
V6_GLOBAL.addSubnet('::ffff:0.0.0.0', 96, 'ipv6');
V6_GLOBAL.addSubnet('64:ff9b::', 96, 'ipv6');

/**
 * The non-global range an IP address lies in (a readable name such as "loopback 127.0.0.0/8"), or
 * undefined when the address is globally reachable. Loopback, private, carrier-grade NAT, link-local
 * (metadata endpoints such as 169.254.169.254), multicast, unspecified, documentation, benchmarking and
 * reserved ranges are refused, in IPv4, IPv4-mapped and NAT64 IPv6 forms; an IPv6 address outside
 * 2000::/3 is never global. A string that is not an IP address is reported as such.
 */
export function nonGlobalRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const entry of V4_LISTS) if (entry.list.check(address, type)) return entry.name;
  if (family === 4) return undefined;
  for (const entry of NAT64_LISTS) if (entry.list.check(address, 'ipv6')) return entry.name;
  for (const entry of V6_LISTS) if (entry.list.check(address, 'ipv6')) return entry.name;
  if (V6_GLOBAL.check(address, 'ipv6')) return undefined;
  for (const entry of V6_NAMED_LISTS) if (entry.list.check(address, 'ipv6')) return entry.name;
  return 'non-global IPv6 (outside 2000::/3)';
}

/** True when an IP address is globally reachable (see nonGlobalRange for the refused ranges). */
export function isGlobalAddress(address: string): boolean {
  return nonGlobalRange(address) === undefined;
}
