import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { FakeScheduleClock } from '../support/fake-schedule-clock.js';
import { eventually, useTestServers } from '../support/run-helpers.js';
import { at, createSchedule, moveTo, runEnded, sessionRuns, T0, tickOf } from './schedule-helpers.js';

const start = useTestServers();

/** A server on a fake clock with a two-minute schedule of this overlap, and its first tick's run (still running). */
async function busySchedule(overlap: string, first: Record<string, unknown>) {
  const clock = new FakeScheduleClock(T0);
  const t = await start({ scheduleClock: clock });
  const { schedule } = await createSchedule(t, { name: overlap, cron: '*/2 * * * *', input: 'tick', overlap });
  t.fake.script({ text: 'first', ...first });
  await moveTo(clock, at('00:02:00'));
  const firstRunId = (await tickOf(t, schedule.id, at('00:02:00'))).lastTick!.runId!;
  await t.fake.waitForRequests(1);
  return { clock, t, schedule, firstRunId, sessionId: `schedule:${overlap}` };
}

describe('overlap: a tick while the schedule session still runs the last one', () => {
  it('skip: the tick is recorded skipped and starts nothing; the next tick after it runs', async () => {
    const { clock, t, schedule, firstRunId, sessionId } = await busySchedule('skip', { delayMs: 1_500 });
    await moveTo(clock, at('00:04:00'));
    const skipped = await tickOf(t, schedule.id, at('00:04:00'));
    expect(skipped.lastTick).toMatchObject({ outcome: 'skipped', error: { code: 'SESSION_BUSY' } });
    expect(skipped.lastTick!.runId).toBeUndefined();
    expect((await runEnded(t, sessionId, firstRunId)).status).toBe('completed');
    t.fake.script({ text: 'third' });
    await moveTo(clock, at('00:06:00'));
    const third = await tickOf(t, schedule.id, at('00:06:00'));
    await runEnded(t, sessionId, third.lastTick!.runId!);
    expect((await sessionRuns(t, sessionId)).map((r) => r.result?.text)).toEqual(['first', 'third']);
    t.fake.assertDone();
  });

  it('enqueue: the tick queues its run behind the active one, which then runs', async () => {
    const { clock, t, schedule, firstRunId, sessionId } = await busySchedule('enqueue', { delayMs: 1_500 });
    t.fake.script({ text: 'second' });
    await moveTo(clock, at('00:04:00'));
    const queued = await tickOf(t, schedule.id, at('00:04:00'));
    expect(queued.lastTick).toMatchObject({ outcome: 'queued', runId: expect.any(String) });
    const second = await runEnded(t, sessionId, queued.lastTick!.runId!);
    expect(second.status).toBe('completed');
    const first = await runEnded(t, sessionId, firstRunId);
    expect(first.status).toBe('completed');
    // One after the other: the queued run started once the first had ended.
    expect(second.createdAtMs).toBeGreaterThanOrEqual(first.createdAtMs);
    expect((await sessionRuns(t, sessionId)).map((r) => r.result?.text)).toEqual(['first', 'second']);
    t.fake.assertDone();
  });

  it('cancel_previous: the active run is cancelled and the tick runs', async () => {
    const { clock, t, schedule, firstRunId, sessionId } = await busySchedule('cancel_previous', { hang: true });
    t.fake.script({ text: 'replacement' });
    await moveTo(clock, at('00:04:00'));
    const tick = await tickOf(t, schedule.id, at('00:04:00'));
    expect(['started', 'queued']).toContain(tick.lastTick!.outcome);
    expect((await runEnded(t, sessionId, firstRunId)).status).toBe('cancelled');
    const replacement = await runEnded(t, sessionId, tick.lastTick!.runId!);
    expect(replacement).toMatchObject({ status: 'completed', result: { text: 'replacement' } });
    // The hanging request was aborted: the first run really stopped.
    await eventually(() => t.fake.requests[0]?.abortedAtMs !== undefined, 'the first request to be aborted');
    t.fake.assertDone();
  });

  it('trigger runs a tick now with the same overlap: started, then skipped while busy, a retried key finds its run', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock });
    const { schedule } = await createSchedule(t, { name: 'now', cron: '0 0 1 1 *', input: 'right now' });
    t.fake.script({ text: 'triggered', delayMs: 1_000 });
    const first = await request(t.url)
      .post(`/v1/schedules/${schedule.id}/trigger`)
      .set('Idempotency-Key', 'trigger-1')
      .expect(200);
    expect(first.body.tick).toMatchObject({ outcome: 'started', manual: true, tickAtMs: T0 });
    expect(first.body.run).toMatchObject({ input: 'right now', idempotencyKey: 'trigger-1' });
    const again = await request(t.url)
      .post(`/v1/schedules/${schedule.id}/trigger`)
      .set('Idempotency-Key', 'trigger-1')
      .expect(200);
    expect(again.body.run.runId).toBe(first.body.run.runId);
    const busy = await request(t.url).post(`/v1/schedules/${schedule.id}/trigger`).expect(200);
    expect(busy.body).toMatchObject({ tick: { outcome: 'skipped', error: { code: 'SESSION_BUSY' } }, run: null });
    await runEnded(t, 'schedule:now', first.body.run.runId);
    // A trigger leaves the cron's ticks as they were.
    const after = (await request(t.url).get(`/v1/schedules/${schedule.id}`).expect(200)).body.schedule;
    expect(after.nextRunAtMs).toBe(Date.UTC(2027, 0, 1));
    await request(t.url)
      .post(`/v1/schedules/${schedule.id}/trigger`)
      .set('Idempotency-Key', 'bad key')
      .expect(400)
      .expect((res) => expect(res.body.error.details.field).toBe('Idempotency-Key'));
    t.fake.assertDone();
  });
});
