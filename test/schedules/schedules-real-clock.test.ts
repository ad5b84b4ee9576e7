import { describe, expect, it } from 'vitest';
import { eventually, useTestServers } from '../support/run-helpers.js';
import { createSchedule, getSchedule, runEnded } from './schedule-helpers.js';

const start = useTestServers();

describe('schedules on the wall clock', () => {
  it('a one-minute cron fires at the next minute, within a second of it', { timeout: 90_000 }, async () => {
    const t = await start();
    t.fake.script({ text: 'on the minute' });
    const { schedule } = await createSchedule(t, { name: 'minutely', cron: '* * * * *', input: 'tick' });
    const due = schedule.nextRunAtMs!;
    expect(due % 60_000).toBe(0);
    expect(due - Date.now()).toBeLessThanOrEqual(60_000);
    // The one wait of this file: at most a minute, for the next minute.
    await eventually(async () => (await getSchedule(t, schedule.id)).lastTick !== null, 'the first tick', 75_000);
    const ticked = await getSchedule(t, schedule.id);
    expect(ticked.lastTick).toMatchObject({ tickAtMs: due, outcome: 'started' });
    const run = await runEnded(t, 'schedule:minutely', ticked.lastTick!.runId!);
    expect(run.createdAtMs).toBeGreaterThanOrEqual(due);
    expect(run.createdAtMs - due).toBeLessThan(1_000);
    expect(ticked.nextRunAtMs).toBe(due + 60_000);
    t.fake.assertDone();
  });
});
