import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('Redis restarted during a run', () => {
  let redis: RedisServerHandle;
  let t: TestServer;
  beforeAll(async () => {
    redis = await startRedisServer();
    t = await startTestServer({
      files: { 'a.txt': 'alpha\n' },
      config: { redisUrl: redis.url, redisKeyPrefix: 'restart:' },
    });
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
  });

  it('the run goes on; failed checkpoint and snapshot saves are reported clearly; saves work again once Redis is back', async () => {
    await request(t.url).post('/v1/sessions').send({ sessionId: 'r1', autoSave: true }).expect(201);
    t.fake.script(
      { toolCalls: [{ id: 'rr', name: 'read', arguments: { file_path: 'a.txt' } }], delayMs: 1500 },
      { text: 'done anyway' },
    );
    const started = await request(t.url).post('/v1/sessions/r1/runs').send({ input: 'go' }).expect(202);
    // Redis goes away while the provider is thinking: the checkpoint after the tool round and the autosave fail.
    await t.fake.waitForRequests(1, 10_000);
    await redis.restart({ downMs: 2500 });
    let run;
    for (let i = 0; i < 200; i++) {
      const res = await request(t.url).get(`/v1/sessions/r1/runs/${started.body.runId}`);
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
      run = res.body.run;
      if (run.status === 'completed' || run.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(run?.status).toBe('completed');
    const events = (
      await request(t.url).get(`/v1/sessions/r1/runs/${started.body.runId}/events?after=-1&limit=1000`).expect(200)
    ).body.events as { type: string; payload: { message?: string } }[];
    const failures = events.filter((e) => e.type === 'persistence_failed');
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0].payload).toMatchObject({
      session_id: expect.any(String),
      operation: expect.stringMatching(/^(save|checkpoint)$/),
      error: expect.stringMatching(/r1|run_/),
    });
    // Redis is back (empty: it keeps nothing on disk): an explicit save writes one complete generation again.
    const saved = await request(t.url).post('/v1/sessions/r1/save').expect(200);
    expect(saved.body.generation).toBeGreaterThan(1);
    const history = (await request(t.url).get('/v1/sessions/r1/history').expect(200)).body.messages;
    expect(history.at(-1)).toEqual({ role: 'assistant', content: 'done anyway' });
  });
});
