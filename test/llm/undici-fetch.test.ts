import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUndiciFetch, type UndiciFetch } from '../../src/runtime/llm/undici-fetch.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let base: string;
let seen: Seen[];
let transport: UndiciFetch;

beforeEach(async () => {
  seen = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (req.url === '/missing') {
        res
          .writeHead(404, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] })
          .end('{"error":{"message":"no such thing"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_1' });
      res.write('data: one\n\n');
      res.end('data: two\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  transport = createUndiciFetch();
});

afterEach(async () => {
  await transport.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('createUndiciFetch (the openai SDK transport)', () => {
  it('sends method, headers and a string body, and streams the body as an async iterable of bytes', async () => {
    const response = await transport.fetch(`${base}/v1/chat/completions`, {
      method: 'post',
      headers: new Headers({ 'Content-Type': 'application/json', Authorization: 'Bearer k' }),
      body: '{"model":"m"}',
    });
    expect(response).toMatchObject({ ok: true, status: 200, url: `${base}/v1/chat/completions` });
    expect(response.headers.get('x-request-id')).toBe('req_1');
    const parts: string[] = [];
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
      parts.push(Buffer.from(chunk).toString('utf8'));
    expect(parts.join('')).toBe('data: one\n\ndata: two\n\n');
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions', body: '{"model":"m"}' });
    expect(seen[0]?.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer k' });
  });

  it('takes headers as a record or as pairs, and bytes as the body', async () => {
    await (
      await transport.fetch(`${base}/a`, {
        method: 'POST',
        headers: { 'X-One': '1' },
        body: new TextEncoder().encode('bytes'),
      })
    ).text();
    await (
      await transport.fetch(new URL(`${base}/b`), {
        method: 'POST',
        headers: [['X-Two', '2']],
        body: new TextEncoder().encode('buffer').buffer,
      })
    ).text();
    expect(seen[0]).toMatchObject({ url: '/a', body: 'bytes' });
    expect(seen[0]?.headers['x-one']).toBe('1');
    expect(seen[1]).toMatchObject({ url: '/b', body: 'buffer' });
    expect(seen[1]?.headers['x-two']).toBe('2');
  });

  it('reports an error status with ok false, repeated headers joined, and the body as JSON', async () => {
    const response = await transport.fetch(`${base}/missing`);
    expect(response.ok).toBe(false);
    expect(response.status).toBe(404);
    expect(response.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(await response.json()).toEqual({ error: { message: 'no such thing' } });
    expect(seen[0]?.method).toBe('GET');
  });

  it('refuses request bodies it cannot send, naming the limitation', async () => {
    await expect(
      transport.fetch(`${base}/x`, { method: 'POST', body: new URLSearchParams({ a: '1' }) }),
    ).rejects.toThrow(/only string and byte request bodies/);
    expect(seen).toHaveLength(0);
  });

  it('rejects with an AbortError when the signal fires before the response', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(transport.fetch(`${base}/x`, { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
