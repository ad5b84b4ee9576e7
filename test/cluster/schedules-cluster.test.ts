import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schedule } from '../../src/protocol/schedules.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { FakeScheduleClock } from '../support/fake-schedule-clock.js';
import { connectRedisTarget, redisServerConfig } from '../support/redis-target.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { at, createSchedule, runEnded, sessionRuns, T0 } from '../schedules/schedule-helpers.js';

/**
 * Wait (2 s of real time) for the tick at `tickAtMs` to be recorded, then move the shared clock on a second at a time
 * (the nodes' retry timers) until it is; `retries` is how many such moves it took.
 */
async function tickRecorded(
  clock: FakeScheduleClock,
  t: TestServer,
  id: string,
  tickAtMs: number,
  maxSteps = 20,
): Promise<Schedule & { retries: number }> {
  const read = async () => (await request(t.url).get(`/v1/schedules/${id}`).expect(200)).body.schedule as Schedule;
  for (let wait = 0; wait < 20; wait++) {
    const schedule = await read();
    if (schedule.lastTick?.tickAtMs === tickAtMs) return { ...schedule, retries: 0 };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (let step = 1; step <= maxSteps; step++) {
    clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const schedule = await read();
    if (schedule.lastTick?.tickAtMs === tickAtMs) return { ...schedule, retries: step };
  }
  throw new Error(`the tick at ${new Date(tickAtMs).toISOString()} was not recorded`);
}

describe('a tick runs on one node of a cluster: its lease in Redis, its run idempotent', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  let prefix: string;
  const clock = new FakeScheduleClock(T0);
  beforeAll(async () => {
    fake = await startFakeProvider();
    prefix = `a3s-sched-${Math.random().toString(36).slice(2)}:`;
    const config = { ...redisServerConfig(), redisKeyPrefix: prefix };
    // Both nodes read the same clock: every tick falls due on both at once.
    a = await startTestServer({ fake, scheduleClock: clock, config: { ...config, nodeId: 'node-a' } });
    b = await startTestServer({ fake, scheduleClock: clock, config: { ...config, nodeId: 'node-b' } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('five ticks due on two nodes start five runs, each once, whichever node runs them', async () => {
    const { schedule } = await createSchedule(a, { name: 'everyone', cron: '* * * * *', input: 'once' });
    // Made on A, seen on B: one store.
    expect((await request(b.url).get(`/v1/schedules/${schedule.id}`).expect(200)).body.schedule.id).toBe(schedule.id);
    const nodes: string[] = [];
    for (let minute = 1; minute <= 5; minute++) {
      const tickAt = T0 - 30_000 + minute * 60_000;
      fake.script({ text: `run ${minute}` });
      clock.set(tickAt);
      const ticked = await tickRecorded(clock, minute % 2 === 0 ? a : b, schedule.id, tickAt);
      expect(ticked.lastTick).toMatchObject({ outcome: 'started' });
      nodes.push(ticked.lastTick!.nodeId!);
      // Once the session lives on a node, the other leaves the tick to it: no lease lost to a node that defers.
      if (minute > 1) expect(ticked.retries).toBe(0);
      await runEnded(a, 'schedule:everyone', ticked.lastTick!.runId!);
    }
    const runs = await sessionRuns(b, 'schedule:everyone');
    expect(runs.map((r) => r.result?.text)).toEqual(['run 1', 'run 2', 'run 3', 'run 4', 'run 5']);
    expect(new Set(runs.map((r) => r.idempotencyKey)).size).toBe(5);
    expect(fake.requests).toHaveLength(5);
    expect(['node-a', 'node-b']).toContain(nodes[0]);
    // The first tick made the session on the node that ran it; every later tick ran there, where the session lives.
    expect(new Set(nodes).size).toBe(1);
    fake.assertDone();
    await request(b.url).delete(`/v1/schedules/${schedule.id}`).expect(200);
  });

  it('a node that took a tick and died does not lose it: its lease expires and another node runs it once', async () => {
    const { schedule } = await createSchedule(b, { name: 'orphan', cron: '*/10 * * * *', input: 'not lost' });
    const redis = connectRedisTarget();
    const tickAt = at('00:10:00');
    try {
      // A node took this tick's lease (for 1.5 s, real time) and then died before it ran anything.
      const taken = await redis.set(
        `${prefix}{schedules}:lease:${schedule.id}:${tickAt}`,
        'node-dead',
        'PX',
        1_500,
        'NX',
      );
      expect(taken).toBe('OK');
      fake.script({ text: 'picked up' });
      clock.set(tickAt);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Held by the dead node: nobody has run it.
      expect((await request(a.url).get(`/v1/schedules/${schedule.id}`).expect(200)).body.schedule.lastTick).toBeNull();
      const ticked = await tickRecorded(clock, a, schedule.id, tickAt);
      expect(ticked.lastTick).toMatchObject({ outcome: 'started' });
      expect(['node-a', 'node-b']).toContain(ticked.lastTick!.nodeId);
      await runEnded(a, 'schedule:orphan', ticked.lastTick!.runId!);
      expect(await sessionRuns(a, 'schedule:orphan')).toHaveLength(1);
      fake.assertDone();
      await request(a.url).delete(`/v1/schedules/${schedule.id}`).expect(200);
    } finally {
      redis.disconnect();
    }
  });

  it('a trigger on the node that does not own the session is forwarded to the one that does', async () => {
    const { schedule } = await createSchedule(a, { name: 'fwd', cron: '0 0 1 1 *', input: 'forwarded' });
    fake.script({ text: 'first' }, { text: 'second' });
    const first = await request(a.url).post(`/v1/schedules/${schedule.id}/trigger`).expect(200);
    expect(first.body.tick).toMatchObject({ outcome: 'started', nodeId: 'node-a' });
    await runEnded(a, 'schedule:fwd', first.body.run.runId);
    // The session lives on A: B forwards the trigger there.
    const second = await request(b.url).post(`/v1/schedules/${schedule.id}/trigger`).expect(200);
    expect(second.body.tick).toMatchObject({ outcome: 'started', nodeId: 'node-a' });
    await runEnded(b, 'schedule:fwd', second.body.run.runId);
    expect(await sessionRuns(b, 'schedule:fwd')).toHaveLength(2);
    fake.assertDone();
  });
});
