import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { FakeScheduleClock } from '../support/fake-schedule-clock.js';
import { useTestServers } from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';
import { at, bearer, createSchedule, getSchedule, moveTo, runEnded, T0, tickOf } from './schedule-helpers.js';

const start = useTestServers();

const ALICE = 'alice-schedules-token-0123456789';
const OPS = 'ops-schedules-token-0123456789ab';
const BOB = 'bob-schedules-token-0123456789ab';
const alice = (scopes: string[]) => ({ token: ALICE, principal: 'alice', tenantId: 't1', scopes });
const ops = { token: OPS, principal: 'ops', tenantId: 't1', scopes: ['sessions'] };
const bob = { token: BOB, principal: 'bob', tenantId: 't2', scopes: ['sessions'] };

/** The same data directory and workspace again, with other tokens and a clock at `nowMs`. */
async function restart(before: TestServer, tokens: unknown[], nowMs: number) {
  await before.close();
  const clock = new FakeScheduleClock(nowMs);
  const t = await start({
    scheduleClock: clock,
    dataDir: before.dataDir,
    root: before.root,
    config: { apiTokens: tokens },
  });
  return { t, clock };
}

describe('who a schedule runs as: its creator, with what both its creation and its tokens now grant', () => {
  it("a revoked token pauses the schedule with a reason; another tenant never sees it; an edit makes it the editor's", async () => {
    const first = await start({
      scheduleClock: new FakeScheduleClock(T0),
      config: { apiTokens: [alice(['sessions']), ops, bob] },
    });
    const { schedule } = await createSchedule(
      first,
      { name: 'report', cron: '*/5 * * * *', input: 'report' },
      201,
      ALICE,
    );
    expect(schedule.owner).toEqual({ principal: 'alice', tenantId: 't1', scopes: ['sessions'] });
    await request(first.url).get(`/v1/schedules/${schedule.id}`).set(bearer(BOB)).expect(404);
    expect((await request(first.url).get('/v1/schedules').set(bearer(BOB)).expect(200)).body.schedules).toEqual([]);
    await request(first.url).delete(`/v1/schedules/${schedule.id}`).set(bearer(BOB)).expect(404);

    // Alice's token is gone from the configuration.
    const { t, clock } = await restart(first, [ops, bob], at('00:04:00'));
    await moveTo(clock, at('00:05:00'));
    const paused = await tickOf(t, schedule.id, at('00:05:00'), OPS);
    expect(paused).toMatchObject({
      paused: true,
      pausedReason: { code: 'TOKEN_REVOKED' },
      lastTick: { outcome: 'paused', error: { code: 'TOKEN_REVOKED' } },
      nextRunAtMs: null,
    });
    expect(paused.pausedReason!.message).toContain('alice');
    expect(t.fake.requests).toHaveLength(0);

    // A pause or resume alone changes nothing of who it runs as.
    const repaused = await request(t.url)
      .patch(`/v1/schedules/${schedule.id}`)
      .set(bearer(OPS))
      .send({ paused: true })
      .expect(200);
    expect(repaused.body.schedule).toMatchObject({ paused: true, owner: { principal: 'alice' } });
    // Ops (same tenant) resumes it and edits it: from then on it runs as ops.
    const edited = await request(t.url)
      .patch(`/v1/schedules/${schedule.id}`)
      .set(bearer(OPS))
      .send({ paused: false, input: 'report as ops' })
      .expect(200);
    expect(edited.body.schedule).toMatchObject({ paused: false, owner: { principal: 'ops' } });
    expect(edited.body.schedule.pausedReason).toBeUndefined();
    t.fake.script({ text: 'reported' });
    await moveTo(clock, at('00:10:00'));
    const ran = await tickOf(t, schedule.id, at('00:10:00'), OPS);
    expect(ran.lastTick).toMatchObject({ outcome: 'started' });
    await runEnded(t, 'schedule:report', ran.lastTick!.runId!, OPS);
    t.fake.assertDone();
  });

  it('a scope the token no longer grants fails the tick: the template is checked again like a creation', async () => {
    const template = { securityProvider: { type: 'none' } };
    const first = await start({
      scheduleClock: new FakeScheduleClock(T0),
      config: { apiTokens: [alice(['sessions', 'host_direct']), ops] },
    });
    // Without host_direct the template is refused at creation, as POST /v1/sessions refuses it.
    const refused = await createSchedule(
      first,
      { name: 'x', cron: '*/5 * * * *', input: 'x', session: { template } },
      403,
      OPS,
    );
    expect(refused.error).toMatchObject({ code: 'FORBIDDEN', details: { field: 'securityProvider.type' } });
    const { schedule } = await createSchedule(
      first,
      { name: 'raw', cron: '*/5 * * * *', input: 'x', session: { template } },
      201,
      ALICE,
    );
    expect(schedule.owner.scopes).toEqual(['sessions', 'host_direct']);

    const { t, clock } = await restart(first, [alice(['sessions']), ops], at('00:04:00'));
    await moveTo(clock, at('00:05:00'));
    const failed = await tickOf(t, schedule.id, at('00:05:00'), ALICE);
    expect(failed).toMatchObject({ paused: false, lastTick: { outcome: 'failed', error: { code: 'FORBIDDEN' } } });
    expect(failed.lastTick!.error!.message).toContain('securityProvider.type');
    expect(t.fake.requests).toHaveLength(0);
  });
});

describe('ticks count toward the tenant quotas', () => {
  it("a tick's run takes the tenant's runs per minute: a client's run after it is 429, and so is the next tick", async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({
      scheduleClock: clock,
      config: { apiTokens: [alice(['sessions'])], tenantQuotas: { t1: { maxRunsPerMinute: 1 } } },
    });
    const { schedule } = await createSchedule(t, { name: 'q', cron: '* * * * *', input: 'x' }, 201, ALICE);
    t.fake.script({ text: 'counted' });
    await moveTo(clock, at('00:01:00'));
    const ticked = await tickOf(t, schedule.id, at('00:01:00'), ALICE);
    expect(ticked.lastTick).toMatchObject({ outcome: 'started' });
    await runEnded(t, 'schedule:q', ticked.lastTick!.runId!, ALICE);
    await request(t.url).post('/v1/sessions').set(bearer(ALICE)).send({ sessionId: 'other' }).expect(201);
    const refused = await request(t.url)
      .post('/v1/sessions/other/runs')
      .set(bearer(ALICE))
      .send({ input: 'mine' })
      .expect(429);
    expect(refused.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED' });
    const trigger = await request(t.url).post(`/v1/schedules/${schedule.id}/trigger`).set(bearer(ALICE)).expect(200);
    expect(trigger.body).toMatchObject({ tick: { outcome: 'failed', error: { code: 'QUOTA_EXCEEDED' } }, run: null });
    t.fake.assertDone();
  });
});

describe('schedule limits and bad input', () => {
  it('limits.max_schedules_per_tenant bounds each tenant: one more is 429 naming it; names are unique per tenant', async () => {
    const t = await start({ config: { apiTokens: [alice(['sessions']), bob], limits: { maxSchedulesPerTenant: 2 } } });
    const body = (name: string) => ({ name, cron: '0 * * * *', input: 'x' });
    await createSchedule(t, body('a'), 201, ALICE);
    const dup = await createSchedule(t, body('a'), 409, ALICE);
    expect(dup.error).toMatchObject({ code: 'SCHEDULE_EXISTS', details: { field: 'name' } });
    const { schedule } = await createSchedule(t, body('b'), 201, ALICE);
    const over = await createSchedule(t, body('c'), 429, ALICE);
    expect(over.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { quota: 'limits.maxSchedulesPerTenant', limit: 2 },
    });
    // Another tenant has its own two, and its own names.
    await createSchedule(t, body('a'), 201, BOB);
    await request(t.url).delete(`/v1/schedules/${schedule.id}`).set(bearer(ALICE)).expect(200);
    await createSchedule(t, body('c'), 201, ALICE);
    expect((await request(t.url).get('/v1/schedules').set(bearer(ALICE)).expect(200)).body.schedules).toHaveLength(2);
  });

  it('bad input is a 400 naming the field', async () => {
    const t = await start();
    const ok = { name: 'n', cron: '*/5 * * * *', input: 'x' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...ok, cron: '*/30 * * * * *' }, 'body.cron'],
      [{ ...ok, cron: '* * *' }, 'body.cron'],
      [{ ...ok, cron: '61 * * * *' }, 'body.cron'],
      [{ ...ok, cron: '0 0 30 2 *' }, 'body.cron'],
      [{ ...ok, timezone: 'Mars/Olympus' }, 'body.timezone'],
      [{ ...ok, overlap: 'reject' }, 'body.overlap'],
      [{ ...ok, catchUp: 'all' }, 'body.catchUp'],
      [{ ...ok, input: '' }, 'body.input'],
      [{ ...ok, name: 'has space' }, 'body.name'],
      [{ ...ok, session: { id: 'x', template: {} } }, 'body.session'],
      [{ ...ok, session: { template: { sessionId: 'mine' } } }, 'body.session.template.sessionId'],
      [{ ...ok, session: { template: { bogusOption: true } } }, 'body.session.template'],
      [{ ...ok, extra: 1 }, 'body'],
    ];
    for (const [body, path] of cases) {
      const res = await request(t.url).post('/v1/schedules').send(body).expect(400);
      expect(res.body.error.code, JSON.stringify(body)).toBe('VALIDATION_ERROR');
      expect(res.body.error.message.startsWith(path), `${res.body.error.message} names ${path}`).toBe(true);
    }
    const missing = await createSchedule(t, { ...ok, session: { id: 'nope' } }, 404);
    expect(missing.error).toMatchObject({ code: 'SESSION_NOT_FOUND' });
    await request(t.url)
      .get('/v1/schedules/sch_0123456789abcdef')
      .expect(404)
      .expect((res) => {
        expect(res.body.error.code).toBe('SCHEDULE_NOT_FOUND');
      });
    const { schedule } = await createSchedule(t, ok);
    const patch = await request(t.url).patch(`/v1/schedules/${schedule.id}`).send({ cron: '* * * * * *' }).expect(400);
    expect(patch.body.error.message).toMatch(/^body\.cron: a six-field cron/);
    await request(t.url).patch(`/v1/schedules/${schedule.id}`).send({ name: 'renamed' }).expect(400);
    expect((await getSchedule(t, schedule.id)).cron).toBe('*/5 * * * *');
  });

  it('a schedule may name an existing session of its tenant; its runs go there', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock });
    await request(t.url).post('/v1/sessions').send({ sessionId: 'mine' }).expect(201);
    const { schedule } = await createSchedule(t, {
      name: 'into',
      cron: '*/5 * * * *',
      input: 'x',
      session: { id: 'mine' },
    });
    expect(schedule.sessionId).toBe('mine');
    t.fake.script({ text: 'in mine' });
    await moveTo(clock, at('00:05:00'));
    const ticked = await tickOf(t, schedule.id, at('00:05:00'));
    expect((await runEnded(t, 'mine', ticked.lastTick!.runId!)).result?.text).toBe('in mine');
  });
});
