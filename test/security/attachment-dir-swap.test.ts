import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directorySwapBody, fileSwapBody, startSwapLoop, treeSnapshot } from '../support/swap-loop.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// The file attachment store under attack (2026-12-07): two sessions-only tenants with the same session ids, and a
// local attacker who plants symlinks (and hard links) in the data directory where a session's attachments lie,
// or keeps swapping them while the server writes and reads. Writes must never land outside the session's own
// directory, reads never serve another file. Was a hole: the store joined paths and followed every symlink.
const A = 'token-att-swap-tenant-a-01';
const B = 'token-att-swap-tenant-b-01';
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
];
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
interface ErrorBody {
  error: { code: string };
}
const A_SECRET = 'TENANT-A-ATTACHMENT-SECRET-7f31c2';

describe('the file attachment store confines by what it opened', () => {
  let t: TestServer;
  let attachments: string;
  let aId: string;
  let aTree: Record<string, string>;

  const upload = (token: string, session: string, text: string, name = 'notes.txt') =>
    request(t.url)
      .post(`/v1/sessions/${session}/attachments?name=${name}`)
      .set(auth(token))
      .set('content-type', 'text/plain')
      .send(Buffer.from(text));
  const download = (token: string, session: string, id: string) =>
    request(t.url)
      .get(`/v1/sessions/${session}/attachments/${id}`)
      .set(auth(token))
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks).toString('utf8')));
      });
  const list = (token: string, session: string) =>
    request(t.url).get(`/v1/sessions/${session}/attachments`).set(auth(token));
  /** Everything B can get out of its session `session`: the listing and each attachment it lists or names. */
  const bSees = async (session: string, ids: string[] = [aId]): Promise<string> => {
    const listed = await list(B, session);
    const named = [
      ...ids,
      ...((listed.body.attachments ?? []) as Array<{ attachmentId: string }>).map((a) => a.attachmentId),
    ];
    const bodies = await Promise.all(named.map(async (id) => (await download(B, session, id)).body as string));
    return JSON.stringify(listed.body) + bodies.join('\n');
  };
  const aUntouched = () => expect(treeSnapshot(join(attachments, 'tenant-a'))).toEqual(aTree);

  beforeAll(async () => {
    t = await startTestServer({ config: { apiTokens: TOKENS } });
    attachments = join(t.dataDir, 'attachments');
    for (const token of [A, B])
      for (const sessionId of ['shared', 'other', 'root', 'files', 'loop', 'bytes'])
        await request(t.url).post('/v1/sessions').set(auth(token)).send({ sessionId }).expect(201);
    aId = (await upload(A, 'shared', A_SECRET).expect(201)).body.attachmentId as string;
    await upload(A, 'other', A_SECRET).expect(201);
    aTree = treeSnapshot(join(attachments, 'tenant-a'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it("B's session directory planted as a symlink to A's: B neither lists, reads, writes nor purges A's", async () => {
    const bDir = join(attachments, 'tenant-b', 'shared');
    mkdirSync(join(attachments, 'tenant-b'), { recursive: true });
    symlinkSync(join(attachments, 'tenant-a', 'shared'), bDir);
    try {
      expect(await bSees('shared')).not.toContain(A_SECRET);
      const up = await upload(B, 'shared', 'from b');
      expect(up.status).toBe(500);
      expect(up.body.error.code).toBe('PERSISTENCE_FAILED');
      aUntouched();
      await request(t.url).delete('/v1/sessions/shared?purge=true').set(auth(B)).expect(200);
      aUntouched();
      // The planted link is what the purge removed: it, not what it points at.
      expect(existsSync(bDir)).toBe(false);
    } finally {
      rmSync(bDir, { force: true });
    }
  });

  it("B's tenant directory planted as a symlink to A's: the same session id of B reaches nothing of A", async () => {
    const bTenant = join(attachments, 'tenant-b');
    rmSync(bTenant, { recursive: true, force: true });
    symlinkSync(join(attachments, 'tenant-a'), bTenant);
    try {
      expect(await bSees('other')).not.toContain(A_SECRET);
      expect((await upload(B, 'other', 'from b')).status).toBe(500);
      await request(t.url).delete('/v1/sessions/other?purge=true').set(auth(B)).expect(200);
      aUntouched();
    } finally {
      unlinkSync(bTenant);
    }
  });

  it("B's session directory planted as a symlink to /: nothing is written to / nor read from it", async () => {
    mkdirSync(join(attachments, 'tenant-b'), { recursive: true });
    const bDir = join(attachments, 'tenant-b', 'root');
    symlinkSync('/', bDir);
    const before = readdirSync('/').sort();
    try {
      expect((await upload(B, 'root', 'into the root')).status).toBe(500);
      expect((await list(B, 'root')).text).not.toContain('etc');
      expect(readdirSync('/').sort()).toEqual(before);
    } finally {
      unlinkSync(bDir);
    }
  });

  it("an attachment's files replaced by links elsewhere or edited are never served as another file", async () => {
    const bDir = join(attachments, 'tenant-b', 'files');
    const aDir = join(attachments, 'tenant-a', 'shared');
    const mine = (await upload(B, 'files', 'x'.repeat(A_SECRET.length)).expect(201)).body.attachmentId as string;
    const bin = join(bDir, `${mine}.bin`);
    const json = join(bDir, `${mine}.json`);
    const original = readFileSync(json, 'utf8');
    expect((await download(B, 'files', mine).expect(200)).body).toBe('x'.repeat(A_SECRET.length));
    const refused = async (why: string) => {
      const res = await download(B, 'files', mine);
      expect(res.status, why).toBe(404);
      expect(res.body, why).not.toContain(A_SECRET);
    };
    // The bytes: a symlink to A's bytes, to /etc/passwd, a hard link to A's bytes (same size), a FIFO.
    renameSync(bin, `${bin}.keep`);
    symlinkSync(join(aDir, `${aId}.bin`), bin);
    await refused('.bin symlinked to A');
    unlinkSync(bin);
    symlinkSync('/etc/passwd', bin);
    await refused('.bin symlinked to /etc/passwd');
    unlinkSync(bin);
    linkSync(join(aDir, `${aId}.bin`), bin);
    await refused('.bin hard-linked to A');
    unlinkSync(bin);
    renameSync(`${bin}.keep`, bin);
    // The reference: a symlink to A's, or edited to name A's id; A's id planted in B's directory as links.
    unlinkSync(json);
    symlinkSync(join(aDir, `${aId}.json`), json);
    await refused('.json symlinked to A');
    unlinkSync(json);
    writeFileSync(json, original.replace(mine, aId));
    await refused('.json naming A');
    symlinkSync(join(aDir, `${aId}.json`), join(bDir, `${aId}.json`));
    symlinkSync(join(aDir, `${aId}.bin`), join(bDir, `${aId}.bin`));
    expect(await bSees('files', [aId])).not.toContain(A_SECRET);
    // A type no upload lets through, edited in: served as bytes, still only as a download.
    writeFileSync(json, JSON.stringify({ ...JSON.parse(original), mediaType: 'application/x-evil' }));
    const served = await download(B, 'files', mine).expect(200);
    expect(served.headers['content-type']).toBe('application/octet-stream');
    expect(served.headers['content-disposition']).toMatch(/^attachment;/);
    aUntouched();
  });

  it("a session directory swapped for a symlink to A's in a loop while B uploads, lists and downloads", async () => {
    const bTenant = join(attachments, 'tenant-b');
    const mine = (await upload(B, 'loop', 'b-loop').expect(201)).body.attachmentId as string;
    const loop = startSwapLoop(bTenant, directorySwapBody('loop', join(attachments, 'tenant-a', 'shared'), 0.005));
    const seen: string[] = [];
    const listings: string[] = [];
    const statuses = new Set<string>();
    const end = Date.now() + 3000;
    try {
      while (Date.now() < end) {
        const [up, got, listed, foreign] = await Promise.all([
          upload(B, 'loop', 'b-during-the-loop'),
          download(B, 'loop', mine),
          list(B, 'loop'),
          download(B, 'loop', aId),
        ]);
        // A refused write or listing (the name is a symlink at that moment) is PERSISTENCE_FAILED; 413 once B's
        // session holds its 100 attachments.
        for (const res of [up, listed]) statuses.add(`${res.status} ${res.status === 500 ? res.body.error.code : ''}`);
        for (const res of [got, foreign])
          statuses.add(
            `${res.status} ${res.status === 500 ? (JSON.parse(String(res.body)) as ErrorBody).error.code : ''}`,
          );
        seen.push(String(got.body), String(foreign.body), listed.text);
        listings.push(listed.text);
      }
    } finally {
      expect(await loop.stop()).toBeGreaterThan(10);
    }
    expect(seen.join('\n')).not.toContain(A_SECRET);
    expect(listings.join('\n')).not.toContain(aId);
    const allowed = ['200 ', '201 ', '404 ', '413 ', '500 PERSISTENCE_FAILED'];
    expect([...statuses].filter((s) => !allowed.includes(s))).toEqual([]);
    aUntouched();
  });

  it("B's tenant directory swapped for a symlink to A's in a loop while B uploads, reads and purges its twin", async () => {
    for (const token of [A, B])
      await request(t.url).post('/v1/sessions').set(auth(token)).send({ sessionId: 'twin' }).expect(201);
    const twinId = (await upload(A, 'twin', A_SECRET).expect(201)).body.attachmentId as string;
    await upload(B, 'twin', 'b-twin').expect(201);
    aTree = treeSnapshot(join(attachments, 'tenant-a'));
    const loop = startSwapLoop(attachments, directorySwapBody('tenant-b', join(attachments, 'tenant-a'), 0.005));
    const seen: string[] = [];
    const end = Date.now() + 2500;
    try {
      while (Date.now() < end) {
        const [up, listed, foreign] = await Promise.all([
          upload(B, 'twin', 'b-during-the-loop'),
          list(B, 'twin'),
          download(B, 'twin', twinId),
        ]);
        expect([201, 413, 500]).toContain(up.status);
        seen.push(listed.text, String(foreign.body));
      }
      await request(t.url).delete('/v1/sessions/twin?purge=true').set(auth(B)).expect(200);
    } finally {
      expect(await loop.stop()).toBeGreaterThan(10);
      // Stopped between two renames, the loop may leave the real directory under its other name (and B's uploads
      // may have made a new tenant-b in the moment it was missing): put the real one back.
      const real = join(attachments, '.real-tenant-b');
      if (existsSync(real)) {
        rmSync(join(attachments, 'tenant-b'), { recursive: true, force: true });
        renameSync(real, join(attachments, 'tenant-b'));
      }
      rmSync(join(attachments, '.lnk-tenant-b'), { force: true });
    }
    expect(seen.join('\n')).not.toContain(A_SECRET);
    expect(seen.filter((text) => text.startsWith('{"attachments"')).join('\n')).not.toContain(twinId);
    aUntouched();
  });

  it("an attachment's bytes swapped for symlinks in a loop while B downloads them", async () => {
    const bDir = join(attachments, 'tenant-b', 'bytes');
    const text = 'y'.repeat(A_SECRET.length);
    const mine = (await upload(B, 'bytes', text).expect(201)).body.attachmentId as string;
    // The loop keeps the real file as a second link: a file with two links is not served either (it could be
    // any file of the same file system), so B's own downloads are 404 while the loop runs, never another file.
    linkSync(join(bDir, `${mine}.bin`), join(bDir, `.keep-${mine}.bin`));
    const loop = startSwapLoop(
      bDir,
      fileSwapBody(`${mine}.bin`, [join(attachments, 'tenant-a', 'shared', `${aId}.bin`), '/etc/passwd']),
    );
    const bodies: string[] = [];
    const end = Date.now() + 3000;
    try {
      while (Date.now() < end) {
        const got = await Promise.all([1, 2, 3, 4].map(() => download(B, 'bytes', mine)));
        for (const res of got) {
          expect([200, 404]).toContain(res.status);
          bodies.push(String(res.body));
        }
      }
    } finally {
      expect(await loop.stop()).toBeGreaterThan(10);
    }
    expect(bodies.join('\n')).not.toContain(A_SECRET);
    expect(bodies.join('\n')).not.toContain('root:');
    aUntouched();
  });
});
