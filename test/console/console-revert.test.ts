import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { bash, ownForSandbox } from '../changes/changes-helpers.js';
import { clickNow, launchBrowser, openConsole, waitForText } from '../support/browser.js';
import { evaluate, prompt, signIn } from '../support/console-actions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const A = 'console-revert-token-tenant-a12';
const XSS = '<img src=x onerror="window.__xss=1">';
const NOTES = 'the notes say: ship on friday\n';

describe.skipIf(!bwrapWorks())(
  'the console: Revert / Unrevert on a run’s changes (issue 32) in headless Chromium',
  () => {
    let t: TestServer;
    let browser: Browser;

    beforeAll(async () => {
      t = await startTestServer({
        files: { 'notes.txt': NOTES },
        config: { apiTokens: [{ token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }] },
      });
      ownForSandbox(t, t.root);
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
      await t?.close();
    });

    const api = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
      const answer = await fetch(`${t.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${A}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: answer.status, body: (await answer.json()) as T };
    };
    const file = (name: string) => readFileSync(join(t.root, name), 'utf8');
    const messageCount = async (id: string) =>
      (await api<{ session: { messageCount: number } }>('GET', `/v1/sessions/${id}`)).body.session.messageCount;

    it('asks before reverting, follows the revert events, lists a conflict’s paths as text and reverts anyway', async () => {
      const id = (await api<{ session: { id: string } }>('POST', '/v1/sessions', {})).body.session.id;
      const { page, logs } = await openConsole(browser, t.url);
      const count = (selector: string) =>
        evaluate<number>(page, `document.querySelectorAll(${JSON.stringify(selector)}).length`);
      await signIn(page, A);
      await page.evaluate(`location.hash = '#/sessions/${id}'`);
      await page.waitForSelector('.session-view .session-head dl');

      t.fake.script(
        {
          toolCalls: [
            { id: 'w1', name: 'write', arguments: { file_path: XSS, content: 'made by run one\n' } },
            bash('b1', "printf 'the notes say: ship on monday\\n' > notes.txt"),
          ],
        },
        { text: 'Run one.' },
      );
      const first = await prompt(page, 'First change', 0);
      await waitForText(page, `.run[data-run-id="${first}"] .run-end`, 'completed');
      t.fake.script({ toolCalls: [bash('b2', "printf 'and test first\\n' >> notes.txt")] }, { text: 'Run two.' });
      const second = await prompt(page, 'Second change', 1);
      await waitForText(page, `.run[data-run-id="${second}"] .run-end`, 'completed');
      const one = `.run[data-run-id="${first}"] .changes`;
      const two = `.run[data-run-id="${second}"] .changes`;
      await page.waitForSelector(`${two} .revert-btn`, { timeout: 15_000 });
      const afterTwo = file('notes.txt');
      expect(afterTwo).toBe('the notes say: ship on monday\nand test first\n');
      const messages = await messageCount(id);

      // Revert asks first, in the page; Cancel leaves everything as it was.
      await clickNow(page, `${one} .revert-btn`);
      await waitForText(page, `${one} .revert-panel`, `Revert run ${first}?`);
      await clickNow(page, `${one} .revert-cancel`);
      await page.waitForFunction(`document.querySelector('${one} .revert-panel').hidden === true`);
      expect(await messageCount(id)).toBe(messages);
      expect(file('notes.txt')).toBe(afterTwo);

      // Confirmed: both runs are reverted (files and messages); the view follows the session_reverted event.
      await clickNow(page, `${one} .revert-btn`);
      await clickNow(page, `${one} .revert-confirm`);
      await waitForText(page, `${one} .revert-panel`, 'Reverted 2 runs: 2 files written or removed');
      await page.waitForSelector(`${one}.is-reverted .unrevert-btn`);
      await page.waitForSelector(`${two}.is-reverted .revert-badge`);
      await waitForText(page, `${two} .revert-controls`, `with run ${first}`);
      expect(await count(`${two} .unrevert-btn, ${two} .revert-btn, ${one} .revert-btn`)).toBe(0);
      await page.waitForSelector(`.runs li[data-run-id="${first}"].is-reverted .reverted-chip`);
      await page.waitForSelector(`.runs li[data-run-id="${second}"].is-reverted`);
      expect(file('notes.txt')).toBe(NOTES);
      expect(existsSync(join(t.root, XSS))).toBe(false);
      expect(await messageCount(id)).toBe(0);
      await page.waitForFunction(`document.querySelector('.transcript').hidden === true`);

      // An unrevert made elsewhere (the API): the page follows the session_unreverted event.
      expect((await api('POST', `/v1/sessions/${id}/unrevert`, {})).status).toBe(200);
      await page.waitForSelector(`${one}:not(.is-reverted) .revert-btn`);
      await page.waitForSelector(`${two}:not(.is-reverted) .revert-btn`);
      await page.waitForFunction(`document.querySelectorAll('.runs li.is-reverted').length === 0`);
      expect(file('notes.txt')).toBe(afterTwo);
      expect(file(XSS)).toBe('made by run one\n');

      // Files edited since the last run: 409 REVERT_CONFLICT lists them (as text), nothing written; Revert anyway forces.
      writeFileSync(join(t.root, 'notes.txt'), 'a person edited the notes\n');
      writeFileSync(join(t.root, XSS), 'a person edited this too\n');
      await clickNow(page, `${one} .revert-btn`);
      await clickNow(page, `${one} .revert-confirm`);
      await page.waitForSelector(`${one} .revert-conflicts li`);
      expect(
        await evaluate<string[]>(
          page,
          `[...document.querySelectorAll('${one} .revert-conflicts li')].map((li) => li.textContent)`,
        ),
      ).toEqual([XSS, 'notes.txt']);
      await waitForText(page, `${one} .revert-panel`, '2 files changed since the last run');
      expect(await count('.revert-panel img, .revert-panel script')).toBe(0);
      expect(file('notes.txt')).toBe('a person edited the notes\n');
      expect(await count(`${one}.is-reverted`)).toBe(0);
      await clickNow(page, `${one} .revert-force`);
      await page.waitForSelector(`${one}.is-reverted .unrevert-btn`);
      await waitForText(page, `${one} .revert-panel`, 'Reverted 2 runs');
      expect(file('notes.txt')).toBe(NOTES);
      expect(existsSync(join(t.root, XSS))).toBe(false);

      // Opened again, the page knows what is reverted from the session's info; Unrevert from the Changes panel.
      await page.evaluate(`location.hash = '#/sessions'`);
      await page.waitForSelector('.sessions-view');
      await page.evaluate(`location.hash = '#/sessions/${id}'`);
      await page.waitForSelector(`.runs li[data-run-id="${first}"].is-reverted .reverted-chip`);
      await page.waitForSelector(`.runs li[data-run-id="${second}"].is-reverted`);
      await clickNow(page, `.runs li[data-run-id="${first}"] .changes-btn`);
      await page.waitForSelector('.changes-panel .changes.is-reverted .diff-file[data-path="notes.txt"]');
      await clickNow(page, '.changes-panel .unrevert-btn');
      await waitForText(page, '.changes-panel .revert-panel', 'Unreverted 2 runs');
      await page.waitForSelector('.changes-panel .changes:not(.is-reverted) .revert-btn');
      await page.waitForFunction(`document.querySelectorAll('.runs li.is-reverted').length === 0`);
      expect(file('notes.txt')).toBe(afterTwo);
      expect(file(XSS)).toBe('made by run one\n');
      expect(await messageCount(id)).toBe(messages);
      expect(await evaluate<unknown>(page, 'window.__xss')).toBeUndefined();
      t.fake.assertDone();
      expect(logs.filter((l) => l.startsWith('pageerror') || /content security policy/i.test(l))).toEqual([]);
    });
  },
);
