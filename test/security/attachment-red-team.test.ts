import { connect } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedisTarget, redisServerConfig } from '../support/redis-target.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// Red team of the attachment routes (2026-12-07), as authenticated, unprivileged tenants over real HTTP: another
// tenant's ids, the same session id in two tenants, ids shaped like paths, the download's headers on every path,
// content-type smuggling and the bounds. On the file store, the memory store and a real redis-server.
const A = 'token-att-red-tenant-a-001';
const B = 'token-att-red-tenant-b-001';
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
];
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const MAX_BYTES = 4096;
const HTML = '<html><body><script>alert(document.domain)</script></body></html>';
const A_SECRET = 'TENANT-A-RED-TEAM-SECRET-44e1';

/**
 * Send raw bytes on one connection (each chunk `gapMs` after the one before) and answer everything the server
 * sent until it closed (or `ms` passed).
 */
function raw(url: string, chunks: Array<string | Buffer>, ms = 3000, gapMs = 0): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.on('connect', () => {
      chunks.forEach((chunk, i) =>
        gapMs === 0 ? socket.write(chunk) : setTimeout(() => socket.write(chunk), i * gapMs),
      );
    });
  });
}

/** An upload of `total` bytes that sends `first` of them now and the rest on finish(); `answer` is all it got back. */
function slowUpload(url: string, token: string, total: number, first: number) {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  let out = '';
  socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
  socket.on('error', () => undefined);
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(out)));
  const sent = new Promise<void>((resolve) =>
    socket.on('connect', () => {
      socket.write(
        `POST /v1/sessions/bounds/attachments?name=slow.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: text/plain\r\nContent-Length: ${total}\r\nConnection: close\r\n\r\n`,
      );
      socket.write('s'.repeat(first), () => resolve());
    }),
  );
  return {
    sent,
    answer,
    received: () => out,
    finish: () => socket.write('s'.repeat(total - first)),
  };
}

function suite(name: string, backend: () => Record<string, unknown>, cleanup?: (prefix: string) => Promise<void>) {
  describe(`attachments red team (${name})`, () => {
    let fake: FakeProvider;
    let t: TestServer;
    const prefix = `a3s-att-red-${Math.random().toString(36).slice(2)}:`;
    const upload = (token: string, session: string, type: string, data: Buffer | string, fileName?: string) =>
      request(t.url)
        .post(`/v1/sessions/${session}/attachments${fileName ? `?name=${encodeURIComponent(fileName)}` : ''}`)
        .set(auth(token))
        .set('content-type', type)
        .send(Buffer.from(data));
    const download = (token: string | undefined, path: string) => {
      const req = request(t.url).get(path);
      return (token ? req.set(auth(token)) : req).buffer(true).parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks).toString('latin1')));
      });
    };

    beforeAll(async () => {
      fake = await startFakeProvider();
      t = await startTestServer({
        fake,
        config: { ...backend(), redisKeyPrefix: prefix, apiTokens: TOKENS, limits: { maxAttachmentBytes: MAX_BYTES } },
      });
      for (const token of [A, B])
        for (const sessionId of ['shared', 'SHARED', 'bounds', 'smuggle'])
          await request(t.url).post('/v1/sessions').set(auth(token)).send({ sessionId }).expect(201);
    });
    afterAll(async () => {
      await t?.close();
      await fake?.close();
      await cleanup?.(prefix);
    });

    it("another tenant's attachment ids, the same session id and case tricks reach nothing; nothing is sent", async () => {
      const aId = (await upload(A, 'shared', 'text/plain', A_SECRET, 'a.txt').expect(201)).body.attachmentId as string;
      const bId = (await upload(B, 'shared', 'text/plain', 'bob', 'b.txt').expect(201)).body.attachmentId as string;
      const bList = (await request(t.url).get('/v1/sessions/shared/attachments').set(auth(B)).expect(200)).body;
      expect(bList.attachments.map((r: { attachmentId: string }) => r.attachmentId)).toEqual([bId]);
      for (const path of [
        `/v1/sessions/shared/attachments/${aId}`,
        `/v1/sessions/SHARED/attachments/${aId}`,
        `/v1/sessions/shared/attachments/${aId.toUpperCase()}`,
        `/v1/sessions/shared/attachments/${aId.replace('att_', 'ATT_')}`,
        `/v1/sessions/shared/attachments/${aId}%00`,
        `/v1/sessions/shared/attachments/${aId}%2F..`,
        `/v1/sessions/shared/attachments/..%2F..%2Ftenant-a%2Fshared%2F${aId}`,
        `/v1/sessions/%2e%2e%2Ftenant-a%2Fshared/attachments/${aId}`,
        `/v1/sessions/..%2Ftenant-a%2Fshared/attachments/${aId}`,
      ]) {
        const res = await download(B, path);
        expect(res.status, path).toBe(404);
        expect(res.body, path).not.toContain(A_SECRET);
      }
      // A's own upper-cased session id is another session, and A's id is unknown there too.
      expect((await download(A, `/v1/sessions/SHARED/attachments/${aId}`)).status).toBe(404);
      expect((await download(B, `/v1/sessions/shared/attachments/${aId}?tenantId=tenant-a`)).status).toBe(403);
      const before = fake.requests.length;
      const run = await request(t.url)
        .post('/v1/sessions/shared/runs')
        .set(auth(B))
        .send({
          input: 'x',
          attachments: [{ type: 'file', name: 'a.txt', mediaType: 'text/plain', attachmentId: aId }],
        })
        .expect(404);
      expect(run.body.error.details.field).toBe('body.attachments.0.attachmentId');
      expect(fake.requests.length).toBe(before);
      // Session ids shaped like paths, NUL and very long: unknown sessions or 400, never another tenant's.
      for (const id of ['..', '%2e%2e', '.', '%00', 'shared%00', `${'x'.repeat(129)}`, 'shared%2F..%2F..']) {
        const res = await request(t.url).get(`/v1/sessions/${id}/attachments`).set(auth(B));
        expect([400, 404], id).toContain(res.status);
        expect(res.text).not.toContain(aId);
      }
    });

    it('the download headers are on every answer of the route: 200, 404, 400, 401', async () => {
      const id = (await upload(A, 'shared', 'text/plain', 'hello', 'h.txt').expect(201)).body.attachmentId as string;
      const answers = await Promise.all([
        download(A, `/v1/sessions/shared/attachments/${id}`),
        download(A, `/v1/sessions/shared/attachments/att_${'0'.repeat(32)}`),
        download(A, `/v1/sessions/shared/attachments/${'%3Cscript%3E'.repeat(3)}`),
        download(A, `/v1/sessions/shared/attachments/${'a'.repeat(200)}`),
        download(A, `/v1/sessions/nope/attachments/${id}`),
        download(undefined, `/v1/sessions/shared/attachments/${id}`),
        download(B, `/v1/sessions/shared/attachments/${id}`),
      ]);
      expect(answers.map((r) => r.status)).toEqual([200, 404, 404, 400, 404, 401, 404]);
      for (const res of answers) {
        expect(res.headers['content-disposition'], String(res.status)).toMatch(/^attachment/);
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['content-security-policy']).toBe('sandbox');
        expect(res.headers['cache-control']).toBe('private, no-store');
      }
      expect(answers[2]?.headers['content-type']).toMatch(/^application\/json/);
    });

    it('content-type smuggling: HTML as an image, SVG and lists of types are refused; a polyglot and text/html stay downloads', async () => {
      const refused = [
        await upload(A, 'smuggle', 'image/png', HTML),
        await upload(
          A,
          'smuggle',
          'image/svg+xml',
          '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
          'x.svg',
        ),
        await upload(A, 'smuggle', 'text/plain, text/html', HTML, 'x.txt'),
        await upload(A, 'smuggle', 'application/xhtml+xml', HTML, 'x.xhtml'),
        await upload(A, 'smuggle', 'image/png', Buffer.concat([Buffer.from('GIF89a'), Buffer.from(HTML)])),
      ];
      // A name past 255 characters in the header, as in the query: 400 naming it, nothing stored.
      refused.push(
        await request(t.url)
          .post('/v1/sessions/smuggle/attachments')
          .set(auth(A))
          .set('content-type', 'text/plain')
          .set('x-attachment-name', 'n'.repeat(8000))
          .send(Buffer.from('x')),
        await upload(A, 'smuggle', 'text/plain', 'x', 'n'.repeat(256)),
      );
      expect(refused.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400, 400]);
      expect(refused[5]?.body.error.message).toMatch(/^headers\.x-attachment-name: /);
      const polyglot = Buffer.concat([Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), Buffer.from(HTML)]);
      const served = [
        await upload(A, 'smuggle', 'image/gif', polyglot).expect(201),
        await upload(A, 'smuggle', 'text/html', HTML, 'page.html').expect(201),
        await upload(A, 'smuggle', 'text/html; charset=utf-8', HTML, '"; filename=evil.html\r\nX-Evil: 1').expect(201),
      ];
      const types = [];
      for (const up of served) {
        const res = await download(A, `/v1/sessions/smuggle/attachments/${up.body.attachmentId}`).expect(200);
        types.push(res.headers['content-type']);
        expect(res.headers['content-disposition']).toMatch(/^attachment; filename="[^"\r\n]*"; filename\*=UTF-8''/);
        expect(res.headers['x-evil']).toBeUndefined();
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['content-security-policy']).toBe('sandbox');
      }
      expect(types).toEqual(['image/gif', 'text/html', 'text/html']);
      expect(
        (await request(t.url).get('/v1/sessions/smuggle/attachments').set(auth(A)).expect(200)).body.attachments,
      ).toHaveLength(3);
    });

    it('concurrent uploads never pass 100 per session; bodies past the limit, chunked or lying, are 413 or cut', async () => {
      const results = await Promise.all(
        Array.from({ length: 130 }, (_, i) => upload(B, 'bounds', 'text/plain', `n${i}`, `${i}.txt`)),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(100);
      expect(statuses.filter((s) => s === 413)).toHaveLength(30);
      expect(results.find((r) => r.status === 413)?.body.error.details.limit).toBe('limits.maxAttachmentsPerSession');
      const listed = (await request(t.url).get('/v1/sessions/bounds/attachments').set(auth(B)).expect(200)).body;
      expect(listed.attachments).toHaveLength(100);

      const head = (extra: string) =>
        `POST /v1/sessions/shared/attachments?name=big.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${B}\r\nContent-Type: text/plain\r\n${extra}\r\n`;
      const chunk = (n: number) => `${n.toString(16)}\r\n${'z'.repeat(n)}\r\n`;
      // Chunked, no content-length, past the limit: 413 naming the limit, nothing stored.
      const chunked = await raw(t.url, [
        head('Transfer-Encoding: chunked\r\nConnection: close\r\n'),
        ...Array.from({ length: 6 }, () => chunk(1000)),
        '0\r\n\r\n',
      ]);
      expect(chunked).toMatch(/^HTTP\/1\.1 413/);
      expect(chunked).toContain('limits.maxAttachmentBytes');
      // A content-length past the limit: 413 at once, before the body is sent.
      const declared = await raw(t.url, [head(`Content-Length: ${MAX_BYTES * 1000}\r\nConnection: close\r\n`)], 1500);
      expect(declared).toMatch(/^HTTP\/1\.1 413/);
      // A content-length that lies low: the upload is what it declared, the rest is no second request.
      const low = await raw(
        t.url,
        [head('Content-Length: 5\r\nConnection: keep-alive\r\n'), 'small', 'x'.repeat(6000)],
        3000,
        300,
      );
      expect(low).toMatch(/^HTTP\/1\.1 201/);
      expect(low).toContain('"bytes":5');
      expect(low).toMatch(/HTTP\/1\.1 400 Bad Request[^]*$/);
      const bList = (await request(t.url).get('/v1/sessions/shared/attachments').set(auth(B)).expect(200)).body;
      expect(bList.attachments.filter((r: { name?: string }) => r.name === 'big.txt')).toEqual([
        expect.objectContaining({ bytes: 5 }),
      ]);
    });

    it('an Idempotency-Key retried with inline parts stores none of them again (no orphans filling the 100)', async () => {
      await request(t.url).post('/v1/sessions').set(auth(B)).send({ sessionId: 'retry' }).expect(201);
      const body = {
        input: 'x',
        attachments: [
          { type: 'file', name: 'r.txt', mediaType: 'text/plain', data: Buffer.from('r').toString('base64') },
        ],
      };
      fake.script({ text: 'once', delayMs: 300 });
      const send = () =>
        request(t.url).post('/v1/sessions/retry/runs').set(auth(B)).set('idempotency-key', 'k-retry-1').send(body);
      const first = await send().expect(202);
      const retries = await Promise.all([1, 2, 3, 4, 5].map(() => send()));
      expect(retries.map((r) => [r.status, r.body.runId, r.body.existing])).toEqual(
        Array(5).fill([202, first.body.runId, true]),
      );
      const listed = (await request(t.url).get('/v1/sessions/retry/attachments').set(auth(B)).expect(200)).body;
      expect(listed.attachments).toHaveLength(1);
    });

    it("one tenant's slow uploads hold at most 4 x max_attachment_bytes in memory; other tenants upload on", async () => {
      await request(t.url).delete('/v1/sessions/bounds?purge=true').set(auth(A)).expect(200);
      await request(t.url).post('/v1/sessions').set(auth(A)).send({ sessionId: 'bounds' }).expect(201);
      const held = [1, 2, 3, 4].map(() => slowUpload(t.url, A, 4000, 3500));
      await Promise.all(held.map((h) => h.sent));
      // The server has read what was sent (4 x 3500 bytes held): one more upload of A's does not fit.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const fifth = slowUpload(t.url, A, 4000, 3500);
      const refused = await fifth.answer;
      expect(refused).toMatch(/^HTTP\/1\.1 429/);
      expect(refused).toContain('"quota":"uploadBytesInFlight"');
      expect(held.map((h) => h.received())).toEqual(['', '', '', '']);
      // B is another tenant: its upload is not held up.
      await upload(B, 'smuggle', 'text/plain', 'b'.repeat(3500), 'b.txt').expect(201);
      for (const h of held) h.finish();
      for (const answer of await Promise.all(held.map((h) => h.answer))) expect(answer).toMatch(/^HTTP\/1\.1 201/);
      // Answered, the budget is given back.
      await upload(A, 'bounds', 'text/plain', 'a'.repeat(4000), 'a.txt').expect(201);
    });
  });
}

suite('file store', () => ({}));
suite('memory store', () => ({ storageBackend: 'memory' }));
suite(
  'redis-server',
  () => redisServerConfig(),
  async (prefix) => {
    const redis = connectRedisTarget();
    const left = await redis.keys(`${prefix}*`);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
  },
);
