import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

interface Answer {
  status: number;
  body: { error?: { code: string; message: string; details: Record<string, unknown> }; [key: string]: unknown };
}

/** One raw HTTP request to the server's port with exactly the headers given (Host included). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : (JSON.parse(text) as Answer['body']) });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Write a raw request and read until the server closes the connection (or 5 s pass). */
function raw(port: number, text: string): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: out, closedByServer: false });
    }, 5000);
    socket.on('data', (chunk: Buffer) => (out += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: out, closedByServer: true });
    });
    socket.write(text);
  });
}

/** Open the events WebSocket with extra headers: the HTTP status and body of a refused upgrade, or 101. */
function upgrade(port: number, sessionId: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/sessions/${sessionId}/events`, { headers });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, body: {} });
    });
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) as Answer['body'] }),
      );
    });
    ws.on('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

describe('browser guard: Host and Origin checks in tokenless loopback mode', () => {
  let t: TestServer;
  let port: number;
  let own: string;
  let created = 0;
  const newId = () => `guard-${++created}`;

  beforeAll(async () => {
    t = await startTestServer({
      config: { allowedOrigins: ['http://localhost:3000'], allowedHosts: ['a3s.test', 'pinned.test:1234'] },
    });
    port = t.server.port;
    own = `127.0.0.1:${port}`;
  });
  afterAll(async () => t.close());

  const exists = async (id: string) => (await send(port, 'GET', `/v1/sessions/${id}`, { host: own })).status;

  it.each([
    'evil.example',
    'evil.example:8080',
    '127.0.0.1.evil.example',
    'localhost:8080@evil',
    'localhost.',
    'a3s.test.evil.example',
    'pinned.test:9999',
    'localhost:8080, evil.example',
  ])('refuses Host %j with 403 HOST_NOT_ALLOWED and creates no session', async (host) => {
    const id = newId();
    const answer = await send(port, 'POST', '/v1/sessions', { host }, { sessionId: id });
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'HOST_NOT_ALLOWED', details: { host } });
    expect(answer.body.error?.message).toContain('allowed_hosts');
    expect(await exists(id)).toBe(404);
  });

  it('refuses a forged Host on every route, unrouted paths included', async () => {
    for (const [method, path] of [
      ['GET', '/v1/sessions'],
      ['GET', '/metrics'],
      ['GET', '/no/such/route'],
      ['POST', '/v1/sessions/x/runs'],
    ] as const) {
      const answer = await send(
        port,
        method,
        path,
        { host: 'evil.example' },
        method === 'POST' ? { input: 'hi' } : undefined,
      );
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error?.code).toBe('HOST_NOT_ALLOWED');
    }
  });

  it.each([
    `127.0.0.1:PORT`,
    'localhost:PORT',
    '[::1]:PORT',
    'localhost',
    '127.0.0.1',
    'LOCALHOST:PORT',
    'a3s.test:PORT',
    'pinned.test:1234',
  ])('serves Host %j', async (pattern) => {
    const id = newId();
    const answer = await send(
      port,
      'POST',
      '/v1/sessions',
      { host: pattern.replace('PORT', String(port)) },
      { sessionId: id },
    );
    expect(answer.status).toBe(201);
    expect(await exists(id)).toBe(200);
  });

  it.each([
    'http://evil.example',
    'null',
    'http://127.0.0.1.evil.example',
    'http://localhost:PORT',
    'http://127.0.0.1:1',
    'ftp://127.0.0.1:PORT',
    'http://127.0.0.1:PORT/path',
    'http://localhost:3000.evil.example',
  ])('refuses Origin %j with 403 ORIGIN_NOT_ALLOWED and creates no session', async (pattern) => {
    const origin = pattern.replace('PORT', String(port));
    const id = newId();
    const answer = await send(port, 'POST', '/v1/sessions', { host: own, origin }, { sessionId: id });
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED', details: { origin } });
    expect(await exists(id)).toBe(404);
  });

  it('serves the same origin (http, or https behind a TLS proxy), a configured origin and requests without Origin', async () => {
    const cases: Record<string, string>[] = [
      { host: own, origin: `http://${own}` },
      { host: own, origin: `https://${own}` },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
      { host: own, origin: 'http://localhost:3000' },
      { host: own },
      { host: own, 'sec-fetch-site': 'same-origin', origin: `http://${own}` },
      { host: own, 'sec-fetch-site': 'none' },
    ];
    for (const headers of cases) {
      const id = newId();
      const answer = await send(port, 'POST', '/v1/sessions', headers, { sessionId: id });
      expect(answer.status, JSON.stringify(headers)).toBe(201);
      expect(await exists(id)).toBe(200);
    }
  });

  it('refuses Sec-Fetch-Site cross-site or same-site without an allowed Origin, and allows cross-site with one', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const id = newId();
      const answer = await send(port, 'POST', '/v1/sessions', { host: own, 'sec-fetch-site': site }, { sessionId: id });
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED', details: { secFetchSite: site } });
      expect(await exists(id)).toBe(404);
    }
    const id = newId();
    expect(
      (
        await send(
          port,
          'POST',
          '/v1/sessions',
          { host: own, 'sec-fetch-site': 'cross-site', origin: 'http://localhost:3000' },
          { sessionId: id },
        )
      ).status,
    ).toBe(201);
  });

  it('lets probes call /healthz and /readyz with any Host, but never from a foreign origin', async () => {
    for (const path of ['/healthz', '/readyz']) {
      expect((await send(port, 'GET', path, { host: '10.1.2.3:8080' })).status).toBe(200);
      const foreign = await send(port, 'GET', path, { host: '10.1.2.3:8080', origin: 'http://10.1.2.3:8080' });
      expect(foreign.status).toBe(403);
      expect(foreign.body.error?.code).toBe('ORIGIN_NOT_ALLOWED');
      const crossSite = await send(port, 'GET', path, { host: own, 'sec-fetch-site': 'cross-site' });
      expect(crossSite.body.error?.code).toBe('ORIGIN_NOT_ALLOWED');
    }
    // The exemption is the route, not a path prefix.
    expect((await send(port, 'GET', '/healthz/../v1/sessions', { host: '10.1.2.3:8080' })).body.error?.code).toBe(
      'HOST_NOT_ALLOWED',
    );
  });

  it('refuses a request without a Host header (HTTP/1.0)', async () => {
    const answer = await raw(
      port,
      'POST /v1/sessions HTTP/1.0\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}',
    );
    expect(answer.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer.text).toContain('"code":"HOST_NOT_ALLOWED"');
    expect((await send(port, 'GET', '/v1/sessions', { host: own })).body).toMatchObject({
      sessions: expect.any(Array),
    });
  });

  it('answers a refused upgrade with HTTP 403 and closes the connection, without switching protocols', async () => {
    const key = 'dGhlIHNhbXBsZSBub25jZQ==';
    const answer = await raw(
      port,
      `GET /v1/sessions/x/events HTTP/1.1\r\nHost: ${own}\r\nOrigin: http://evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n\r\n`,
    );
    expect(answer.closedByServer).toBe(true);
    expect(answer.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer.text).not.toMatch(/Switching Protocols/);
    expect(answer.text).toContain('"code":"ORIGIN_NOT_ALLOWED"');
  });

  it('refuses the WebSocket upgrade with a forged Host or Origin before upgrading (HTTP 403), and upgrades otherwise', async () => {
    const id = newId();
    expect((await send(port, 'POST', '/v1/sessions', { host: own }, { sessionId: id })).status).toBe(201);
    const badHost = await upgrade(port, id, { host: 'evil.example' });
    expect(badHost.status).toBe(403);
    expect(badHost.body.error?.code).toBe('HOST_NOT_ALLOWED');
    for (const origin of ['http://evil.example', 'null', 'http://127.0.0.1.evil.example']) {
      const badOrigin = await upgrade(port, id, { origin });
      expect(badOrigin.status, origin).toBe(403);
      expect(badOrigin.body.error).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED', details: { origin } });
    }
    expect((await upgrade(port, id, { 'sec-fetch-site': 'cross-site' })).body.error?.code).toBe('ORIGIN_NOT_ALLOWED');
    expect((await upgrade(port, id, {})).status).toBe(101);
    expect((await upgrade(port, id, { origin: `http://${own}` })).status).toBe(101);
    expect((await upgrade(port, id, { origin: 'http://localhost:3000' })).status).toBe(101);
  });
});

describe('browser guard: a node with tokens on a wildcard bind', () => {
  const TOKEN = 'guard-admin-token-0123456789';
  let t: TestServer;
  let port: number;
  const auth = { authorization: `Bearer ${TOKEN}` };

  beforeAll(async () => {
    t = await startTestServer({
      config: {
        host: '0.0.0.0',
        apiTokens: [{ token: TOKEN, principal: 'ops', tenantId: 'default', scopes: ['sessions', 'admin'] }],
        advertiseUrl: 'http://node-a.cluster.test:9000',
      },
    });
    port = t.server.port;
  });
  afterAll(async () => t.close());

  it("serves the advertised URL's host (any port), the machine's interface addresses and loopback names", async () => {
    const addresses = Object.values(networkInterfaces()).flatMap((entries) =>
      (entries ?? []).filter((e) => e.family === 'IPv4').map((e) => e.address),
    );
    expect(addresses.length).toBeGreaterThan(0);
    for (const host of [
      'node-a.cluster.test:9000',
      `node-a.cluster.test:${port}`,
      `localhost:${port}`,
      ...addresses.map((a) => `${a}:${port}`),
    ]) {
      const answer = await send(port, 'POST', '/v1/sessions', { host, ...auth }, {});
      expect(answer.status, host).toBe(201);
    }
  });

  it('refuses other names even with a valid token, and a foreign Origin with one', async () => {
    const refused = await send(
      port,
      'POST',
      '/v1/sessions',
      { host: `evil.example:${port}`, ...auth },
      { sessionId: 'never' },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error?.code).toBe('HOST_NOT_ALLOWED');
    const foreign = await send(
      port,
      'POST',
      '/v1/sessions',
      { host: `127.0.0.1:${port}`, origin: 'https://evil.example', ...auth },
      { sessionId: 'never' },
    );
    expect(foreign.body.error?.code).toBe('ORIGIN_NOT_ALLOWED');
    expect((await send(port, 'GET', '/v1/sessions/never', { host: `127.0.0.1:${port}`, ...auth })).status).toBe(404);
  });
});

describe('browser guard: configuration', () => {
  it('names the field of a bad allowed_hosts or allowed_origins entry', () => {
    for (const [field, value] of [
      ['allowedHosts', 'http://a3s.test'],
      ['allowedHosts', 'a3s.test/path'],
      ['allowedHosts', 'user@a3s.test'],
      ['allowedOrigins', 'null'],
      ['allowedOrigins', 'https://a3s.test/'],
      ['allowedOrigins', 'a3s.test'],
    ] as const) {
      const result = CodeConfigSchema.safeParse({ [field]: [value] });
      expect(result.success, `${field} ${value}`).toBe(false);
      expect(result.error?.issues[0]?.path).toEqual([field, 0]);
    }
    expect(
      CodeConfigSchema.parse({
        allowedHosts: ['a3s.test', '[::1]:8080', '10.0.0.5'],
        allowedOrigins: ['https://console.a3s.test', 'http://localhost:3000'],
      }),
    ).toMatchObject({ allowedHosts: ['a3s.test', '[::1]:8080', '10.0.0.5'] });
  });
});
