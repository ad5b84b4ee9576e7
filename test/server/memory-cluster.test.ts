import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { MemoryItem } from '../../src/protocol/memory.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { createSession, useTestServers } from '../support/run-helpers.js';
import { redisServerConfig } from '../support/redis-target.js';

const start = useTestServers();

describe('memory on Redis', () => {
  it('a memory remembered on one node is recalled on another (file = Redis with REDIS_URL)', async () => {
    const fake = await startFakeProvider();
    try {
      const shared = { ...redisServerConfig(), redisKeyPrefix: `a3s-mem-${Math.random().toString(36).slice(2)}:` };
      const a = await start({ fake, config: shared });
      const b = await start({ fake, config: shared });
      const onA = await createSession(a, { memoryStore: { type: 'file', namespace: 'fleet' } });
      const onB = await createSession(b, { memoryStore: { type: 'file', namespace: 'fleet' } });
      const stored = (
        await request(a.url)
          .post(`/v1/sessions/${onA}/memory/failure`)
          .send({ task: 'migrate db', error: 'lock timeout', tools: ['bash'] })
          .expect(201)
      ).body.item as MemoryItem;
      const recalled = (await request(b.url).get(`/v1/sessions/${onB}/memory/similar?query=LOCK%20TIMEOUT`).expect(200))
        .body.items as MemoryItem[];
      expect(recalled.map((i) => [i.id, i.content, i.access_count])).toEqual([
        [stored.id, 'Failure: migrate db\nError: lock timeout\nAttempted tools: bash', 1],
      ]);
      // The access B recorded is visible on A: one shared store.
      const onAagain = (await request(a.url).get(`/v1/sessions/${onA}/memory/recent`).expect(200)).body
        .items as MemoryItem[];
      expect(onAagain[0]).toMatchObject({ id: stored.id, access_count: 1 });
      // `memory` stays in its process.
      const local = await createSession(b, { memoryStore: { type: 'memory', namespace: 'fleet' } });
      expect((await request(b.url).get(`/v1/sessions/${local}/memory/recent`).expect(200)).body.items).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});
