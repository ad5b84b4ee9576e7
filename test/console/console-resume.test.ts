// The console resumes a run lost with its node: a server process is killed (SIGKILL) after a checkpoint,
// a fresh process on the same data dir serves the console, and Resume on the failed run continues it from
// the checkpoint without re-running the tool round.
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole, waitForText } from '../support/browser.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { listening, startMain, type MainProcess } from '../support/main-process.js';
import { eventually } from '../support/run-helpers.js';
import { tempDir, writeFiles } from '../support/test-server.js';

describe('Resume in the console, after the node running the run was killed', () => {
  let fake: FakeProvider;
  let browser: Browser;
  const procs: MainProcess[] = [];
  beforeAll(async () => {
    [fake, browser] = await Promise.all([startFakeProvider(), launchBrowser()]);
  });
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all([browser?.close(), fake?.close()]);
  });

  it('shows the lost run as failed (NODE_LOST) and resumes it from its checkpoint', async () => {
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    writeFiles(root, { 'notes.md': 'ship on friday\n' });
    const env = {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
      A3S_MODEL: 'openai/test-model',
      A3S_PORT: '0',
      A3S_DATA_DIR: dataDir,
      A3S_WORKSPACE_ROOTS: root,
    };
    const first = startMain(env);
    procs.push(first);
    const url = await listening(first);
    const created = await fetch(`${url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: 'crashy', autoSave: true }),
    });
    expect(created.status).toBe(201);
    fake.script({ toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'notes.md' } }] }, { hang: true });
    const started = (await (
      await fetch(`${url}/v1/sessions/crashy/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'when do we ship?' }),
      })
    ).json()) as { runId: string };
    // The checkpoint after the read round is written before the second provider call starts. autoSave saves
    // after a run ends: a save during the run (a bot's POST .../save) is what puts the lost run in the snapshot.
    await fake.waitForRequests(2, 20_000);
    expect((await fetch(`${url}/v1/sessions/crashy/save`, { method: 'POST' })).status).toBe(200);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = startMain(env);
    procs.push(second);
    const url2 = await listening(second);
    const { page, logs } = await openConsole(browser, url2);
    // Anonymous loopback: no sign-in. The session is stored, not open here: resume it by id.
    await page.waitForSelector('#resume-id');
    await page.type('#resume-id', 'crashy');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.session-view .runs');
    const row = `.runs-list li[data-run-id="${started.runId}"]`;
    await page.waitForSelector(`${row}[data-status="failed"]`);
    await waitForText(page, row, 'NODE_LOST');
    fake.script({ text: 'We ship on Friday.' });
    const resume = await page.waitForSelector(`${row} button::-p-text(Resume)`);
    await resume?.click();
    await waitForText(page, '.log', 'We ship on Friday.', 15_000);
    // The resumed run is a new run whose metadata names the lost one; the read round did not run again.
    type Runs = { runs: { runId: string; status: string; metadata?: Record<string, unknown> }[] };
    let resumed: Runs['runs'][number] | undefined;
    await eventually(async () => {
      resumed = ((await (await fetch(`${url2}/v1/sessions/crashy/runs`)).json()) as Runs).runs.find(
        (r) => r.metadata?.resumed_from_run_id === started.runId,
      );
      return resumed?.status === 'completed';
    }, 'the resumed run completed');
    await page.waitForSelector(`.runs-list li[data-run-id="${resumed?.runId}"][data-status="completed"]`);
    const last = fake.requests.at(-1)?.body.messages as { role: string; tool_call_id?: string }[];
    expect(last.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['r1']);
    fake.assertDone();
    expect(logs.filter((l) => l.startsWith('pageerror'))).toEqual([]);
    second.child.kill('SIGTERM');
  }, 60_000);
});
