import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { FakeScheduleClock } from '../support/fake-schedule-clock.js';
import { eventually, history, runEvents, useTestServers } from '../support/run-helpers.js';
import { at, createSchedule, getSchedule, moveTo, runEnded, sessionRuns, T0, tickOf } from './schedule-helpers.js';

const start = useTestServers();

describe('schedules fire on their cron (fake clock, the embedded file store)', () => {
  it('a five-minute cron ticks at 00:05 and 00:10, not before, each an ordinary run in schedule:<name>', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock });
    const { schedule } = await createSchedule(t, { name: 'nightly', cron: '*/5 * * * *', input: 'tidy up' });
    expect(schedule).toMatchObject({
      name: 'nightly',
      sessionId: 'schedule:nightly',
      timezone: 'UTC',
      overlap: 'skip',
      catchUp: 'none',
      paused: false,
      nextRunAtMs: at('00:05:00'),
      lastTick: null,
      owner: { principal: 'anonymous', tenantId: 'default' },
    });
    expect((await request(t.url).get('/v1/schedules').expect(200)).body.schedules).toHaveLength(1);

    await moveTo(clock, at('00:04:59'));
    expect(t.fake.requests).toHaveLength(0);
    expect((await getSchedule(t, schedule.id)).lastTick).toBeNull();

    t.fake.script({ text: 'first tidy' }, { text: 'second tidy' });
    await moveTo(clock, at('00:05:00'));
    const first = await tickOf(t, schedule.id, at('00:05:00'));
    expect(first.lastTick).toMatchObject({ outcome: 'started', runId: expect.any(String) });
    expect(first.nextRunAtMs).toBe(at('00:10:00'));
    const run = await runEnded(t, 'schedule:nightly', first.lastTick!.runId!);
    expect(run).toMatchObject({
      status: 'completed',
      input: 'tidy up',
      idempotencyKey: `schedule:${schedule.id}:2026-12-08T00:05:00.000Z`,
    });
    expect(run.result?.text).toBe('first tidy');
    // An ordinary run: its events are in the session's log like any other's.
    const events = await runEvents(t, 'schedule%3Anightly', run.runId);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['agent_start', 'agent_end']));

    await moveTo(clock, at('00:10:00'));
    const second = await tickOf(t, schedule.id, at('00:10:00'));
    await runEnded(t, 'schedule:nightly', second.lastTick!.runId!);
    // The same session: the second tick's run saw the first one's answer.
    expect((await history(t, 'schedule%3Anightly')).map((m) => m.content)).toEqual([
      'tidy up',
      'first tidy',
      'tidy up',
      'second tidy',
    ]);
    expect(await sessionRuns(t, 'schedule:nightly')).toHaveLength(2);
    t.fake.assertDone();
  });

  it('a tick missed while no node ran is dropped with catchUp "none" and run once, late, with "latest"', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock });
    const none = (await createSchedule(t, { name: 'none', cron: '*/5 * * * *', input: 'n' })).schedule;
    const latest = (await createSchedule(t, { name: 'latest', cron: '*/5 * * * *', input: 'l', catchUp: 'latest' }))
      .schedule;
    t.fake.script({ text: 'caught up' });
    // 00:05 ... 00:20 all fell while nothing ran: the clock jumps past them (the 00:20 tick is two minutes late).
    await moveTo(clock, at('00:22:00'));
    const caughtUp = await tickOf(t, latest.id, at('00:20:00'));
    expect(caughtUp.lastTick).toMatchObject({ outcome: 'started' });
    await runEnded(t, 'schedule:latest', caughtUp.lastTick!.runId!);
    expect(await sessionRuns(t, 'schedule:latest')).toHaveLength(1);
    await eventually(async () => (await getSchedule(t, none.id)).nextRunAtMs === at('00:25:00'), 'none to move on');
    expect((await getSchedule(t, none.id)).lastTick).toBeNull();
    expect(
      (await request(t.url).get('/v1/sessions').expect(200)).body.sessions.map((s: { id: string }) => s.id),
    ).toEqual(['schedule:latest']);
    t.fake.assertDone();
  });

  it('a timezone moves the ticks: 09:00 in Asia/Tokyo is 00:00 UTC', async () => {
    const clock = new FakeScheduleClock(at('23:00:00') - 24 * 3600_000);
    const t = await start({ scheduleClock: clock });
    const { schedule } = await createSchedule(t, {
      name: 'tokyo',
      cron: '0 9 * * *',
      timezone: 'Asia/Tokyo',
      input: 'morning',
    });
    expect(schedule.nextRunAtMs).toBe(at('00:00:00'));
    t.fake.script({ text: 'ohayo' });
    await moveTo(clock, at('00:00:00'));
    const ticked = await tickOf(t, schedule.id, at('00:00:00'));
    await runEnded(t, 'schedule:tokyo', ticked.lastTick!.runId!);
    t.fake.assertDone();
  });

  it('paused, a schedule does not tick; resumed, it ticks again from then on (no catching up)', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock });
    const { schedule } = await createSchedule(t, { name: 'p', cron: '*/5 * * * *', input: 'x', catchUp: 'latest' });
    const paused = await request(t.url).patch(`/v1/schedules/${schedule.id}`).send({ paused: true }).expect(200);
    expect(paused.body.schedule).toMatchObject({ paused: true, nextRunAtMs: null });
    await moveTo(clock, at('00:06:00'));
    expect(t.fake.requests).toHaveLength(0);
    const resumed = await request(t.url).patch(`/v1/schedules/${schedule.id}`).send({ paused: false }).expect(200);
    // The 00:05 tick fell while paused: not caught up, though catchUp is "latest".
    expect(resumed.body.schedule).toMatchObject({ paused: false, nextRunAtMs: at('00:10:00') });
    t.fake.script({ text: 'back' });
    await moveTo(clock, at('00:10:00'));
    const ticked = await tickOf(t, schedule.id, at('00:10:00'));
    await runEnded(t, 'schedule:p', ticked.lastTick!.runId!);
    expect(await sessionRuns(t, 'schedule:p')).toHaveLength(1);
    t.fake.assertDone();
  });

  it('an edit of cron and input applies from the next tick; DELETE stops the ticks', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock });
    const { schedule } = await createSchedule(t, { name: 'e', cron: '*/5 * * * *', input: 'old' });
    const edited = await request(t.url)
      .patch(`/v1/schedules/${schedule.id}`)
      .send({ cron: '*/2 * * * *', input: 'new' })
      .expect(200);
    expect(edited.body.schedule).toMatchObject({ cron: '*/2 * * * *', input: 'new', nextRunAtMs: at('00:02:00') });
    t.fake.script({ text: 'edited' });
    await moveTo(clock, at('00:02:00'));
    const ticked = await tickOf(t, schedule.id, at('00:02:00'));
    expect((await runEnded(t, 'schedule:e', ticked.lastTick!.runId!)).input).toBe('new');
    await request(t.url).delete(`/v1/schedules/${schedule.id}`).expect(200, { deleted: true });
    await request(t.url).get(`/v1/schedules/${schedule.id}`).expect(404);
    await moveTo(clock, at('00:04:00'));
    expect(await sessionRuns(t, 'schedule:e')).toHaveLength(1);
    t.fake.assertDone();
  });

  it('schedules survive a restart on the file store, and a tick missed while it was down follows catchUp', async () => {
    const clock = new FakeScheduleClock(T0);
    const first = await start({ scheduleClock: clock });
    const { schedule } = await createSchedule(first, {
      name: 'durable',
      cron: '*/5 * * * *',
      input: 'after restart',
      catchUp: 'latest',
      session: { template: { autoSave: true } },
    });
    await first.close();
    const later = new FakeScheduleClock(at('00:07:00'));
    const second = await start({ scheduleClock: later, dataDir: first.dataDir, root: first.root });
    second.fake.script({ text: 'late but done' });
    const ticked = await tickOf(second, schedule.id, at('00:05:00'));
    expect(ticked.lastTick?.error).toBeUndefined();
    expect(ticked.lastTick).toMatchObject({ outcome: 'started' });
    await runEnded(second, 'schedule:durable', ticked.lastTick!.runId!);
    second.fake.assertDone();
  });
});
