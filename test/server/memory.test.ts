import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import type { MemoryItem } from '../../src/protocol/memory.js';
import { createSession, ofType, runAndWait, runEvents, useTestServers } from '../support/run-helpers.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { tempDir } from '../support/test-server.js';

const start = useTestServers();

async function remember(
  url: string,
  id: string,
  body: Record<string, unknown>,
  kind = 'success',
  headers: Record<string, string> = {},
): Promise<MemoryItem> {
  const res = await request(url).post(`/v1/sessions/${id}/memory/${kind}`).set(headers).send(body).expect(201);
  return (res.body as { item: MemoryItem }).item;
}

async function items(url: string, path: string, headers: Record<string, string> = {}): Promise<MemoryItem[]> {
  const res = await request(url).get(path).set(headers).expect(200);
  return (res.body as { items: MemoryItem[] }).items;
}

async function trace(url: string, id: string): Promise<EventEnvelope[]> {
  const res = await request(url).get(`/v1/sessions/${id}/trace?after=0&limit=1000`).expect(200);
  return (res.body as { events: EventEnvelope[] }).events;
}

describe('memory over HTTP', () => {
  it('remembers success and failure, recalls recent, similar and by tags, counts the tiers and emits the seed events', async () => {
    const t = await start();
    const id = await createSession(t, { memoryStore: { type: 'memory' } });
    const info = await request(t.url).get(`/v1/sessions/${id}`).expect(200);
    expect(info.body.session.hasMemory).toBe(true);

    const success = await remember(t.url, id, {
      task: 'Build the Release',
      tools: ['bash', 'read'],
      result: 'built v1.2',
    });
    expect(success).toMatchObject({
      content: 'Success: Build the Release\nTools: bash, read\nResult: built v1.2',
      importance: 0.8,
      tags: ['success', 'pattern'],
      memory_type: 'procedural',
      metadata: { prompt: 'Build the Release', tools: ['bash', 'read'] },
      access_count: 0,
    });
    expect(success.id).toMatch(/^mem_/);
    const failure = await remember(
      t.url,
      id,
      { task: 'deploy to prod', error: 'permission denied', tools: ['bash'] },
      'failure',
    );
    expect(failure).toMatchObject({
      content: 'Failure: deploy to prod\nError: permission denied\nAttempted tools: bash',
      importance: 0.9,
      tags: ['failure', 'avoid'],
      memory_type: 'episodic',
      metadata: { prompt: 'deploy to prod', error: 'permission denied' },
    });

    const recent = await items(t.url, `/v1/sessions/${id}/memory/recent?limit=10`);
    expect(recent.map((i) => i.id)).toEqual([failure.id, success.id]);
    expect((await items(t.url, `/v1/sessions/${id}/memory/recent?limit=1`)).map((i) => i.id)).toEqual([failure.id]);

    const similar = await items(t.url, `/v1/sessions/${id}/memory/similar?query=build%20the%20release`);
    expect(similar.map((i) => i.id)).toEqual([success.id]);
    expect(similar[0]).toMatchObject({ access_count: 1 });
    expect(similar[0].last_accessed).toBeGreaterThan(0);
    expect(await items(t.url, `/v1/sessions/${id}/memory/similar?query=nothing-like-this`)).toEqual([]);

    // Failures are more important (0.9) than successes (0.8): first by relevance.
    const tagged = await items(t.url, `/v1/sessions/${id}/memory/tags?tags=avoid,pattern`);
    expect(tagged.map((i) => i.id)).toEqual([failure.id, success.id]);
    expect(await items(t.url, `/v1/sessions/${id}/memory/tags?tags=bash`)).toEqual([]);

    const stats = await request(t.url).get(`/v1/sessions/${id}/memory/stats`).expect(200);
    expect(stats.body).toEqual({ longTermCount: 2, shortTermCount: 2, workingCount: 2 });

    const events = await trace(t.url, id);
    expect(ofType(events, 'memory_stored').map((e) => e.payload)).toEqual([
      { memory_id: success.id, memory_type: 'procedural', importance: 0.8, tags: ['success', 'pattern'] },
      { memory_id: failure.id, memory_type: 'episodic', importance: 0.9, tags: ['failure', 'avoid'] },
    ]);
    const recalled = ofType(events, 'memory_recalled');
    expect(recalled[0].payload).toMatchObject({ memory_id: success.id, content: success.content });
    // A fresh item: relevance = 0.8*0.7 + ~1*0.3.
    expect((recalled[0].payload as { relevance: number }).relevance).toBeCloseTo(0.86, 2);
    expect(ofType(events, 'memories_searched').map((e) => e.payload)).toEqual([
      { query: 'build the release', tags: [], result_count: 1 },
      { query: 'nothing-like-this', tags: [], result_count: 0 },
      { query: null, tags: ['avoid', 'pattern'], result_count: 2 },
      { query: null, tags: ['bash'], result_count: 0 },
    ]);
  });

  it('answers bad input with a 400 naming the field, and a session without memory with 409 MEMORY_NOT_CONFIGURED', async () => {
    const t = await start();
    const id = await createSession(t, { memoryStore: { type: 'memory', namespace: 'team-1' } });
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['success', { task: '', tools: [], result: 'x' }, 'body.task'],
      ['success', { task: 'x', tools: [], result: 'y'.repeat(20_001) }, 'body.result'],
      ['success', { task: 'x', tools: 'bash', result: 'y' }, 'body.tools'],
      ['failure', { task: 'x', tools: [] }, 'body.error'],
    ];
    for (const [kind, body, field] of cases) {
      const res = await request(t.url).post(`/v1/sessions/${id}/memory/${kind}`).send(body).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message.startsWith(field)).toBe(true);
    }
    for (const [path, field] of [
      ['recent?limit=0', 'query.limit'],
      ['recent?limit=abc', 'query.limit'],
      ['similar?limit=3', 'query.query'],
      ['tags?tags=,', 'query.tags'],
      ['recent?limit=101', 'query.limit'],
    ]) {
      const res = await request(t.url).get(`/v1/sessions/${id}/memory/${path}`).expect(400);
      expect(res.body.error.message.startsWith(field)).toBe(true);
    }
    const badNamespace = await request(t.url)
      .post('/v1/sessions')
      .send({ memoryStore: { type: 'file', namespace: '../other' } })
      .expect(400);
    expect(badNamespace.body.error.message).toContain('memoryStore.namespace');
    const badType = await request(t.url)
      .post('/v1/sessions')
      .send({ memoryStore: { type: 'sqlite' } })
      .expect(400);
    expect(badType.body.error.message).toContain('memoryStore.type');

    const plain = await createSession(t);
    expect((await request(t.url).get(`/v1/sessions/${plain}`).expect(200)).body.session.hasMemory).toBe(false);
    const res = await request(t.url).get(`/v1/sessions/${plain}/memory/recent`).expect(409);
    expect(res.body.error).toMatchObject({ code: 'MEMORY_NOT_CONFIGURED', details: { field: 'memoryStore' } });
    await request(t.url).get('/v1/sessions/no-such-session/memory/recent').expect(404);
  });

  it('shares `memory` memories between sessions of one tenant and namespace in the process, not across namespaces', async () => {
    const t = await start();
    const a = await createSession(t, { memoryStore: { type: 'memory', namespace: 'ns1' } });
    const b = await createSession(t, { memoryStore: { type: 'memory', namespace: 'ns1' } });
    const c = await createSession(t, { memoryStore: { type: 'memory', namespace: 'ns2' } });
    const item = await remember(t.url, a, { task: 'shared task', tools: [], result: 'ok' });
    expect((await items(t.url, `/v1/sessions/${b}/memory/recent`)).map((i) => i.id)).toEqual([item.id]);
    expect(await items(t.url, `/v1/sessions/${c}/memory/recent`)).toEqual([]);
  });

  it('keeps `file` memories across a server restart on the same data dir', async () => {
    const dataDir = tempDir('a3s-memdata-');
    const fake = await startFakeProvider();
    try {
      const first = await start({ dataDir, fake });
      const id = await createSession(first, { memoryStore: { type: 'file', namespace: 'release' } });
      const item = await remember(first.url, id, { task: 'cut release 7', tools: ['git'], result: 'tagged' });
      await first.close();

      const second = await start({ dataDir, fake });
      const other = await createSession(second, { memoryStore: { type: 'file', namespace: 'release' } });
      const recalled = await items(second.url, `/v1/sessions/${other}/memory/similar?query=RELEASE%207`);
      expect(recalled).toHaveLength(1);
      expect(recalled[0]).toMatchObject({ id: item.id, content: item.content, access_count: 1 });
      const stats = await request(second.url).get(`/v1/sessions/${other}/memory/stats`).expect(200);
      // Short-term and working tiers are the session's own; the long-term store survived.
      expect(stats.body).toEqual({ longTermCount: 1, shortTermCount: 0, workingCount: 0 });
    } finally {
      await fake.close();
    }
  });

  it("never lets a tenant recall another tenant's memory in the same namespace", async () => {
    const A = 'token-memory-tenant-a-00001';
    const B = 'token-memory-tenant-b-00001';
    const root = tempDir('a3s-memtenants-');
    mkdirSync(join(root, 'tenant-a'));
    mkdirSync(join(root, 'tenant-b'));
    const t = await start({
      root,
      config: {
        apiTokens: [
          { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
          { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
        ],
      },
    });
    const asA = { authorization: `Bearer ${A}` };
    const asB = { authorization: `Bearer ${B}` };
    for (const type of ['file', 'memory']) {
      const a = (
        await request(t.url)
          .post('/v1/sessions')
          .set(asA)
          .send({ workspace: join(root, 'tenant-a'), memoryStore: { type, namespace: 'shared' } })
          .expect(201)
      ).body.session.id as string;
      const b = (
        await request(t.url)
          .post('/v1/sessions')
          .set(asB)
          .send({ workspace: join(root, 'tenant-b'), memoryStore: { type, namespace: 'shared' } })
          .expect(201)
      ).body.session.id as string;
      await remember(
        t.url,
        a,
        { task: `secret plan of tenant a (${type})`, tools: [], result: 'A-ONLY' },
        'success',
        asA,
      );
      expect(await items(t.url, `/v1/sessions/${b}/memory/recent`, asB)).toEqual([]);
      expect(await items(t.url, `/v1/sessions/${b}/memory/similar?query=secret`, asB)).toEqual([]);
      expect(await items(t.url, `/v1/sessions/${b}/memory/tags?tags=success`, asB)).toEqual([]);
      // Another tenant's session is not found, whatever the route.
      await request(t.url).get(`/v1/sessions/${a}/memory/recent`).set(asB).expect(404);
      expect((await items(t.url, `/v1/sessions/${a}/memory/recent`, asA)).map((i) => i.content)).toEqual([
        `Success: secret plan of tenant a (${type})\nTools: \nResult: A-ONLY`,
      ]);
    }
  });

  it('puts recalled memories into the provider request of a run and records each completed run', async () => {
    const t = await start({ files: { 'notes.txt': 'hello' } });
    const id = await createSession(t, { memoryStore: { type: 'file', namespace: 'ctx' } });
    const earlier = await remember(t.url, id, {
      task: 'summarise notes.txt',
      tools: ['read'],
      result: 'it says hello',
    });
    t.fake.script(
      {
        toolCalls: [{ id: 'c1', name: 'read', arguments: { file_path: 'notes.txt' } }],
        expect: (req) => {
          const system = req.body.messages[0];
          expect(system.role).toBe('system');
          expect(String(system.content)).toContain('## Relevant memory');
          expect(String(system.content)).toContain(
            'Success: summarise notes.txt | Tools: read | Result: it says hello',
          );
        },
      },
      { text: 'The file says hello.' },
    );
    const run = await runAndWait(t, id, 'summarise notes.txt');
    expect(run.result.text).toBe('The file says hello.');
    t.fake.assertDone();

    const recent = await items(t.url, `/v1/sessions/${id}/memory/recent`);
    expect(recent).toHaveLength(2);
    expect(recent[0]).toMatchObject({
      content: 'Success: summarise notes.txt\nTools: read\nResult: The file says hello.',
      metadata: { prompt: 'summarise notes.txt', tools: ['read'] },
      tags: ['success', 'pattern'],
    });
    const events = await runEvents(t, id, run.runId);
    expect(ofType(events, 'memory_recalled').map((e) => (e.payload as { memory_id: string }).memory_id)).toEqual([
      earlier.id,
    ]);
    expect(ofType(events, 'memories_searched')[0].payload).toEqual({
      query: 'summarise notes.txt',
      tags: [],
      result_count: 1,
    });
    expect(ofType(events, 'memory_stored').map((e) => (e.payload as { memory_id: string }).memory_id)).toEqual([
      recent[0].id,
    ]);

    // Nothing recalled: the system prompt carries no memory section.
    t.fake.script({
      text: 'ok',
      expect: (req) => expect(String(req.body.messages[0].content)).not.toContain('Relevant memory'),
    });
    await runAndWait(t, id, 'unrelated question');
    t.fake.assertDone();
  });
});
