import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  A3sClient,
  QuotaExceededError,
  ScheduleExistsError,
  ScheduleNotFoundError,
  ValidationError,
} from '../../src/client/index.js';
import { FakeScheduleClock } from '../support/fake-schedule-clock.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { at, moveTo, runEnded, T0, tickOf } from '../schedules/schedule-helpers.js';

describe('client.schedules: the schedule routes, typed', () => {
  let t: TestServer;
  let client: A3sClient;
  const clock = new FakeScheduleClock(T0);
  beforeAll(async () => {
    t = await startTestServer({ scheduleClock: clock, config: { limits: { maxSchedulesPerTenant: 2 } } });
    client = new A3sClient({ baseUrl: t.url });
  });
  afterAll(async () => {
    await t.close();
  });

  it('create, list, get, pause, resume, update, trigger, delete', async () => {
    const created = await client.schedules.create({ name: 'typed', cron: '*/5 * * * *', input: 'from the client' });
    expect(created).toMatchObject({ name: 'typed', sessionId: 'schedule:typed', nextRunAtMs: at('00:05:00') });
    expect((await client.schedules.list()).map((s) => s.id)).toEqual([created.id]);
    expect((await client.schedules.get(created.id)).input).toBe('from the client');
    expect((await client.schedules.pause(created.id)).paused).toBe(true);
    expect((await client.schedules.resume(created.id)).paused).toBe(false);
    const updated = await client.schedules.update(created.id, { overlap: 'enqueue', input: 'edited' });
    expect(updated).toMatchObject({ overlap: 'enqueue', input: 'edited' });

    t.fake.script({ text: 'triggered' }, { text: 'ticked' });
    const triggered = await client.schedules.trigger(created.id, { idempotencyKey: 'client-key' });
    expect(triggered.tick).toMatchObject({ outcome: 'started', manual: true });
    expect(triggered.run).toMatchObject({ input: 'edited', idempotencyKey: 'client-key' });
    await runEnded(t, 'schedule:typed', triggered.run!.runId);
    await moveTo(clock, at('00:05:00'));
    const ticked = await tickOf(t, created.id, at('00:05:00'));
    await runEnded(t, 'schedule:typed', ticked.lastTick!.runId!);

    expect(await client.schedules.delete(created.id)).toBe(true);
    await expect(client.schedules.get(created.id)).rejects.toBeInstanceOf(ScheduleNotFoundError);
    t.fake.assertDone();
  });

  it('answers the typed errors: a taken name, the limit, a six-field cron', async () => {
    await client.schedules.create({ name: 'one', cron: '0 * * * *', input: 'x' });
    await expect(client.schedules.create({ name: 'one', cron: '0 * * * *', input: 'x' })).rejects.toBeInstanceOf(
      ScheduleExistsError,
    );
    await client.schedules.create({ name: 'two', cron: '0 * * * *', input: 'x' });
    await expect(client.schedules.create({ name: 'three', cron: '0 * * * *', input: 'x' })).rejects.toBeInstanceOf(
      QuotaExceededError,
    );
    const error = await client.schedules
      .update((await client.schedules.list())[0]!.id, { cron: '0 0 * * * *' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(/^body\.cron:/);
  });
});
