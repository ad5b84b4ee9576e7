import { describe, expect, it } from 'vitest';
import { isGlobalAddress, nonGlobalRange } from '../../src/runtime/outbound/outbound-address.js';

// Addresses the server must never call for a tenant, with a word the refusal names.
const REFUSED: Array<[string, RegExp]> = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /this network/],
  ['10.0.0.1', /private 10/],
  ['172.16.0.1', /private 172\.16/],
  ['172.31.255.255', /private 172\.16/],
  ['192.168.1.1', /private 192\.168/],
  ['100.64.0.1', /carrier-grade NAT/],
  ['100.127.255.255', /carrier-grade NAT/],
  ['169.254.169.254', /link-local.*metadata/],
  ['169.254.0.1', /link-local/],
  ['192.0.0.170', /IETF/],
  ['192.0.2.1', /documentation/],
  ['198.18.0.1', /benchmarking/],
  ['198.51.100.7', /documentation/],
  ['203.0.113.9', /documentation/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['240.0.0.1', /reserved/],
  ['255.255.255.255', /reserved/],
  ['::', /unspecified/],
  ['::1', /loopback ::1/],
  ['::ffff:127.0.0.1', /loopback 127/],
  ['::ffff:7f00:1', /loopback 127/],
  ['::ffff:169.254.169.254', /link-local/],
  ['::ffff:a00:1', /private 10/],
  ['::ffff:0:0', /unspecified/],
  ['::127.0.0.1', /IPv4-compatible/],
  ['64:ff9b::7f00:1', /NAT64 of loopback/],
  ['64:ff9b::a9fe:a9fe', /NAT64 of link-local/],
  ['64:ff9b:1::1', /local-use NAT64/],
  ['fc00::1', /unique local/],
  ['fd12:3456:789a::1', /unique local/],
  ['fe80::1', /link-local fe80/],
  ['febf::1', /link-local fe80/],
  ['fec0::1', /site-local/],
  ['ff02::1', /multicast ff00/],
  ['100::1', /discard-only/],
  ['2001:db8::1', /documentation/],
  ['2001::1', /Teredo/],
  ['2002:7f00:1::1', /6to4/],
  ['3fff::1', /documentation/],
  ['5f00::1', /SRv6/],
  ['4000::1', /outside 2000::\/3/],
  ['not-an-ip', /not an IP/],
];

const ALLOWED = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.216.34',
  '172.15.255.255',
  '172.32.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '169.253.255.255',
  '192.169.0.1',
  '11.0.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
];

describe('nonGlobalRange', () => {
  it.each(REFUSED)('refuses %s', (address, range) => {
    expect(nonGlobalRange(address)).toMatch(range);
    expect(isGlobalAddress(address)).toBe(false);
  });

  it.each(ALLOWED)('allows the global address %s', (address) => {
    expect(nonGlobalRange(address)).toBeUndefined();
    expect(isGlobalAddress(address)).toBe(true);
  });
});
