import { pino } from 'pino';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientFaultLog, CLIENT_FAULT_LINES_PER_WINDOW } from '../../src/server/client-fault-log.js';
import { eventually } from '../support/run-helpers.js';
import { openSocket, startCapturedServer, type CapturedServer, type LogLine } from './hardening-helpers.js';

async function openWs(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

describe('client mistakes are logged at info or warn, rate limited; error is for our own faults', () => {
  let t: CapturedServer;
  let eventsUrl: string;
  beforeAll(async () => {
    t = await startCapturedServer();
    const res = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { session } = (await res.json()) as { session: { id: string } };
    eventsUrl = `ws://127.0.0.1:${t.port}/v1/sessions/${session.id}/events`;
  });
  afterAll(async () => t.close());

  const faultLines = (kind: string) =>
    t.lines.filter((line) => typeof line.clientFault === 'string' && (line.clientFault as string).startsWith(kind));

  it('500 invalid messages on a socket: each answered with an error frame, a handful of info lines', async () => {
    const ws = await openWs(eventsUrl);
    let errors = 0;
    const all = new Promise<void>((resolve) => {
      ws.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { type: string };
        if (frame.type === 'error') errors += 1;
        if (errors === 500) resolve();
      });
    });
    for (let i = 0; i < 500; i += 1) ws.send(i % 2 === 0 ? 'not json' : JSON.stringify({ type: 'nonsense' }));
    await all;
    ws.close();
    const lines = faultLines('ws:invalid-message');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(CLIENT_FAULT_LINES_PER_WINDOW);
    expect(lines.every((line) => line.level === 30)).toBe(true);
  });

  it('50 sockets each sending a protocol-violating frame: terminated, a handful of warn lines, none at error', async () => {
    for (let i = 0; i < 50; i += 1) {
      const ws = await openWs(eventsUrl);
      const closed = new Promise((resolve) => ws.once('close', resolve));
      ws.on('error', () => undefined);
      // A masked frame with the reserved opcode 0x3: ws refuses it with WS_ERR_INVALID_OPCODE.
      (ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(Buffer.from([0x83, 0x80, 1, 2, 3, 4]));
      await closed;
    }
    const lines = faultLines('ws:WS_ERR_INVALID_OPCODE');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(CLIENT_FAULT_LINES_PER_WINDOW);
    expect(lines.every((line) => line.level === 40)).toBe(true);
  });

  it('200 requests for unknown routes and 100 bad bodies: a handful of info lines per kind', async () => {
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => fetch(`${t.url}/nowhere/${i}`).then((res) => res.arrayBuffer())),
    );
    await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(`${t.url}/v1/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{',
        }).then((res) => res.arrayBuffer()),
      ),
    );
    for (const kind of ['http:404:NOT_FOUND', 'http:400:VALIDATION_ERROR']) {
      const lines = faultLines(kind);
      expect(lines.length, kind).toBeGreaterThan(0);
      expect(lines.length, kind).toBeLessThanOrEqual(CLIENT_FAULT_LINES_PER_WINDOW);
      expect(lines.every((line) => line.level === 30)).toBe(true);
    }
  });

  it('a client that goes away mid-request is logged at info as aborted', async () => {
    const socket = await openSocket(t.port);
    socket.write(
      'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"wo',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    await eventually(() => faultLines('http:aborted').length > 0, 'an aborted-request line');
    expect(faultLines('http:aborted').every((line) => line.level === 30)).toBe(true);
  });

  it('nothing above logged at error level or above', () => {
    expect(t.lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([]);
  });
});

describe('ClientFaultLog', () => {
  it('logs N lines per kind per window, then one "suppressed K" summary when the window is over', () => {
    const lines: LogLine[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
    let now = 1_000_000;
    const log = new ClientFaultLog(logger, () => now, 3, 10_000);
    for (let i = 0; i < 50; i += 1) log.log('ws:bad', 'warn', { i }, 'bad frame');
    log.log('http:404', 'info', {}, 'not found');
    expect(lines.filter((line) => line.clientFault === 'ws:bad').map((line) => line.i)).toEqual([0, 1, 2]);
    now += 10_000;
    log.log('ws:bad', 'warn', { i: 50 }, 'bad frame');
    const summary = lines.find((line) => line.suppressed !== undefined);
    expect(summary).toMatchObject({ level: 40, clientFault: 'ws:bad', suppressed: 47 });
    expect(summary?.msg).toContain('suppressed 47');
    expect(lines.at(-1)).toMatchObject({ clientFault: 'ws:bad', i: 50 });
    expect(lines.filter((line) => line.clientFault === 'http:404')).toHaveLength(1);
    log.close();
  });
});

describe('request logs: quiet at info, on with log.requests or at debug', () => {
  const started: CapturedServer[] = [];
  afterAll(async () => {
    for (const s of started) await s.close();
  });
  const requestLines = (s: CapturedServer) =>
    s.lines.filter((line) => line.msg === 'incoming request' || line.msg === 'request completed');

  it('at the default info level 20 requests log no request lines; log.requests = true logs two per request', async () => {
    const quiet = await startCapturedServer();
    const loud = await startCapturedServer({ log: { requests: true } });
    const debug = await startCapturedServer({ logLevel: 'debug' });
    started.push(quiet, loud, debug);
    for (const s of [quiet, loud, debug])
      await Promise.all(Array.from({ length: 20 }, () => fetch(`${s.url}/healthz`).then((res) => res.arrayBuffer())));
    expect(requestLines(quiet)).toEqual([]);
    await eventually(() => requestLines(loud).length >= 40, 'the request lines of log.requests');
    await eventually(() => requestLines(debug).length >= 40, 'the request lines at debug');
    expect(requestLines(loud)).toHaveLength(40);
    expect(requestLines(debug)).toHaveLength(40);
  });
});
