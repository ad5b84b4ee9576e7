import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { FakeScheduleClock } from '../support/fake-schedule-clock.js';
import { useTestServers } from '../support/run-helpers.js';
import { tempDir } from '../support/test-server.js';
import { at, bearer, createSchedule, moveTo, runEnded, T0, tickOf } from './schedule-helpers.js';

const start = useTestServers();

const A = 'tenant-a-schedule-token-012345678';
const B = 'tenant-b-schedule-token-012345678';
const tokens = [
  { token: A, principal: 'a', tenantId: 'ta', scopes: ['sessions'] },
  { token: B, principal: 'b', tenantId: 'tb', scopes: ['sessions'] },
];

describe("a schedule's template workspace is checked like a creation's, at creation and at every tick", () => {
  it("a workspace outside the roots, another tenant's, or a link to one is refused as POST /v1/sessions refuses it", async () => {
    const t = await start({ config: { apiTokens: tokens } });
    mkdirSync(join(t.root, 'tb', 'secret'), { recursive: true });
    mkdirSync(join(t.root, 'ta'), { recursive: true });
    // A link inside the tenant's own space to another tenant's directory is no way in either.
    symlinkSync(join(t.root, 'tb', 'secret'), join(t.root, 'ta', 'link'));
    for (const workspace of ['/', '/proc/self', join(t.root, 'tb', 'secret'), join(t.root, 'ta', 'link'), '../tb']) {
      const session = await request(t.url).post('/v1/sessions').set(bearer(A)).send({ workspace });
      expect(session.status, workspace).toBeGreaterThanOrEqual(400);
      const schedule = await request(t.url)
        .post('/v1/schedules')
        .set(bearer(A))
        .send({ name: 'w', cron: '0 * * * *', input: 'x', session: { template: { workspace } } });
      expect([schedule.status, schedule.body.error.code], workspace).toEqual([session.status, session.body.error.code]);
    }
    expect((await request(t.url).get('/v1/schedules').set(bearer(A)).expect(200)).body.schedules).toEqual([]);
  });

  it('a workspace swapped for a link to / after creation fails the tick; nothing reaches the provider', async () => {
    const clock = new FakeScheduleClock(T0);
    const root = tempDir('a3s-ws-');
    const t = await start({ root, scheduleClock: clock });
    const project = join(root, 'proj');
    mkdirSync(project);
    const { schedule } = await createSchedule(t, {
      name: 'swap',
      cron: '*/5 * * * *',
      input: 'x',
      session: { template: { workspace: project } },
    });
    // The template works as it is: a trigger runs in the workspace.
    t.fake.script({ text: 'before the swap' });
    const before = await request(t.url).post(`/v1/schedules/${schedule.id}/trigger`).expect(200);
    expect(before.body.tick.outcome).toBe('started');
    await runEnded(t, 'schedule:swap', before.body.run.runId);
    // Then, before the first tick, the directory becomes a symlink to / (each rename atomic, as mv -T).
    const decoy = join(tempDir('a3s-decoy-'), 'link');
    symlinkSync('/', decoy);
    renameSync(project, join(root, 'proj-moved'));
    renameSync(decoy, project);
    await moveTo(clock, at('00:05:00'));
    const failed = await tickOf(t, schedule.id, at('00:05:00'));
    expect(failed.lastTick).toMatchObject({ outcome: 'failed' });
    expect(['WORKSPACE_OUTSIDE_ROOTS', 'WORKSPACE_NOT_FOUND', 'WORKSPACE_CHANGED']).toContain(
      failed.lastTick!.error!.code,
    );
    expect(t.fake.requests).toHaveLength(1);
    t.fake.assertDone();
  });
});

describe('a stored template is read again at every tick', () => {
  it('a template the store holds that no longer parses (an option since removed) fails the tick naming it', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock });
    const { schedule } = await createSchedule(t, { name: 'old', cron: '*/5 * * * *', input: 'x' });
    // As an older build might have stored it: an option this build does not know.
    const file = join(t.dataDir, 'schedules', `${schedule.id}.json`);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    stored.session.template = { retiredOption: true };
    writeFileSync(file, JSON.stringify(stored));
    await moveTo(clock, at('00:05:00'));
    const failed = await tickOf(t, schedule.id, at('00:05:00'));
    expect(failed.lastTick).toMatchObject({ outcome: 'failed', error: { code: 'VALIDATION_ERROR' } });
    expect(failed.lastTick!.error!.message).toMatch(/^session\.template/);
    expect(failed.lastTick!.error!.message).toContain('retiredOption');
    expect(t.fake.requests).toHaveLength(0);
  });
});

describe('a damaged schedule file', () => {
  it('is left out of the list and the scans: the other schedules still tick', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock });
    const { schedule } = await createSchedule(t, { name: 'fine', cron: '*/5 * * * *', input: 'x' });
    writeFileSync(join(t.dataDir, 'schedules', 'sch_00000000000000000000000000000000.json'), '{"not": "a schedule"}');
    expect(
      (await request(t.url).get('/v1/schedules').expect(200)).body.schedules.map((s: { id: string }) => s.id),
    ).toEqual([schedule.id]);
    t.fake.script({ text: 'still ticking' });
    await moveTo(clock, at('00:05:00'));
    const ticked = await tickOf(t, schedule.id, at('00:05:00'));
    await runEnded(t, 'schedule:fine', ticked.lastTick!.runId!);
    t.fake.assertDone();
  });
});

describe('schedules on storage_backend "memory"', () => {
  it('tick in this process as on the file store', async () => {
    const clock = new FakeScheduleClock(T0);
    const t = await start({ scheduleClock: clock, config: { storageBackend: 'memory' } });
    const { schedule } = await createSchedule(t, { name: 'mem', cron: '*/5 * * * *', input: 'in memory' });
    t.fake.script({ text: 'remembered' });
    await moveTo(clock, at('00:05:00'));
    const ticked = await tickOf(t, schedule.id, at('00:05:00'));
    expect((await runEnded(t, 'schedule:mem', ticked.lastTick!.runId!)).result?.text).toBe('remembered');
    t.fake.assertDone();
  });
});
