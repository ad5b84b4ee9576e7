import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { history } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// A real 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
const MAX = 4096;

const read = (id: string, file: string) => ({ id, name: 'read', arguments: { file_path: file } });

/** The messages of a request after its last assistant message (the tool results and what follows them). */
function afterAssistant(req: RecordedRequest) {
  const messages = req.body.messages;
  const last = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages.slice(last + 1);
}

function imageUrls(req: RecordedRequest): string[] {
  return req.body.messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Array<{ type: string; image_url?: { url: string } }>).flatMap((part) =>
          part.type === 'image_url' && part.image_url ? [part.image_url.url] : [],
        )
      : [],
  );
}

describe('read returns workspace images', () => {
  let fake: FakeProvider;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: {
        providers: imageModelProviders(fake, { textModel: true }),
        limits: { maxAttachmentBytes: MAX },
      },
    });
    writeFileSync(join(t.root, 'pic.png'), PNG);
    writeFileSync(join(t.root, 'anim.webp.gif'), GIF);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  const session = async (options: Record<string, unknown> = {}) =>
    (await request(t.url).post('/v1/sessions').send(options).expect(201)).body.session.id as string;
  const run = async (id: string, input = 'look') =>
    (await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input, wait: true }).expect(200)).body;

  it('the tool result says so in text; the image follows in a user message; the transcript keeps a reference', async () => {
    const id = await session();
    fake.script({ toolCalls: [read('r1', 'pic.png')] }, { text: 'a pixel' });
    expect((await run(id)).result.text).toBe('a pixel');
    const req = fake.requests.at(-1)!;
    const [tool, user, ...rest] = afterAssistant(req);
    expect(rest).toEqual([]);
    expect(tool).toMatchObject({ role: 'tool', tool_call_id: 'r1' });
    expect(typeof tool!.content).toBe('string');
    expect(tool!.content).toContain(`Image pic.png (image/png, ${PNG.length} bytes)`);
    expect(user!.role).toBe('user');
    expect(user!.content).toEqual([
      { type: 'text', text: `[the image the tool results above returned: pic.png (image/png, ${PNG.length} bytes)]` },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
    ]);
    // The transcript and the session's attachments hold the reference; no bytes anywhere in the history.
    const messages = await history(t, id);
    const shown = messages.find((m) => m.role === 'user' && m.attachments !== undefined)!;
    expect(shown.attachments).toEqual([
      expect.objectContaining({ type: 'image', mediaType: 'image/png', name: 'pic.png', bytes: PNG.length }),
    ]);
    expect(JSON.stringify(messages)).not.toContain(PNG.toString('base64'));
    const listed = (await request(t.url).get(`/v1/sessions/${id}/attachments`).expect(200)).body.attachments;
    expect(listed).toEqual(shown.attachments);
    // A later request still carries it (it is in the transcript, within the window).
    fake.script({ text: 'still there' });
    await run(id, 'again');
    expect(imageUrls(fake.requests.at(-1)!)).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
  });

  it('the magic bytes decide, not the name: a GIF named .webp.gif is a GIF; a .png of text is text', async () => {
    writeFileSync(join(t.root, 'notes.png'), 'just text\n');
    writeFileSync(join(t.root, 'junk.png'), Buffer.from([0, 1, 2, 3, 0, 0, 0xff, 0xfe, 0, 0]));
    const id = await session();
    fake.script(
      { toolCalls: [read('a', 'anim.webp.gif'), read('b', 'notes.png'), read('c', 'junk.png')] },
      { text: 'ok' },
    );
    await run(id);
    const req = fake.requests.at(-1)!;
    const [a, b, c, user] = afterAssistant(req);
    expect(a!.content).toContain('(image/gif,');
    expect(b!.content).toBe('     1\tjust text');
    expect(c!.content).toMatch(
      /binary file .*named like an image, but its bytes are not a png, jpeg, gif or webp image/,
    );
    expect(imageUrls(req)).toEqual([`data:image/gif;base64,${GIF.toString('base64')}`]);
    expect((user!.content as unknown[]).length).toBe(2);
  });

  it('a model whose modalities.input has no "image" is told so, and no image is sent or stored', async () => {
    const id = await session({ model: 'openai/text-model' });
    fake.script({ toolCalls: [read('r1', 'pic.png')] }, { text: 'cannot see' });
    await run(id);
    const req = fake.requests.at(-1)!;
    const after = afterAssistant(req);
    expect(after).toHaveLength(1);
    expect(after[0]!.content).toMatch(
      /pic\.png is an image \(image\/png, \d+ bytes\), and this model cannot take images/,
    );
    expect(imageUrls(req)).toEqual([]);
    expect(req.raw).not.toContain(PNG.toString('base64'));
    expect((await request(t.url).get(`/v1/sessions/${id}/attachments`).expect(200)).body.attachments).toEqual([]);
  });

  it('an image over limits.maxAttachmentBytes is refused naming it, nothing stored', async () => {
    writeFileSync(join(t.root, 'huge.png'), Buffer.concat([PNG, Buffer.alloc(50 * MAX)]));
    const id = await session();
    fake.script({ toolCalls: [read('r1', 'huge.png')] }, { text: 'too big' });
    await run(id);
    const req = fake.requests.at(-1)!;
    expect(afterAssistant(req)[0]!.content).toMatch(
      new RegExp(
        `huge\\.png is an image of ${PNG.length + 50 * MAX} bytes, over limits\\.maxAttachmentBytes \\(${MAX} bytes\\)`,
      ),
    );
    expect(imageUrls(req)).toEqual([]);
    expect((await request(t.url).get(`/v1/sessions/${id}/attachments`).expect(200)).body.attachments).toEqual([]);
  });

  it("symlinks out of the workspace (system files, another session's attachments, the data dir) are refused", async () => {
    // Another session holds an uploaded image in the data dir's attachment store.
    const other = await session();
    await request(t.url)
      .post(`/v1/sessions/${other}/attachments`)
      .set('content-type', 'image/png')
      .send(PNG)
      .expect(201);
    const tenantDir = join(t.dataDir, 'attachments', readdirSync(join(t.dataDir, 'attachments'))[0]!);
    const otherDir = join(tenantDir, other);
    const bin = readdirSync(otherDir).find((name) => name.endsWith('.bin'))!;
    mkdirSync(join(t.root, 'links'), { recursive: true });
    symlinkSync('/etc/passwd', join(t.root, 'links', 'passwd.png'));
    symlinkSync('/proc/self/environ', join(t.root, 'links', 'environ.png'));
    symlinkSync(join(otherDir, bin), join(t.root, 'links', 'other.png'));
    symlinkSync(otherDir, join(t.root, 'links', 'otherdir'));
    symlinkSync(t.dataDir, join(t.root, 'links', 'data'));
    const id = await session();
    const paths = ['links/passwd.png', 'links/environ.png', 'links/other.png', `links/otherdir/${bin}`, 'links/data'];
    fake.script({ toolCalls: paths.map((p, i) => read(`r${i}`, p)) }, { text: 'refused' });
    await run(id);
    const req = fake.requests.at(-1)!;
    const after = afterAssistant(req);
    expect(after.map((m) => m.role)).toEqual(paths.map(() => 'tool'));
    for (const message of after) expect(message.content).toMatch(/outside the workspace|not found|does not exist/i);
    expect(imageUrls(req)).toEqual([]);
    expect(req.raw).not.toContain('root:x:0:0');
    expect(req.raw).not.toContain(PNG.toString('base64'));
    expect((await request(t.url).get(`/v1/sessions/${id}/attachments`).expect(200)).body.attachments).toEqual([]);
  });

  it('images read count in the window of the 8 most recent: a ninth turns the oldest into a placeholder', async () => {
    for (let i = 0; i < 9; i++) writeFileSync(join(t.root, `p${i}.png`), Buffer.concat([PNG, Buffer.from([i])]));
    const id = await session();
    fake.script({ toolCalls: Array.from({ length: 9 }, (_, i) => read(`r${i}`, `p${i}.png`)) }, { text: 'nine' });
    await run(id);
    const req = fake.requests.at(-1)!;
    const urls = imageUrls(req);
    expect(urls).toHaveLength(8);
    expect(urls[0]).toBe(`data:image/png;base64,${Buffer.concat([PNG, Buffer.from([1])]).toString('base64')}`);
    const user = afterAssistant(req).at(-1)!;
    const texts = (user.content as Array<{ type: string; text?: string }>).filter((p) => p.type === 'text');
    expect(texts[1]!.text).toMatch(
      /^\[image "p0\.png" \(att_[0-9a-f]{32}\) \(image\/png\) not shown: only the 8 most recent images stay in the context\]$/,
    );
  });
});
