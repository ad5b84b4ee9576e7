import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import type { CodeConfig } from '../../src/config/code-config.js';
import type { RunningServer } from '../../src/server/start-server.js';
import type { FakeProvider } from '../support/fake-provider.js';
import { startTestServer } from '../support/test-server.js';

/** One pino line the server logged. */
export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A server whose log lines are kept (a pino destination into an array). */
export interface CapturedServer {
  server: RunningServer;
  url: string;
  port: number;
  fake: FakeProvider;
  lines: LogLine[];
  close(): Promise<void>;
}

/** Start a server on 127.0.0.1 with a fake provider and a logger at `info` that records every line. */
export async function startCapturedServer(
  config: Partial<Record<keyof CodeConfig, unknown>> = {},
): Promise<CapturedServer> {
  const lines: LogLine[] = [];
  const destination = { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) };
  const t = await startTestServer({ config, logger: pino({ level: 'info' }, destination) });
  return { server: t.server, url: t.url, port: t.server.port, fake: t.fake, lines, close: t.close };
}

/** What a raw socket received before it closed (or before `waitMs` passed). */
export interface RawAnswer {
  text: string;
  closed: boolean;
  elapsedMs: number;
  status: number | undefined;
  headers: Record<string, string>;
  body: unknown;
}

/** Parse the first HTTP response in `text`. */
export function parseAnswer(text: string): Pick<RawAnswer, 'status' | 'headers' | 'body'> {
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body: unknown;
  const rest = split < 0 ? '' : text.slice(split + 4);
  const length = headers['content-length'] === undefined ? rest.length : Number(headers['content-length']);
  try {
    body = JSON.parse(rest.slice(0, length));
  } catch {
    body = rest;
  }
  return { status: status === undefined ? undefined : Number(status), headers, body };
}

/** Open a raw TCP connection to the server (optionally from a given local address). */
export function openSocket(port: number, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ...(localAddress ? { localAddress } : {}) }, () =>
      resolve(socket),
    );
    socket.once('error', reject);
  });
}

/** Collect what a socket receives until it closes or `waitMs` passes. */
export function collect(socket: Socket, waitMs: number): Promise<RawAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ text, closed, elapsedMs: Date.now() - started, ...parseAnswer(text) });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
  });
}

/** Send raw bytes on a new connection and collect the answer until the server closes it (or `waitMs`). */
export async function rawExchange(port: number, bytes: string | Buffer, waitMs = 5000): Promise<RawAnswer> {
  const socket = await openSocket(port);
  const answer = collect(socket, waitMs);
  socket.write(bytes);
  const result = await answer;
  socket.destroy();
  return result;
}

/** Assert-friendly: the `{error: {code, message, details}}` of a body, or undefined when it is not that shape. */
export function errorOf(
  body: unknown,
): { code: string; message: string; details: Record<string, unknown> } | undefined {
  const error = (body as { error?: unknown } | null)?.error as
    { code?: unknown; message?: unknown; details?: unknown } | undefined;
  if (
    !error ||
    typeof error.code !== 'string' ||
    typeof error.message !== 'string' ||
    typeof error.details !== 'object' ||
    error.details === null
  )
    return undefined;
  if (Object.keys(body as object).length !== 1 || Object.keys(error).sort().join(',') !== 'code,details,message')
    return undefined;
  return error as { code: string; message: string; details: Record<string, unknown> };
}
