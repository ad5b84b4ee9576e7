import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, errorOf, openSocket, startCapturedServer, type CapturedServer } from './hardening-helpers.js';

const servers: CapturedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(limits: Record<string, number>): Promise<CapturedServer> {
  const t = await startCapturedServer({ limits });
  servers.push(t);
  return t;
}

const BODYLESS_POST =
  'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';

describe('request timeouts', () => {
  it('a POST whose body never arrives gets 408 REQUEST_TIMEOUT in our shape after limits.bodyTimeoutMs, and its socket is closed', async () => {
    const t = await start({ bodyTimeoutMs: 400 });
    const socket = await openSocket(t.port);
    const answer = collect(socket, 5000);
    socket.write(BODYLESS_POST);
    const result = await answer;
    expect(result.closed).toBe(true);
    expect(result.status).toBe(408);
    expect(result.headers.connection).toBe('close');
    const error = errorOf(result.body);
    expect(error?.code).toBe('REQUEST_TIMEOUT');
    expect(error?.details).toEqual({ limit: 'limits.bodyTimeoutMs', ms: 400 });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(350);
    expect(result.elapsedMs).toBeLessThan(3000);
    // The part of a body that did arrive does not reset the clock.
    const partial = await openSocket(t.port);
    const partialAnswer = collect(partial, 5000);
    partial.write(`${BODYLESS_POST}{"work`);
    expect((await partialAnswer).status).toBe(408);
  });

  it('a socket that sends partial headers is answered 408 and closed after limits.headersTimeoutMs', async () => {
    const t = await start({ headersTimeoutMs: 300 });
    const socket = await openSocket(t.port);
    const answer = collect(socket, 5000);
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    const result = await answer;
    expect(result.closed).toBe(true);
    expect(result.status).toBe(408);
    expect(errorOf(result.body)?.code).toBe('REQUEST_TIMEOUT');
    expect(result.elapsedMs).toBeLessThan(3000);
  });

  it('a socket that sends nothing is answered 408 and closed after limits.headersTimeoutMs too', async () => {
    const t = await start({ headersTimeoutMs: 300 });
    const socket = await openSocket(t.port);
    const result = await collect(socket, 6000);
    expect(result.closed).toBe(true);
    expect(result.status).toBe(408);
    expect(errorOf(result.body)?.code).toBe('REQUEST_TIMEOUT');
    expect(result.elapsedMs).toBeLessThan(3000);
  });

  it('an idle keep-alive connection is closed after limits.keepAliveTimeoutMs', async () => {
    const t = await start({ keepAliveTimeoutMs: 300 });
    const socket = await openSocket(t.port);
    const answer = collect(socket, 5000);
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const result = await answer;
    expect(result.status).toBe(200);
    expect(result.closed).toBe(true);
    expect(result.elapsedMs).toBeLessThan(3000);
  });

  it('/healthz keeps answering while 300 body-less POSTs are open, and every one of them gets its 408', async () => {
    const t = await start({ bodyTimeoutMs: 2000 });
    const sockets = await Promise.all(Array.from({ length: 300 }, () => openSocket(t.port)));
    const answers = sockets.map((socket) => collect(socket, 10_000));
    for (const socket of sockets) socket.write(BODYLESS_POST);
    for (let i = 0; i < 3; i += 1) {
      const res = await fetch(`${t.url}/healthz`);
      expect(res.status).toBe(200);
    }
    const results = await Promise.all(answers);
    expect(
      results.filter((r) => r.closed && r.status === 408 && errorOf(r.body)?.code === 'REQUEST_TIMEOUT'),
    ).toHaveLength(300);
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    // 300 timeouts are a handful of warn lines (rate limited), none at error level.
    const timeouts = t.lines.filter((line) => line.clientFault === 'http:body-timeout');
    expect(timeouts.length).toBeGreaterThan(0);
    expect(timeouts.length).toBeLessThanOrEqual(6);
    expect(timeouts.every((line) => line.level === 40)).toBe(true);
    expect(t.lines.filter((line) => line.level >= 50)).toEqual([]);
  });

  it('a WebSocket upgrade is not cut by the body or headers timeout', async () => {
    const t = await start({ bodyTimeoutMs: 200, headersTimeoutMs: 200 });
    const created = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(created.status).toBe(201);
    const { session } = (await created.json()) as { session: { id: string } };
    const ws = new WebSocket(`ws://127.0.0.1:${t.port}/v1/sessions/${session.id}/events`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    // Several times both timeouts (and Node's check interval).
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(ws.readyState).toBe(WebSocket.OPEN);
    const pong = new Promise<string>((resolve) => ws.on('message', (data) => resolve(data.toString())));
    ws.send(JSON.stringify({ type: 'ping' }));
    expect(JSON.parse(await pong)).toMatchObject({ type: 'pong' });
    ws.close();
  });
});
