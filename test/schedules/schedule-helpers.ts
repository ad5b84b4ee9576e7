import request from 'supertest';
import type { RunRecord } from '../../src/protocol/run-record.js';
import type { Schedule } from '../../src/protocol/schedules.js';
import type { FakeScheduleClock } from '../support/fake-schedule-clock.js';
import { eventually } from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';

/** 2026-12-08T00:00:30Z: half a minute before a five-minute cron's 00:00, 00:05 ... ticks. */
export const T0 = Date.UTC(2026, 11, 8, 0, 0, 30);

/** Milliseconds of `hh:mm:ss` on T0's day. */
export function at(time: string): number {
  const [h = 0, m = 0, s = 0] = time.split(':').map(Number);
  return Date.UTC(2026, 11, 8, h, m, s);
}

/** Headers of a bearer token (none: the anonymous loopback server). */
export function bearer(token?: string): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** POST /v1/schedules, expecting `status`; answers the body. */
export async function createSchedule(
  t: TestServer,
  body: Record<string, unknown>,
  status = 201,
  token?: string,
): Promise<{ schedule: Schedule; error?: { code: string; message: string; details: Record<string, unknown> } }> {
  return (await request(t.url).post('/v1/schedules').set(bearer(token)).send(body).expect(status)).body;
}

/** GET /v1/schedules/:id. */
export async function getSchedule(t: TestServer, id: string, token?: string): Promise<Schedule> {
  return (await request(t.url).get(`/v1/schedules/${id}`).set(bearer(token)).expect(200)).body.schedule as Schedule;
}

/** The runs of a session (its id URL-encoded: `schedule:<name>`). */
export async function sessionRuns(t: TestServer, sessionId: string, token?: string): Promise<RunRecord[]> {
  const res = await request(t.url)
    .get(`/v1/sessions/${encodeURIComponent(sessionId)}/runs`)
    .set(bearer(token))
    .expect(200);
  return (res.body as { runs: RunRecord[] }).runs;
}

/** Wait until the scheduler has finished the scans the clock's last move started (it re-arms its timer last). */
export async function scanned(clock: FakeScheduleClock): Promise<void> {
  await eventually(() => clock.pending > 0, 'the scheduler to finish its scan');
}

/** Move the clock to `atMs`, then wait for the scan that starts. */
export async function moveTo(clock: FakeScheduleClock, atMs: number): Promise<void> {
  clock.set(atMs);
  await scanned(clock);
}

/** Wait until the schedule's last tick is of `tickAtMs` and has an outcome; answers the schedule. */
export async function tickOf(t: TestServer, id: string, tickAtMs: number, token?: string): Promise<Schedule> {
  let schedule: Schedule | undefined;
  await eventually(
    async () => {
      schedule = await getSchedule(t, id, token);
      return schedule.lastTick?.tickAtMs === tickAtMs;
    },
    `the tick at ${new Date(tickAtMs).toISOString()}`,
  );
  return schedule!;
}

/** Wait until the run has ended; answers its record. */
export async function runEnded(t: TestServer, sessionId: string, runId: string, token?: string): Promise<RunRecord> {
  let run: RunRecord | undefined;
  await eventually(async () => {
    run = (await sessionRuns(t, sessionId, token)).find((r) => r.runId === runId);
    return run !== undefined && ['completed', 'failed', 'cancelled'].includes(run.status);
  }, `run ${runId} to end`);
  return run!;
}
