import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedAddress } from '../../src/runtime/outbound/check-outbound-url.js';
import { outboundFetch } from '../../src/runtime/outbound/outbound-fetch.js';

/** A loopback server: /stream answers in three chunks over ~300 ms, /redirect answers 302 to /target. */
let server: Server;
let base: string;
const seen: IncomingMessage[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req);
    if (req.url === '/redirect') {
      res.writeHead(302, { location: `${base}/target` }).end();
      return;
    }
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let n = 0;
      const timer = setInterval(() => {
        res.write(`chunk${n} `);
        if (++n === 3) {
          clearInterval(timer);
          res.end();
        }
      }, 100);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${req.headers.host ?? ''}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const port = () => new URL(base).port;

describe('outboundFetch: URLs a tenant named (MCP over HTTP)', () => {
  it('refuses a private address before connecting when private addresses are not allowed', async () => {
    const before = seen.length;
    await expect(outboundFetch({ allowPrivate: false })(`${base}/x`)).rejects.toThrow(/loopback/);
    await expect(outboundFetch({ allowPrivate: false })(`http://0x7f.1:${port()}/x`)).rejects.toThrow(/loopback/);
    expect(seen.length).toBe(before);
  });

  it('with the right to call private addresses, fetches and streams a body that outlives the call', async () => {
    const answer = await outboundFetch({ allowPrivate: true })(`${base}/stream`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('chunk0 chunk1 chunk2 ');
  });

  it('never follows a redirect: the target is not asked', async () => {
    const before = seen.filter((r) => r.url === '/target').length;
    await expect(outboundFetch({ allowPrivate: true })(`${base}/redirect`)).rejects.toThrow(/redirect \(HTTP 302/);
    expect(seen.filter((r) => r.url === '/target').length).toBe(before);
  });

  it('connects to the address the check resolved, asking DNS once (no rebinding), with the URL host as Host', async () => {
    const asked: string[] = [];
    // A DNS server that would rebind: a public address after the first answer. The fetch must never ask twice.
    const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
      asked.push(hostname);
      return asked.length === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '93.184.216.34', family: 4 }];
    };
    const answer = await outboundFetch({ allowPrivate: true, resolve })(`http://mcp.example.test:${port()}/hello`);
    expect(await answer.text()).toBe(`hello mcp.example.test:${port()}`);
    expect(asked).toEqual(['mcp.example.test']);
    // Without the right, the same name resolving to loopback is refused.
    await expect(
      outboundFetch({ allowPrivate: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] })(
        `http://mcp.example.test:${port()}/hello`,
      ),
    ).rejects.toThrow(/loopback/);
  });
});
