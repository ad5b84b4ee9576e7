// The seed's sendWithAttachments / streamWithAttachments and our uploadAttachment / listAttachments through the
// typed client, against a real server on 127.0.0.1 and a strict fake provider (docs/attachments.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { A3sClient, PayloadTooLargeError, ValidationError } from '../../src/client/index.js';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// A real 1x1 PNG and the first bytes of a GIF.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');
const pngUrl = `data:image/png;base64,${PNG.toString('base64')}`;

const userContent = (req: RecordedRequest | undefined): unknown =>
  req?.body.messages.filter((m) => m.role === 'user').at(-1)?.content;

describe('attachments through the typed client', () => {
  let fake: FakeProvider;
  let t: TestServer;
  let client: A3sClient;

  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: {
        limits: { maxAttachmentBytes: 4096 },
        providers: imageModelProviders(fake),
      },
    });
    client = new A3sClient({ baseUrl: t.url, WebSocket: WebSocket as unknown as typeof globalThis.WebSocket });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it("sendWithAttachments takes the seed's {data: Buffer, mediaType} and a named text file; answers the AgentResult", async () => {
    const session = await client.session(t.root);
    t.fake.script({ text: 'a pixel and a note' });
    const result = await session.sendWithAttachments('what is this?', [
      { data: PNG, mediaType: 'image/png' },
      { data: new TextEncoder().encode('# hi\n'), mediaType: 'text/markdown', name: 'notes.md' },
    ]);
    expect(result.text).toBe('a pixel and a note');
    expect(userContent(t.fake.requests.at(-1))).toEqual([
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: pngUrl } },
      { type: 'text', text: 'notes.md:\n# hi\n' },
    ]);
    // The transcript keeps references, which listAttachments lists too.
    const user = (await session.history()).find((m) => m.role === 'user') as { attachments?: unknown[] };
    expect(user.attachments).toHaveLength(2);
    const listed = await session.listAttachments();
    expect(listed.map((a) => [a.type, a.mediaType, a.bytes])).toEqual([
      ['image', 'image/png', PNG.length],
      ['file', 'text/markdown', 5],
    ]);
    t.fake.assertDone();
    await session.close();
  });

  it('uploadAttachment sends the raw bytes and answers the reference; streamWithAttachments sends it by id', async () => {
    const session = await client.session(t.root);
    const ref = await session.uploadAttachment(PNG, { mediaType: 'image/png' });
    expect(ref).toMatchObject({ type: 'image', mediaType: 'image/png', bytes: PNG.length });
    expect(ref.attachmentId).toMatch(/^att_[0-9a-f]{32}$/);
    expect(ref.sha256).toMatch(/^sha256:[0-9a-f]{64}$/);
    const text = await session.uploadAttachment(new TextEncoder().encode('plain words').buffer, {
      mediaType: 'text/plain',
      name: 'words.txt',
    });
    expect(text).toMatchObject({ type: 'file', name: 'words.txt', bytes: 11 });
    expect((await session.listAttachments()).map((a) => a.attachmentId)).toEqual([ref.attachmentId, text.attachmentId]);

    t.fake.script({ text: 'streamed with both' });
    const stream = await session.streamWithAttachments('look at these', [ref, text]);
    const events = await stream.collect();
    expect(events.at(-1)).toMatchObject({ type: 'agent_end', text: 'streamed with both' });
    expect(userContent(t.fake.requests.at(-1))).toEqual([
      { type: 'text', text: 'look at these' },
      { type: 'image_url', image_url: { url: pngUrl } },
      { type: 'text', text: 'words.txt:\nplain words' },
    ]);
    // Nothing new was stored: the parts went by id.
    expect(await session.listAttachments()).toHaveLength(2);

    // The seed's object form takes them too, and a side question with history leaves the transcript as it was.
    t.fake.script({ text: 'by request' });
    expect((await session.sendRequest({ prompt: 'again', attachments: [ref] })).text).toBe('by request');
    expect(userContent(t.fake.requests.at(-1))).toEqual([
      { type: 'text', text: 'again' },
      { type: 'image_url', image_url: { url: pngUrl } },
    ]);
    const before = (await session.history()).length;
    t.fake.script({ text: 'aside' });
    expect((await session.sendWithAttachments('aside', [ref], [])).text).toBe('aside');
    expect((await session.history()).length).toBe(before);
    t.fake.assertDone();
    await session.close();
  });

  it('refusals map to the error classes: bytes that are not the declared type, too large, bad inputs by name', async () => {
    const session = await client.session(t.root);
    const mismatch = await session.uploadAttachment(GIF, { mediaType: 'image/png' }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(ValidationError);
    expect((mismatch as Error).message).toMatch(/declared image\/png but the bytes are image\/gif/);
    const big = await session
      .uploadAttachment(Buffer.concat([PNG, Buffer.alloc(5000)]), { mediaType: 'image/png' })
      .catch((e: unknown) => e);
    expect(big).toBeInstanceOf(PayloadTooLargeError);
    expect(big).toMatchObject({ status: 413 });
    const inlineMismatch = await session
      .sendWithAttachments('x', [{ data: GIF, mediaType: 'image/png' }])
      .catch((e: unknown) => e);
    expect(inlineMismatch).toBeInstanceOf(ValidationError);
    expect((inlineMismatch as Error).message).toMatch(/^body\.attachments\.0\.mediaType: declared image\/png/);

    // Refused by the client before any request, naming the field.
    const refusals: [unknown[], string][] = [
      [[{ data: Buffer.from('hi'), mediaType: 'text/plain' }], 'attachments.0.name'],
      [[{ data: PNG, mediaType: 'image/png', detail: 'high' }], 'attachments.0.detail'],
      [[{ type: 'image', mediaType: 'image/png' }], 'attachments.0'],
      [[{ data: 42, mediaType: 'image/png' }], 'attachments.0.data'],
    ];
    for (const [attachments, field] of refusals) {
      const error = await session.sendWithAttachments('x', attachments as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ details: { field } });
    }
    const noType = await session.uploadAttachment(PNG, {} as never).catch((e: unknown) => e);
    expect(noType).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'options.mediaType' } });
    expect(await session.listAttachments()).toEqual([]);
    t.fake.assertDone();
    await session.close();
  });

  it("the seed's {data: Buffer} over 512 KiB is uploaded first (inline it would pass the 1 MiB JSON body limit)", async () => {
    const big = await startTestServer({
      fake,
      config: {
        providers: imageModelProviders(fake),
      },
    });
    try {
      const bigClient = new A3sClient({
        baseUrl: big.url,
        WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
      });
      const session = await bigClient.session(big.root);
      const image = Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024, 7)]);
      fake.script({
        expect: (req) =>
          expect(userContent(req)).toEqual([
            { type: 'text', text: 'how big?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } },
          ]),
        text: 'big',
      });
      expect((await session.sendWithAttachments('how big?', [{ data: image, mediaType: 'image/png' }])).text).toBe(
        'big',
      );
      const [stored] = await session.listAttachments();
      expect(stored).toMatchObject({ type: 'image', mediaType: 'image/png', bytes: image.length });
      // A bad part next to a large one uploads nothing.
      await expect(
        session.sendWithAttachments('x', [
          { data: image, mediaType: 'image/png' },
          { data: PNG, mediaType: 'image/png', bogus: 1 } as never,
        ]),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(await session.listAttachments()).toHaveLength(1);
      fake.assertDone();
      await session.close();
    } finally {
      await big.close();
    }
  });
});
