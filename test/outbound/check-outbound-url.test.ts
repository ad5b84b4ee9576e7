import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkOutboundUrl,
  type OutboundResolver,
  type ResolvedAddress,
} from '../../src/runtime/outbound/check-outbound-url.js';
import { OutboundUrlError } from '../../src/runtime/outbound/outbound-url-error.js';
import { pinnedLookup } from '../../src/runtime/outbound/pinned-dispatcher.js';
import { postWebhook } from '../../src/runtime/policy/host-bridge/webhook-client.js';
import { HostBridgeError } from '../../src/runtime/policy/host-bridge/host-bridge-error.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';

async function refusal(promise: Promise<unknown>): Promise<OutboundUrlError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundUrlError);
  return error as OutboundUrlError;
}

/** A resolver playing a DNS server: it answers each name from a list of successive answers and counts questions. */
function scriptedResolver(answers: Record<string, ResolvedAddress[][]>): OutboundResolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    const queue = answers[hostname];
    const next = queue && queue.length > 1 ? queue.shift() : queue?.[0];
    if (!next) throw Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' });
    return next;
  };
  return Object.assign(resolve, { asked });
}

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });

describe('checkOutboundUrl', () => {
  // No resolver is given for literal addresses: a DNS question would fail the test (the system resolver is never asked).
  it.each([
    ['http://127.0.0.1/', /loopback/],
    ['http://2130706433/', /loopback/],
    ['http://0x7f.1/', /loopback/],
    ['http://017700000001/', /loopback/],
    ['http://0x7f000001/', /loopback/],
    ['http://127.1/', /loopback/],
    ['http://[::1]:8080/', /loopback ::1/],
    ['http://[::ffff:127.0.0.1]/', /loopback 127/],
    ['http://[::ffff:7f00:1]/', /loopback 127/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://0/', /unspecified/],
    ['http://[::]/', /unspecified/],
    ['http://169.254.169.254/latest/meta-data/', /metadata/],
    ['http://[fd00:ec2::254]/', /unique local/],
    ['http://10.1.2.3/', /private/],
    ['http://100.64.0.1/', /carrier-grade/],
    ['https://192.168.0.1:8443/', /private/],
    ['http://[fe80::1]/', /link-local/],
  ])('refuses %s', async (url, range) => {
    const error = await refusal(checkOutboundUrl(url, { allowPrivate: false, resolve: scriptedResolver({}) }));
    expect(error.refusal).toBe('private_address');
    expect(error.message).toMatch(range);
  });

  it('refuses localhost names without asking DNS, trailing dot and subdomains included', async () => {
    const resolver = scriptedResolver({ 'localhost.': [[v4('8.8.8.8')]] });
    for (const url of ['http://localhost/', 'http://localhost./', 'http://LOCALHOST:9/', 'http://api.localhost/']) {
      expect((await refusal(checkOutboundUrl(url, { allowPrivate: false, resolve: resolver }))).message).toMatch(
        /loopback name/,
      );
    }
    expect(resolver.asked).toEqual([]);
  });

  it('refuses a name that resolves to a private address, even when only one of its addresses is', async () => {
    const resolver = scriptedResolver({
      'inside.test': [[v4('10.0.0.5')]],
      'mixed.test': [[v4('93.184.216.34'), v4('127.0.0.1')]],
      'v6.test': [[{ address: '::1', family: 6 }]],
    });
    expect(
      (await refusal(checkOutboundUrl('http://inside.test/', { allowPrivate: false, resolve: resolver }))).message,
    ).toMatch(/inside\.test resolves to 10\.0\.0\.5/);
    expect(
      (await refusal(checkOutboundUrl('http://mixed.test/', { allowPrivate: false, resolve: resolver }))).message,
    ).toMatch(/resolves to 127\.0\.0\.1/);
    expect(
      (await refusal(checkOutboundUrl('http://v6.test/', { allowPrivate: false, resolve: resolver }))).refusal,
    ).toBe('private_address');
  });

  it('refuses userinfo, other schemes, zone ids and unresolvable names with their own refusal', async () => {
    const resolver = scriptedResolver({});
    expect(
      (await refusal(checkOutboundUrl('http://evil@127.0.0.1/', { allowPrivate: true, resolve: resolver }))).refusal,
    ).toBe('credentials');
    expect(
      (await refusal(checkOutboundUrl('http://a:b@example.com/', { allowPrivate: false, resolve: resolver }))).refusal,
    ).toBe('credentials');
    expect(
      (await refusal(checkOutboundUrl('file:///etc/passwd', { allowPrivate: true, resolve: resolver }))).refusal,
    ).toBe('scheme');
    expect(
      (await refusal(checkOutboundUrl('gopher://127.0.0.1:6379/', { allowPrivate: true, resolve: resolver }))).refusal,
    ).toBe('scheme');
    expect(
      (await refusal(checkOutboundUrl('http://[fe80::1%25eth0]/', { allowPrivate: true, resolve: resolver }))).refusal,
    ).toBe('invalid_url');
    expect(
      (await refusal(checkOutboundUrl('http://nowhere.test/', { allowPrivate: false, resolve: resolver }))).refusal,
    ).toBe('unresolvable');
    const slow: OutboundResolver = () => new Promise(() => undefined);
    expect(
      (
        await refusal(
          checkOutboundUrl('http://slow.test/', { allowPrivate: false, resolve: slow, resolveTimeoutMs: 50 }),
        )
      ).message,
    ).toMatch(/no answer within 50 ms/);
  });

  it('accepts global addresses and names, and private ones with allowPrivate, answering the addresses to pin', async () => {
    const resolver = scriptedResolver({
      'hooks.test': [[v4('93.184.216.34'), { address: '2606:4700::1', family: 6 }]],
      'lan.test': [[v4('192.168.1.20')]],
    });
    const global = await checkOutboundUrl('https://hooks.test/x?y=1', { allowPrivate: false, resolve: resolver });
    expect(global.address).toEqual(v4('93.184.216.34'));
    expect(global.addresses).toHaveLength(2);
    expect(global.url.href).toBe('https://hooks.test/x?y=1');
    expect((await checkOutboundUrl('http://8.8.8.8/', { allowPrivate: false, resolve: resolver })).address).toEqual(
      v4('8.8.8.8'),
    );
    expect((await checkOutboundUrl('http://lan.test/', { allowPrivate: true, resolve: resolver })).address).toEqual(
      v4('192.168.1.20'),
    );
    expect((await checkOutboundUrl('http://[::1]:9/', { allowPrivate: true })).address).toEqual({
      address: '::1',
      family: 6,
    });
  });
});

describe('pinned connections', () => {
  let inside: WebhookServer;
  beforeAll(async () => {
    inside = await startWebhookServer({ '/hook': { body: { action: 'continue' } } });
  });
  afterAll(async () => {
    await inside.close();
  });

  it('answers only the checked addresses, for the checked host only', () => {
    const lookup = pinnedLookup('hooks.test', [v4('93.184.216.34'), { address: '2606:4700::1', family: 6 }]);
    const answers: unknown[] = [];
    lookup('hooks.test', { all: true }, (error, address) => answers.push(error ?? address));
    lookup('hooks.test', { family: 6 }, (error, address, family) => answers.push(error ?? [address, family]));
    lookup('HOOKS.test', {}, (error, address) => answers.push(error ?? address));
    lookup('elsewhere.test', {}, (error) => answers.push(error?.message));
    expect(answers).toEqual([
      [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700::1', family: 6 },
      ],
      ['2606:4700::1', 6],
      '93.184.216.34',
      expect.stringMatching(/pinned to the checked address of hooks\.test/),
    ]);
  });

  it('DNS rebinding does not work: the name is resolved once and the connection goes to the checked address', async () => {
    const port = new URL(inside.url('/')).port;
    // First answer public (passes the check), every later answer the loopback server behind the firewall.
    const resolver = scriptedResolver({ 'rebind.test': [[v4('93.184.216.34')], [v4('127.0.0.1')]] });
    const error = await postWebhook(
      { kind: 'webhook', url: `http://rebind.test:${port}/hook` },
      {},
      { timeoutMs: 300, resolve: resolver },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HostBridgeError);
    expect(resolver.asked).toEqual(['rebind.test']);
    expect(inside.requests).toHaveLength(0);
  });

  it('a name is connected by its checked address, not by a second system lookup (which could not resolve it)', async () => {
    const port = new URL(inside.url('/')).port;
    const resolver = scriptedResolver({ 'hooks.rebind.test': [[v4('127.0.0.1')], [v4('10.9.9.9')]] });
    const answer = await postWebhook(
      { kind: 'webhook', url: `http://hooks.rebind.test:${port}/hook`, allowPrivateNetworks: true },
      { kind: 'x' },
      { timeoutMs: 2000, resolve: resolver },
    );
    expect(answer).toEqual({ action: 'continue' });
    expect(resolver.asked).toEqual(['hooks.rebind.test']);
    // The Host header is still the URL's host: virtual hosting and TLS names are unchanged by the pin.
    expect(inside.on('/hook').at(-1)?.headers.host).toBe(`hooks.rebind.test:${port}`);
  });

  it('an endpoint without allowPrivateNetworks is refused at call time, before anything is sent', async () => {
    const before = inside.requests.length;
    const error = await postWebhook({ kind: 'webhook', url: inside.url('/hook') }, {}, { timeoutMs: 2000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HostBridgeError);
    expect((error as HostBridgeError).failure).toBe('invalid_endpoint');
    expect((error as HostBridgeError).message).toMatch(/webhook url refused: 127\.0\.0\.1:\d+ is in the loopback/);
    expect(inside.requests).toHaveLength(before);
  });
});
