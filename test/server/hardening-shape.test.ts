import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/errors.js';
import { errorOf, rawExchange, startCapturedServer, type CapturedServer } from './hardening-helpers.js';

const TOKEN = 'hardening-token-0123456789';

/** A raw request with the Host header the browser guard wants. */
function raw(lines: string[], body = ''): string {
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

describe('every error, Fastify and Node parser ones included, is {error: {code, message, details}}', () => {
  let t: CapturedServer;
  beforeAll(async () => {
    t = await startCapturedServer({
      apiTokens: [{ token: TOKEN, principal: 'me', tenantId: 't1', scopes: ['sessions'] }],
    });
  });
  afterAll(async () => t.close());

  const expectShape = (
    answer: { status: number | undefined; body: unknown },
    status: number,
    code: keyof typeof ERROR_CATALOGUE,
  ) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    const error = errorOf(answer.body);
    expect(error, `not our shape: ${JSON.stringify(answer.body)}`).toBeDefined();
    expect(error?.code).toBe(code);
    expect(ERROR_CATALOGUE[code].status).toBe(status);
  };

  it('bad percent-encoding in a path parameter: 400 BAD_REQUEST', async () => {
    const answer = await rawExchange(
      t.port,
      raw([
        'GET /v1/sessions/%C0%AE HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${TOKEN}`,
        'Connection: close',
      ]),
    );
    expectShape(answer, 400, 'BAD_REQUEST');
  });

  it('a path parameter over 512 characters: 414 URI_TOO_LONG', async () => {
    const answer = await rawExchange(
      t.port,
      raw([
        `GET /v1/sessions/${'a'.repeat(600)} HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: Bearer ${TOKEN}`,
        'Connection: close',
      ]),
    );
    expectShape(answer, 414, 'URI_TOO_LONG');
  });

  it('a URL over the 16 KiB header limit: 431 HEADERS_TOO_LARGE, then the socket closes', async () => {
    const answer = await rawExchange(
      t.port,
      raw([`GET /v1/sessions/${'a'.repeat(20_000)} HTTP/1.1`, 'Host: 127.0.0.1']),
    );
    expectShape(answer, 431, 'HEADERS_TOO_LARGE');
    expect(answer.closed).toBe(true);
  });

  it('a NUL in a header value: 400 BAD_REQUEST', async () => {
    const answer = await rawExchange(t.port, raw(['GET /healthz HTTP/1.1', 'Host: 127.0.0.1', 'X-Bad: a\u0000b']));
    expectShape(answer, 400, 'BAD_REQUEST');
    expect(answer.closed).toBe(true);
  });

  it('an invalid character in a header name: 400 BAD_REQUEST', async () => {
    const answer = await rawExchange(t.port, raw(['GET /healthz HTTP/1.1', 'Host: 127.0.0.1', 'X Bad: 1']));
    expectShape(answer, 400, 'BAD_REQUEST');
  });

  it('a malformed chunked body: 400 BAD_REQUEST', async () => {
    const answer = await rawExchange(
      t.port,
      raw(
        [
          'POST /v1/sessions HTTP/1.1',
          'Host: 127.0.0.1',
          `Authorization: Bearer ${TOKEN}`,
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
        ],
        'zz\r\n{}\r\n0\r\n\r\n',
      ),
    );
    expectShape(answer, 400, 'BAD_REQUEST');
    expect(answer.closed).toBe(true);
  });

  it('PROPFIND on a known path: 405 METHOD_NOT_ALLOWED with Allow; on an unknown path: 404 NOT_FOUND', async () => {
    const known = await rawExchange(
      t.port,
      raw(['PROPFIND /v1/sessions HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close']),
    );
    expectShape(known, 405, 'METHOD_NOT_ALLOWED');
    expect(known.headers.allow).toBe('GET, HEAD, POST');
    const unknown = await rawExchange(
      t.port,
      raw(['PROPFIND /nowhere HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close']),
    );
    expectShape(unknown, 404, 'NOT_FOUND');
  });

  it('a method Node does not know at all: 400 BAD_REQUEST', async () => {
    const answer = await rawExchange(t.port, raw(['FROBNICATE /v1/sessions HTTP/1.1', 'Host: 127.0.0.1']));
    expectShape(answer, 400, 'BAD_REQUEST');
  });

  it('DELETE on a route that has none: 405 naming the methods it has', async () => {
    const res = await fetch(`${t.url}/v1/sessions/abc/runs`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(errorOf(await res.json())?.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('invalid JSON: 400 VALIDATION_ERROR; a wrong content-type: 400 VALIDATION_ERROR naming the body', async () => {
    const bad = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"workspace": ',
    });
    expect(bad.status).toBe(400);
    const badBody = errorOf(await bad.json());
    expect(badBody?.code).toBe('VALIDATION_ERROR');
    expect(badBody?.message).toMatch(/^body: invalid JSON/);
    const wrong = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/xml' },
      body: '<a/>',
    });
    expect(wrong.status).toBe(400);
    const wrongBody = errorOf(await wrong.json());
    expect(wrongBody?.code).toBe('VALIDATION_ERROR');
    expect(wrongBody?.message).toContain('content-type');
    // text/plain has a parser (a string), which the body schema then refuses.
    const text = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(text.status).toBe(400);
    expect(errorOf(await text.json())?.message).toMatch(/^body: /);
  });

  it('an unauthenticated POST with a 900 KB invalid-JSON body gets 401 before the body is parsed', async () => {
    const res = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{${'x'.repeat(900_000)}`,
    });
    expect(res.status).toBe(401);
    expect(errorOf(await res.json())?.code).toBe('UNAUTHORIZED');
    // A wrong token is refused the same way; with the right one the same body is a 400.
    const wrongToken = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer wrong-token-0000000000' },
      body: `{${'x'.repeat(900_000)}`,
    });
    expect(wrongToken.status).toBe(401);
    const authed = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: `{${'x'.repeat(900_000)}`,
    });
    expect(authed.status).toBe(400);
  });

  it('a body over limits.bodyLimitBytes: 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ x: 'y'.repeat(1_100_000) }),
    });
    expect(res.status).toBe(413);
    expect(errorOf(await res.json())?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('logs none of these client mistakes at error level', () => {
    expect(t.lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([]);
  });
});
