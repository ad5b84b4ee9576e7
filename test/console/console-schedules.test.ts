import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schedule } from '../../src/protocol/schedules.js';
import type { WebhookDelivery } from '../../src/protocol/webhooks.js';
import { clickNow, launchBrowser, openConsole, waitForText } from '../support/browser.js';
import { evaluate, signIn } from '../support/console-actions.js';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startRecordingReceiver, status, type RecordingReceiver } from '../support/webhook-receiver.js';

const A = 'console-schedules-token-tenant-a1';
const SECRET = 'whsec-console-0123456789abcdef';
const ALICE = 'console-schedules-token-alice-01';
const OPS = 'console-schedules-token-ops-0001';

/** REST on `url` with a bearer token. */
async function call<T>(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const answer = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: answer.status, body: (await answer.json()) as T };
}

describe('the console: a session’s schedules and a run’s webhook deliveries (issue 33) in headless Chromium', () => {
  let t: TestServer;
  let browser: Browser;
  let ok: RecordingReceiver;
  let failing: RecordingReceiver;

  beforeAll(async () => {
    ok = await startRecordingReceiver(status(200));
    failing = await startRecordingReceiver(status(500));
    t = await startTestServer({
      config: {
        apiTokens: [{ token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
        // The receivers are on 127.0.0.1: a sessions-only caller may name them only with the operator's allowance.
        // The failing receiver's second attempt is far off, so its delivery stays pending with its first error.
        webhooks: { secrets: { 'tenant-a': [SECRET] }, retryDelaysMs: [0, 600_000] },
        outbound: { allowPrivateNetworks: true },
      },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await ok?.close();
    await failing?.close();
  });

  const api = <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> =>
    call<T>(t.url, A, method, path, body);
  const newSession = async (): Promise<string> =>
    (await api<{ session: { id: string } }>('POST', '/v1/sessions', {})).body.session.id;
  const schedule = async (id: string): Promise<Schedule> =>
    (await api<{ schedule: Schedule }>('GET', `/v1/schedules/${id}`)).body.schedule;
  const texts = (page: Parameters<typeof evaluate>[0], selector: string): Promise<string[]> =>
    evaluate<string[]>(page, `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.textContent)`);

  it('lists the schedules whose runs come to the session; Pause and Resume change them over the API; Run now starts a run', async () => {
    const id = await newSession();
    const other = await newSession();
    // January 1st: no cron tick fires while the test runs; only "Run now" starts runs.
    const created = await api<{ schedule: Schedule }>('POST', '/v1/schedules', {
      name: 'new-year',
      cron: '0 0 1 1 *',
      timezone: 'Europe/Berlin',
      session: { id },
      input: 'Say happy new year',
    });
    expect(created.status).toBe(201);
    const mine = created.body.schedule;
    expect(mine.nextRunAtMs).not.toBeNull();
    const elsewhere = await api<{ schedule: Schedule }>('POST', '/v1/schedules', {
      name: 'elsewhere',
      cron: '0 0 1 1 *',
      session: { id: other },
      input: 'not for this session',
    });
    expect(elsewhere.status).toBe(201);

    const { page, logs } = await openConsole(browser, t.url);
    await signIn(page, A);
    await page.evaluate(`location.hash = '#/sessions/${id}'`);
    const row = `.schedules li[data-schedule-id="${mine.id}"]`;
    await page.waitForSelector(row, { visible: true });
    // Only this session's schedule: the other session's is not listed here.
    expect(await texts(page, '.schedules .schedule-name')).toEqual(['new-year']);
    const facts = (await texts(page, `${row} .schedule-facts`))[0]!;
    expect(facts).toContain('0 0 1 1 *');
    expect(facts).toContain('Europe/Berlin');
    expect(facts).toContain(`next ${await evaluate<string>(page, `new Date(${mine.nextRunAtMs}).toLocaleString()`)}`);
    expect(await texts(page, `${row} .schedule-last`)).toEqual(['No tick yet.']);
    expect(await texts(page, `${row} .chip`)).toEqual(['active']);

    // Pause in the page: the API says paused with no next tick, and the row offers Resume.
    await clickNow(page, `${row} .pause-btn`);
    await page.waitForSelector(`${row}[data-paused="true"] .resume-btn`);
    const paused = await schedule(mine.id);
    expect(paused).toMatchObject({ paused: true, nextRunAtMs: null });
    expect(await texts(page, `${row} .schedule-next`)).toEqual(['no tick while paused']);
    expect(await texts(page, `${row} .chip`)).toEqual(['paused']);
    // The other session's schedule was left alone.
    expect((await schedule(elsewhere.body.schedule.id)).paused).toBe(false);

    // Resume: ticking again from the next cron time.
    await clickNow(page, `${row} .resume-btn`);
    await page.waitForSelector(`${row}[data-paused="false"] .pause-btn`);
    const resumed = await schedule(mine.id);
    expect(resumed.paused).toBe(false);
    expect(resumed.nextRunAtMs).toBe(mine.nextRunAtMs);

    // Run now: a tick whose run is an ordinary run of this session, shown live; the row names it as the last tick.
    t.fake.script({ text: 'Happy new year!' });
    await clickNow(page, `${row} .trigger-btn`);
    await page.waitForSelector('.log .run[data-run-id]', { timeout: 10_000 });
    const runId = await evaluate<string>(page, `document.querySelector('.log .run[data-run-id]').dataset.runId`);
    await waitForText(page, `.log .run[data-run-id="${runId}"] .run-end`, 'completed', 15_000);
    expect(await texts(page, `.log .run[data-run-id="${runId}"] .message-user .message-text`)).toEqual([
      'Say happy new year',
    ]);
    const ticked = await schedule(mine.id);
    expect(ticked.lastTick).toMatchObject({ outcome: 'started', manual: true, runId });
    await waitForText(page, `${row} .schedule-last`, runId);
    expect((await texts(page, `${row} .schedule-last`))[0]).toContain('(run now): started run');
    const runs = (await api<{ runs: Array<{ runId: string; input: string }> }>('GET', `/v1/sessions/${id}/runs`)).body
      .runs;
    expect(runs).toEqual([expect.objectContaining({ runId, input: 'Say happy new year' })]);
    t.fake.assertDone();

    // A session no schedule runs in has no Schedules panel.
    await page.evaluate(`location.hash = '#/sessions/${await newSession()}'`);
    await waitForText(page, '.runs', 'No runs yet.');
    expect(await evaluate<boolean>(page, `document.querySelector('.schedules').hidden`)).toBe(true);
    expect(logs.filter((l) => l.startsWith('pageerror') || /content security policy/i.test(l))).toEqual([]);
  });

  it('shows each run’s webhook deliveries: event, delivery id, status, attempts and the last error', async () => {
    const id = await newSession();
    const { page, logs } = await openConsole(browser, t.url);
    await signIn(page, A);
    await page.evaluate(`location.hash = '#/sessions/${id}'`);
    await page.waitForSelector('.session-view .session-head dl');
    await waitForText(page, '.connection', 'Live');

    // A run whose webhook's receiver answers 200, started over the API while the page is open.
    t.fake.script({ text: 'first' });
    const first = await api<{ runId: string }>('POST', `/v1/sessions/${id}/runs`, {
      input: 'first run',
      wait: true,
      webhook: { url: ok.url },
    });
    expect(first.status).toBe(200);
    const delivered = `.runs li[data-run-id="${first.body.runId}"] .delivery[data-status="delivered"]`;
    await page.waitForSelector(delivered, { timeout: 15_000 });
    expect(ok.received).toHaveLength(1);
    const deliveryId = ok.received[0]!.headers['a3s-delivery-id'];
    expect(
      await evaluate<string[]>(
        page,
        `[...document.querySelectorAll(${JSON.stringify(delivered)})].map((e) => e.dataset.deliveryId)`,
      ),
    ).toEqual([deliveryId]);
    const shown = (await texts(page, delivered))[0]!;
    expect(shown).toContain('run_completed');
    expect(shown).toContain(deliveryId as string);
    expect(shown).toContain('1 attempt');
    expect(shown).toContain('HTTP 200');

    // A second run whose receiver answers 500: pending, one attempt, and the last error, as the API reports it.
    t.fake.script({ text: 'second' });
    const second = await api<{ runId: string }>('POST', `/v1/sessions/${id}/runs`, {
      input: 'second run',
      wait: true,
      webhook: { url: failing.url, events: ['run_completed', 'run_failed'] },
    });
    expect(second.status).toBe(200);
    const pending = `.runs li[data-run-id="${second.body.runId}"] .delivery[data-status="pending"]`;
    await page.waitForFunction(
      `document.querySelector(${JSON.stringify(pending)})?.textContent.includes('1 attempt') === true`,
      { timeout: 15_000 },
    );
    const log = (await api<{ deliveries: WebhookDelivery[] }>('GET', `/v1/sessions/${id}/webhooks/deliveries`)).body
      .deliveries;
    const failed = log.find((d) => d.runId === second.body.runId)!;
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 500 });
    expect(failed.lastError).toBeTruthy();
    expect(await texts(page, `${pending} .delivery-error`)).toEqual([failed.lastError]);
    const text = (await texts(page, pending))[0]!;
    expect(text).toContain(failed.deliveryId);
    expect(text).toContain('HTTP 500');
    expect(text).toContain('next attempt');
    // Each run lists its own deliveries only; the first still reads delivered.
    expect(await texts(page, `.runs li[data-run-id="${first.body.runId}"] .delivery`)).toHaveLength(1);
    expect(await texts(page, `.runs li[data-run-id="${second.body.runId}"] .delivery`)).toHaveLength(1);
    expect(await texts(page, '.runs .webhooks-status')).toEqual(['']);

    // Opened afresh, the page shows both from the log (not only what it saw happen).
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector(delivered);
    await page.waitForSelector(pending);
    t.fake.assertDone();
    expect(logs.filter((l) => l.startsWith('pageerror') || /content security policy/i.test(l))).toEqual([]);
  });
});

describe('the console: a schedule the server paused (its owner’s token removed) says why', () => {
  let browser: Browser;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    for (const server of servers) await server.close();
  });

  it('shows TOKEN_REVOKED from a Run now as the owner whose token is gone, and another principal resumes it', async () => {
    const alice = { token: ALICE, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] };
    const ops = { token: OPS, principal: 'ops', tenantId: 'tenant-a', scopes: ['sessions'] };
    const first = await startTestServer({ config: { apiTokens: [alice, ops] } });
    servers.push(first);
    const created = await call<{ schedule: Schedule }>(first.url, ALICE, 'POST', '/v1/schedules', {
      name: 'report',
      cron: '0 0 1 1 *',
      session: { template: { autoSave: true } },
      input: 'Write the report',
    });
    expect(created.status).toBe(201);
    const id = created.body.schedule.id;
    // A first tick makes (and saves) its session `schedule:report`.
    first.fake.script({ text: 'reported' });
    const tick = await call<{ run: { runId: string } }>(first.url, ALICE, 'POST', `/v1/schedules/${id}/trigger`);
    expect(tick.status).toBe(200);
    await eventually(async () => {
      const run = await call<{ run: { status: string } }>(
        first.url,
        ALICE,
        'GET',
        `/v1/sessions/schedule:report/runs/${tick.body.run.runId}`,
      );
      return run.body.run?.status === 'completed';
    }, 'the first tick’s run to end');
    first.fake.assertDone();
    await first.close();
    servers.splice(0);

    // The operator removed alice's token: ops (same tenant) opens the schedule's session and presses Run now.
    const t = await startTestServer({ dataDir: first.dataDir, root: first.root, config: { apiTokens: [ops] } });
    servers.push(t);
    const { page, logs } = await openConsole(browser, t.url);
    await signIn(page, OPS);
    await page.evaluate(`location.hash = '#/sessions/${encodeURIComponent('schedule:report')}'`);
    const row = `.schedules li[data-schedule-id="${id}"]`;
    await page.waitForSelector(`${row}[data-paused="false"]`, { visible: true });
    expect(
      (
        await evaluate<string[]>(
          page,
          `[...document.querySelectorAll('${row} .schedule-last')].map((e) => e.textContent)`,
        )
      )[0],
    ).toContain(tick.body.run.runId);
    await clickNow(page, `${row} .trigger-btn`);
    await page.waitForSelector(`${row}[data-paused="true"] .schedule-reason`);
    const paused = (await call<{ schedule: Schedule }>(t.url, OPS, 'GET', `/v1/schedules/${id}`)).body.schedule;
    expect(paused).toMatchObject({ paused: true, pausedReason: { code: 'TOKEN_REVOKED' } });
    const reason = await evaluate<string>(page, `document.querySelector('${row} .schedule-reason').textContent`);
    expect(reason).toContain(`TOKEN_REVOKED: ${paused.pausedReason!.message}`);
    expect(await evaluate<string>(page, `document.querySelector('${row} .schedule-last').textContent`)).toContain(
      'paused the schedule · TOKEN_REVOKED',
    );
    await waitForText(page, '.toast', 'Run now of report: paused the schedule');
    expect(t.fake.requests).toHaveLength(0);

    // Resume by ops: the API says active again.
    await clickNow(page, `${row} .resume-btn`);
    await page.waitForSelector(`${row}[data-paused="false"]`);
    expect((await call<{ schedule: Schedule }>(t.url, OPS, 'GET', `/v1/schedules/${id}`)).body.schedule.paused).toBe(
      false,
    );
    expect(logs.filter((l) => l.startsWith('pageerror') || /content security policy/i.test(l))).toEqual([]);
  });
});
