import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { createSession, history } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

// A real 1x1 PNG and the first bytes of a JPEG, GIF and WebP.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');

function userContent(req: RecordedRequest): unknown {
  return req.body.messages.filter((m) => m.role === 'user').at(-1)?.content;
}

describe('attachments over HTTP', () => {
  let fake: FakeProvider;
  let t: TestServer;
  const A = 'token-tenant-a-attach-1';
  const B = 'token-tenant-b-attach-1';
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: {
        providers: imageModelProviders(fake, { textModel: true }),
        limits: { maxAttachmentBytes: 4096 },
        apiTokens: [
          { token: A, principal: 'a', tenantId: 'tenant-a', scopes: ['sessions'] },
          { token: B, principal: 'b', tenantId: 'tenant-b', scopes: ['sessions'] },
        ],
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  const session = async (token = A, options: Record<string, unknown> = {}) =>
    (await request(t.url).post('/v1/sessions').set(as(token)).send(options).expect(201)).body.session.id as string;
  const upload = (id: string, type: string, data: Buffer, token = A, name?: string) =>
    request(t.url)
      .post(`/v1/sessions/${id}/attachments${name ? `?name=${encodeURIComponent(name)}` : ''}`)
      .set(as(token))
      .set('content-type', type)
      .send(data);

  it('an inline base64 image and a text file become content parts; the transcript keeps references only', async () => {
    const id = await session();
    fake.script({ text: 'seen' });
    const res = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(A))
      .send({
        input: 'what is this?',
        wait: true,
        attachments: [
          { type: 'image', mediaType: 'image/png', data: PNG.toString('base64') },
          {
            type: 'file',
            name: 'notes.md',
            mediaType: 'text/markdown',
            data: Buffer.from('# hi\n').toString('base64'),
          },
        ],
      })
      .expect(200);
    expect(res.body.result.text).toBe('seen');
    const [req] = fake.requests.slice(-1);
    expect(userContent(req!)).toEqual([
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      { type: 'text', text: 'notes.md:\n# hi\n' },
    ]);
    const messages = (await request(t.url).get(`/v1/sessions/${id}/history`).set(as(A)).expect(200)).body.messages;
    const user = messages.find((m: { role: string }) => m.role === 'user');
    expect(user.content).toBe('what is this?');
    expect(user.attachments).toHaveLength(2);
    expect(user.attachments[0]).toMatchObject({ type: 'image', mediaType: 'image/png', bytes: PNG.length });
    expect(user.attachments[0].sha256).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(user.attachments[1]).toMatchObject({ type: 'file', name: 'notes.md', mediaType: 'text/markdown' });
    expect(JSON.stringify(messages)).not.toContain(PNG.toString('base64'));
  });

  it('an uploaded attachment is sent by id, served back only as a download, and unknown elsewhere', async () => {
    const id = await session();
    const up = await upload(id, 'image/jpeg', JPEG).expect(201);
    expect(up.body).toMatchObject({ type: 'image', mediaType: 'image/jpeg', bytes: JPEG.length });
    const attachmentId = up.body.attachmentId as string;
    expect(attachmentId).toMatch(/^att_[0-9a-f]{32}$/);
    const served = await request(t.url)
      .get(`/v1/sessions/${id}/attachments/${attachmentId}`)
      .set(as(A))
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(Buffer.compare(served.body as Buffer, JPEG)).toBe(0);
    expect(served.headers['content-disposition']).toMatch(/^attachment; filename="att_/);
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.headers['content-security-policy']).toBe('sandbox');
    fake.script({ text: 'ok' });
    await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(A))
      .send({ input: 'look', wait: true, attachments: [{ type: 'image', mediaType: 'image/jpeg', attachmentId }] })
      .expect(200);
    expect(userContent(fake.requests.at(-1)!)).toEqual([
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${JPEG.toString('base64')}` } },
    ]);
    // Another session of the same tenant, and the same session id of another tenant: 404, nothing sent.
    const other = await session();
    const before = fake.requests.length;
    await request(t.url).get(`/v1/sessions/${other}/attachments/${attachmentId}`).set(as(A)).expect(404);
    const refused = await request(t.url)
      .post(`/v1/sessions/${other}/runs`)
      .set(as(A))
      .send({ input: 'look', attachments: [{ type: 'image', mediaType: 'image/jpeg', attachmentId }] })
      .expect(404);
    expect(refused.body.error.message).toContain('body.attachments.0.attachmentId');
    await request(t.url).post('/v1/sessions').set(as(B)).send({ sessionId: id }).expect(201);
    await request(t.url).get(`/v1/sessions/${id}/attachments/${attachmentId}`).set(as(B)).expect(404);
    expect(fake.requests.length).toBe(before);
  });

  it('ids chosen to traverse are unknown ids, never paths', async () => {
    const id = await session();
    for (const bad of ['..%2F..%2Fsessions', '..', '.%2E', 'att_..%2F..%2Fx', `att_${'0'.repeat(31)}%2F`]) {
      const res = await request(t.url).get(`/v1/sessions/${id}/attachments/${bad}`).set(as(A));
      expect([404]).toContain(res.status);
    }
    const res = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(A))
      .send({ input: 'x', attachments: [{ type: 'image', mediaType: 'image/png', attachmentId: '../../etc/passwd' }] })
      .expect(404);
    expect(res.body.error.details.field).toBe('body.attachments.0.attachmentId');
  });

  it('wrong magic bytes, a disagreeing mediaType, bad base64 and other types are 400 naming the part; nothing stored', async () => {
    const id = await session();
    const send = (attachments: unknown[]) =>
      request(t.url).post(`/v1/sessions/${id}/runs`).set(as(A)).send({ input: 'x', attachments });
    const ok = { type: 'image', mediaType: 'image/png', data: PNG.toString('base64') };
    let res = await send([
      ok,
      { type: 'image', mediaType: 'image/png', data: Buffer.from('not a png').toString('base64') },
    ]).expect(400);
    expect(res.body.error.message).toMatch(/^body\.attachments\.1\.mediaType: /);
    res = await send([ok, { type: 'image', mediaType: 'image/png', data: GIF.toString('base64') }]).expect(400);
    expect(res.body.error.message).toBe('body.attachments.1.mediaType: declared image/png but the bytes are image/gif');
    res = await send([{ type: 'image', mediaType: 'image/png', data: '!!!not base64' }]).expect(400);
    expect(res.body.error.message).toBe('body.attachments.0.data: is not valid base64');
    res = await send([ok, { type: 'file', name: 'a.pdf', mediaType: 'application/pdf', data: 'JVBERi0=' }]).expect(400);
    expect(res.body.error.message).toMatch(/^body\.attachments\.1\.mediaType: "application\/pdf" is not accepted/);
    res = await send([
      {
        type: 'file',
        name: 'b.txt',
        mediaType: 'text/plain',
        data: Buffer.from([0xff, 0xfe, 0x00]).toString('base64'),
      },
    ]).expect(400);
    expect(res.body.error.message).toMatch(/^body\.attachments\.0\.mediaType: .*UTF-8/);
    res = await upload(id, 'image/webp', PNG).expect(400);
    expect(res.body.error.message).toMatch(/^headers\.content-type: declared image\/webp but the bytes are image\/png/);
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/attachments`).set(as(A)).expect(200)).body.attachments,
    ).toEqual([]);
    expect(await history(t, id).catch(() => [])).toEqual([]);
  });

  it('past limits.maxAttachmentBytes is 413 naming the limit, inline and uploaded', async () => {
    const id = await session();
    const big = Buffer.concat([PNG, Buffer.alloc(5000)]);
    let res = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(A))
      .send({ input: 'x', attachments: [{ type: 'image', mediaType: 'image/png', data: big.toString('base64') }] })
      .expect(413);
    expect(res.body.error.details).toMatchObject({
      limit: 'limits.maxAttachmentBytes',
      field: 'body.attachments.0.data',
    });
    res = await upload(id, 'image/png', big).expect(413);
    expect(res.body.error.details.limit).toBe('limits.maxAttachmentBytes');
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/attachments`).set(as(A)).expect(200)).body.attachments,
    ).toEqual([]);
  });

  it('an image to a model without the image modality is 400 naming the model and the part, before any provider call', async () => {
    const id = await session(A, { model: 'openai/text-model' });
    const before = fake.requests.length;
    const res = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(A))
      .send({ input: 'x', attachments: [{ type: 'image', mediaType: 'image/png', data: PNG.toString('base64') }] })
      .expect(400);
    expect(res.body.error.message).toContain('body.attachments.0');
    expect(res.body.error.message).toContain('openai/text-model');
    expect(fake.requests.length).toBe(before);
    // A text file is fine for a text model.
    fake.script({ text: 'read it' });
    await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(A))
      .send({
        input: 'x',
        wait: true,
        attachments: [{ type: 'file', name: 'a.txt', mediaType: 'text/plain', data: 'aGk=' }],
      })
      .expect(200);
    expect(userContent(fake.requests.at(-1)!)).toEqual([
      { type: 'text', text: 'x' },
      { type: 'text', text: 'a.txt:\nhi' },
    ]);
  });

  it('only the 8 most recent images stay in the context; older ones become placeholders naming them', async () => {
    const id = await session();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await upload(id, 'image/png', PNG).expect(201)).body.attachmentId);
    fake.script({ text: 'one' }, { text: 'two' });
    await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(A))
      .send({
        input: 'first',
        wait: true,
        attachments: ids.slice(0, 5).map((attachmentId) => ({ type: 'image', mediaType: 'image/png', attachmentId })),
      })
      .expect(200);
    await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(as(A))
      .send({
        input: 'second',
        wait: true,
        attachments: ids.slice(5).map((attachmentId) => ({ type: 'image', mediaType: 'image/png', attachmentId })),
      })
      .expect(200);
    const last = fake.requests.at(-1)!;
    const users = last.body.messages.filter((m) => m.role === 'user') as Array<{
      content: Array<{ type: string; text?: string }>;
    }>;
    const first = users[0]!.content;
    expect(first.filter((p) => p.type === 'image_url')).toHaveLength(3);
    const placeholders = first.filter((p) => p.type === 'text' && p.text?.startsWith('[image'));
    expect(placeholders.map((p) => p.text)).toEqual([
      `[image ${ids[0]} (image/png) not shown: only the 8 most recent images stay in the context]`,
      `[image ${ids[1]} (image/png) not shown: only the 8 most recent images stay in the context]`,
    ]);
    expect(users[1]!.content.filter((p) => p.type === 'image_url')).toHaveLength(5);
  });

  it('concurrent uploads past the per-session bound never store more than the bound', async () => {
    const id = await session();
    const results = await Promise.all(Array.from({ length: 110 }, () => upload(id, 'image/gif', GIF)));
    const created = results.filter((r) => r.status === 201).length;
    expect(created).toBe(100);
    const refused = results.filter((r) => r.status === 413);
    expect(refused).toHaveLength(10);
    expect(refused[0]!.body.error.details.limit).toBe('limits.maxAttachmentsPerSession');
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/attachments`).set(as(A)).expect(200)).body.attachments,
    ).toHaveLength(100);
  });

  it('a text upload needs a name; the header names it too', async () => {
    const id = await session();
    await upload(id, 'text/plain', Buffer.from('hello')).expect(400);
    const res = await request(t.url)
      .post(`/v1/sessions/${id}/attachments`)
      .set(as(A))
      .set('content-type', 'text/plain; charset=utf-8')
      .set('x-attachment-name', 'hello.txt')
      .send(Buffer.from('hello'))
      .expect(201);
    expect(res.body).toMatchObject({ type: 'file', name: 'hello.txt', mediaType: 'text/plain', bytes: 5 });
  });
});

describe('attachments in the file store', () => {
  it('survive a restart (the transcript reference still resolves) and go with purge', async () => {
    const fake = await startFakeProvider();
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    const config = { providers: imageModelProviders(fake, { textModel: true }) };
    let t = await startTestServer({ fake, dataDir, root, config });
    try {
      const id = await createSession(t, { sessionId: 'kept', autoSave: true });
      fake.script({ text: 'one' });
      await request(t.url)
        .post(`/v1/sessions/${id}/runs`)
        .send({
          input: 'see',
          wait: true,
          attachments: [{ type: 'image', mediaType: 'image/png', data: PNG.toString('base64') }],
        })
        .expect(200);
      await t.close();
      t = await startTestServer({ fake, dataDir, root, config });
      await request(t.url).post('/v1/sessions').send({ sessionId: 'kept', resume: true }).expect(201);
      fake.script({ text: 'two' });
      await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'again', wait: true }).expect(200);
      const users = fake.requests.at(-1)!.body.messages.filter((m) => m.role === 'user');
      expect(users[0]!.content).toEqual([
        { type: 'text', text: 'see' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      ]);
      expect(users[1]!.content).toBe('again');
      const tenants = readdirSync(join(dataDir, 'attachments'));
      expect(tenants).toHaveLength(1);
      const dir = join(dataDir, 'attachments', tenants[0]!, 'kept');
      expect(readdirSync(dir).filter((n) => n.endsWith('.bin'))).toHaveLength(1);
      await request(t.url).delete(`/v1/sessions/${id}?purge=true`).expect(200);
      expect(existsSync(dir)).toBe(false);
    } finally {
      await t.close();
      await fake.close();
    }
  });
});
