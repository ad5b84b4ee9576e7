import { networkInterfaces } from 'node:os';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collect,
  errorOf,
  openSocket,
  rawExchange,
  startCapturedServer,
  type CapturedServer,
} from './hardening-helpers.js';

const servers: CapturedServer[] = [];
const held: Socket[] = [];
afterEach(async () => {
  for (const socket of held.splice(0)) socket.destroy();
  for (const s of servers.splice(0)) await s.close();
});

async function start(config: Record<string, unknown>): Promise<CapturedServer> {
  const t = await startCapturedServer(config);
  servers.push(t);
  return t;
}

/** A request the server is still reading (its body is late): it holds its connection open. */
async function holdRequest(port: number, extraHeaders: string[] = [], localAddress?: string): Promise<Socket> {
  const socket = await openSocket(port, localAddress);
  held.push(socket);
  socket.write(
    [
      'POST /v1/sessions HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      'Content-Length: 50',
      ...extraHeaders,
      '',
      '{"wo',
    ].join('\r\n'),
  );
  return socket;
}

function healthz(forwardedFor?: string): string {
  return [
    'GET /healthz HTTP/1.1',
    'Host: 127.0.0.1',
    'Connection: close',
    ...(forwardedFor ? [`X-Forwarded-For: ${forwardedFor}`] : []),
    '',
    '',
  ].join('\r\n');
}

// This machine's first non-loopback IPv4 address: a client socket bound to it reaches 127.0.0.1 from a non-loopback address.
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;

describe('limits.maxConnectionsPerAddress', () => {
  it.skipIf(externalAddress === undefined)(
    "destroys a direct peer's connection over the cap at once; loopback stays exempt",
    async () => {
      const t = await start({ limits: { maxConnectionsPerAddress: 2, bodyTimeoutMs: 20_000 } });
      const first = await holdRequest(t.port, [], externalAddress);
      await holdRequest(t.port, [], externalAddress);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const over = await openSocket(t.port, externalAddress);
      const refused = await collect(over, 3000);
      expect(refused.closed).toBe(true);
      expect(refused.text).toBe('');
      // Loopback is never counted.
      for (let i = 0; i < 3; i += 1) await holdRequest(t.port);
      expect((await rawExchange(t.port, healthz())).status).toBe(200);
      // A freed slot is usable again.
      const freed = new Promise((resolve) => first.once('close', resolve));
      first.destroy();
      await freed;
      await new Promise((resolve) => setTimeout(resolve, 100));
      const again = await openSocket(t.port, externalAddress);
      const answer = collect(again, 3000);
      again.write(healthz());
      expect((await answer).status).toBe(200);
      const refusals = t.lines.filter((line) => line.clientFault === 'http:connection-cap');
      expect(refusals).toHaveLength(1);
      expect(refusals[0]?.level).toBe(40);
    },
  );

  it('behind a trusted proxy, counts X-Forwarded-For clients and answers 429 TOO_MANY_CONNECTIONS over the cap', async () => {
    const t = await start({
      trustProxy: ['127.0.0.1'],
      log: { requests: true },
      limits: { maxConnectionsPerAddress: 2, bodyTimeoutMs: 20_000 },
    });
    const first = await holdRequest(t.port, ['X-Forwarded-For: 203.0.113.7']);
    await holdRequest(t.port, ['X-Forwarded-For: 198.51.100.1, 203.0.113.7']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const over = await rawExchange(t.port, healthz('203.0.113.7'));
    expect(over.status).toBe(429);
    expect(over.closed).toBe(true);
    const error = errorOf(over.body);
    expect(error?.code).toBe('TOO_MANY_CONNECTIONS');
    expect(error?.details).toEqual({ limit: 'limits.maxConnectionsPerAddress', max: 2 });
    // Another client behind the same proxy is not affected, nor is the proxy's own loopback address.
    expect((await rawExchange(t.port, healthz('203.0.113.8'))).status).toBe(200);
    expect((await rawExchange(t.port, healthz())).status).toBe(200);
    // An upgraded WebSocket is an open connection too: the third one of a client is refused with 429 before the upgrade.
    const created = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { session } = (await created.json()) as { session: { id: string } };
    const closedFirst = new Promise((resolve) => first.once('close', resolve));
    first.destroy();
    await closedFirst;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const ws = new WebSocket(`ws://127.0.0.1:${t.port}/v1/sessions/${session.id}/events`, {
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const refusedWs = new WebSocket(`ws://127.0.0.1:${t.port}/v1/sessions/${session.id}/events`, {
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    const status = await new Promise<number>((resolve, reject) => {
      refusedWs.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      refusedWs.once('open', () => reject(new Error('the upgrade over the cap was accepted')));
      refusedWs.once('error', () => undefined);
    });
    expect(status).toBe(429);
    ws.close();
    // Request logs carry the forwarded client address.
    expect(
      t.lines.some(
        (line) =>
          line.msg === 'incoming request' &&
          (line.req as { remoteAddress?: string } | undefined)?.remoteAddress === '203.0.113.8',
      ),
    ).toBe(true);
  });

  it('without trust_proxy, X-Forwarded-For is ignored and loopback clients are never capped', async () => {
    const t = await start({ limits: { maxConnectionsPerAddress: 1, bodyTimeoutMs: 20_000 } });
    for (let i = 0; i < 3; i += 1) await holdRequest(t.port, ['X-Forwarded-For: 203.0.113.7']);
    expect((await rawExchange(t.port, healthz('203.0.113.7'))).status).toBe(200);
    expect(t.lines.filter((line) => line.clientFault === 'http:connection-cap')).toEqual([]);
  });
});
