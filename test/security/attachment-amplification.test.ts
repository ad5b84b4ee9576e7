import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXT_WINDOW_BYTES } from '../../src/runtime/attachments/attachment-parts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// Red team (2026-12-07): one uploaded text file named by every part of a run (100 parts), then again by the next
// run. Was a hole: every reference was read and inlined, so a 1 MiB file made a 100 MiB provider request (a 20 MiB
// one 2 GB, past the heap of the server all tenants share), and every later turn of the session rebuilt it.
const A = 'token-att-amplify-tenant-a';
const auth = { authorization: `Bearer ${A}` };
const MIB = 1024 * 1024;

interface Part {
  type: string;
  text?: string;
}

describe('text attachments in a provider request are bounded, however often they are named', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: { apiTokens: [{ token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }] },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('100 parts naming one 1 MiB file carry at most TEXT_WINDOW_BYTES of it; the rest are placeholders', async () => {
    await request(t.url).post('/v1/sessions').set(auth).send({ sessionId: 'amp' }).expect(201);
    const text = 'q'.repeat(MIB);
    const up = await request(t.url)
      .post('/v1/sessions/amp/attachments?name=big.txt')
      .set(auth)
      .set('content-type', 'text/plain')
      .send(Buffer.from(text))
      .expect(201);
    const part = { type: 'file', name: 'big.txt', mediaType: 'text/plain', attachmentId: up.body.attachmentId };
    t.fake.script({ text: 'one' }, { text: 'two' });
    await request(t.url)
      .post('/v1/sessions/amp/runs')
      .set(auth)
      .send({ input: 'read', wait: true, attachments: Array(100).fill(part) })
      .expect(200);
    await request(t.url)
      .post('/v1/sessions/amp/runs')
      .set(auth)
      .send({ input: 'again', wait: true, attachments: [part] })
      .expect(200);
    t.fake.assertDone();
    const window = TEXT_WINDOW_BYTES / MIB;
    const parts = (i: number): Part[] =>
      t.fake.requests[i]!.body.messages.filter((m) => Array.isArray(m.content)).flatMap((m) => m.content as Part[]);
    const inlined = (i: number) => parts(i).filter((p) => p.text === `big.txt:\n${text}`).length;
    const placeholders = (i: number) =>
      parts(i).filter((p) => p.text?.includes('not shown: only the most recent')).length;
    expect([inlined(0), placeholders(0)]).toEqual([window, 100 - window]);
    // The second run's request: the newest reference is inlined, the window is the same size.
    expect([inlined(1), placeholders(1)]).toEqual([window, 101 - window]);
    expect(parts(1).at(-1)?.text).toBe(`big.txt:\n${text}`);
    expect(JSON.stringify(t.fake.requests[1]!.body).length).toBeLessThan(TEXT_WINDOW_BYTES + MIB);
  });
});
