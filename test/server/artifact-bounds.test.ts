import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { LimitsSchema } from '../../src/config/limits-config.js';
import { FileSessionStore } from '../../src/stores/file-session-store.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { sessionKey } from '../../src/stores/session-key.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(options: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const t = await startTestServer(options);
  servers.push(t);
  return t;
}

/** A host-direct bash call whose output (about 2 KiB, tagged) the 1 KiB output cap cuts; returns the artifact id. */
async function cutOutput(t: TestServer, id: string, tag: string): Promise<string> {
  const out = await request(t.url)
    .post(`/v1/sessions/${id}/tools/bash`)
    .send({ args: { command: `for i in $(seq 40); do echo "${tag} $i ${'y'.repeat(40)}"; done` } })
    .expect(200);
  expect(out.body.truncated).toBe(true);
  expect(typeof out.body.artifactId).toBe('string');
  return String(out.body.artifactId);
}

async function snapshotArtifacts(t: TestServer, id: string): Promise<string[]> {
  await request(t.url).post(`/v1/sessions/${id}/save`).expect(200);
  const snapshot = await new FileSessionStore({ dir: join(t.dataDir, 'sessions') }).load(sessionKey('default', id));
  return (snapshot?.artifacts ?? []).map((a) => a.id);
}

describe('artifact bounds per session', () => {
  it('keeps only the newest artifacts (count bound); an evicted one answers a 404 naming the bound; the snapshot holds only the kept ones', async () => {
    const t = await start({
      config: { limits: LimitsSchema.parse({ toolOutputBytes: 1024, maxArtifactsPerSession: 2 }) },
    });
    const id = (await request(t.url).post('/v1/sessions').send({ sessionId: 'bounded' }).expect(201)).body.session
      .id as string;
    const ids = [];
    for (const tag of ['first', 'second', 'third']) ids.push(await cutOutput(t, id, tag));

    const evicted = await request(t.url).get(`/v1/sessions/${id}/artifacts/${ids[0]}`).expect(404);
    expect(evicted.body.error.code).toBe('NOT_FOUND');
    expect(evicted.body.error.message).toContain('evicted');
    expect(evicted.body.error.message).toContain('limits.maxArtifactsPerSession');
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/artifacts/${ids[1]}`).expect(200)).body.artifact.content,
    ).toContain('second 40');
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/artifacts/${ids[2]}`).expect(200)).body.artifact.content,
    ).toContain('third 40');
    const unknown = await request(t.url).get(`/v1/sessions/${id}/artifacts/art_unknown`).expect(404);
    expect(unknown.body.error.message).not.toContain('evicted');

    expect(await snapshotArtifacts(t, id)).toEqual([ids[1], ids[2]]);
  });

  it('evicts by total bytes, and a snapshot saved under larger bounds is trimmed to the newest on resume', async () => {
    const first = await start({ config: { limits: LimitsSchema.parse({ toolOutputBytes: 1024 }) } });
    const id = (await request(first.url).post('/v1/sessions').send({ sessionId: 'older' }).expect(201)).body.session
      .id as string;
    const ids = [];
    for (const tag of ['a', 'b', 'c']) ids.push(await cutOutput(first, id, tag));
    expect(await snapshotArtifacts(first, id)).toEqual(ids);
    const { dataDir, root } = first;
    await first.close();
    servers.splice(0);

    // Each artifact is about 1.9 KB: 4 KB of artifact bytes keeps two.
    const second = await start({
      dataDir,
      root,
      config: { limits: LimitsSchema.parse({ toolOutputBytes: 1024, maxArtifactBytesPerSession: 4096 }) },
    });
    await request(second.url).post('/v1/sessions').send({ sessionId: id, resume: true }).expect(201);
    expect(
      (await request(second.url).get(`/v1/sessions/${id}/artifacts/${ids[0]}`).expect(404)).body.error.message,
    ).toContain('limits.maxArtifactBytesPerSession');
    await request(second.url).get(`/v1/sessions/${id}/artifacts/${ids[2]}`).expect(200);
    const next = await cutOutput(second, id, 'd');
    await request(second.url).get(`/v1/sessions/${id}/artifacts/${ids[1]}`).expect(404);
    expect(await snapshotArtifacts(second, id)).toEqual([ids[2], next]);
  });

  it('an output larger than the whole byte bound is cut and not kept, and the result says so', async () => {
    const t = await start({
      config: { limits: LimitsSchema.parse({ toolOutputBytes: 1024, maxArtifactBytesPerSession: 1500 }) },
    });
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id as string;
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/tools/bash`)
      .send({ args: { command: `for i in $(seq 40); do echo "big $i ${'y'.repeat(40)}"; done` } })
      .expect(200);
    expect(out.body.truncated).toBe(true);
    expect(out.body.artifactId).toBeNull();
    expect(out.body.output).toContain('larger than limits.maxArtifactBytesPerSession and was not kept');
  });
});
