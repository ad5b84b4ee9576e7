import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { bash, ownForSandbox } from '../changes/changes-helpers.js';
import { launchBrowser, openConsole, waitForText, type ConsolePage } from '../support/browser.js';
import { evaluate, prompt, signIn } from '../support/console-actions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const A = 'console-changes-token-tenant-a1';
const XSS = '<img src=x onerror="window.__xss=1">';

describe.skipIf(!bwrapWorks())('the console: a run’s diff and Fork from here (issue 32) in headless Chromium', () => {
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestServer({
      files: { 'notes.txt': 'the notes say: ship on friday\nkeep this line\n' },
      config: { apiTokens: [{ token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }] },
    });
    // One tenant: the server's workspace root is the sessions' workspace, given to the sandbox's user.
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
      headers: { authorization: `Bearer ${A}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: answer.status, body: (await answer.json()) as T };
  };
  const texts = (page: ConsolePage['page'], selector: string): Promise<string[]> =>
    evaluate<string[]>(page, `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.textContent)`);

  it('shows the files a run changed and their added and removed lines; names and lines stay text; Fork from here opens the fork', async () => {
    const id = (await api<{ session: { id: string } }>('POST', '/v1/sessions', { askUser: true })).body.session.id;
    const { page, logs } = await openConsole(browser, t.url);
    await signIn(page, A);
    await page.evaluate(`location.hash = '#/sessions/${id}'`);
    await page.waitForSelector('.session-view .session-head dl');

    t.fake.script(
      {
        toolCalls: [
          {
            id: 'w1',
            name: 'write',
            arguments: { file_path: XSS, content: '<script>window.__xss=2</script>\nhello\n' },
          },
          bash('b1', "printf 'the notes say: ship on monday\\nkeep this line\\nand test first\\n' > notes.txt"),
        ],
      },
      { text: 'Changed two files.' },
    );
    const first = await prompt(page, 'Change the notes', 0);
    const changes = `.run[data-run-id="${first}"] .changes`;
    // The run_changes_captured event puts a diff view under the run; it loads at the run's end.
    await page.waitForSelector(`${changes} .diff-file[data-path="notes.txt"]`, { timeout: 15_000 });
    await waitForText(page, `.run[data-run-id="${first}"] .run-end`, 'completed');
    expect(
      await evaluate<Array<[string, string]>>(
        page,
        `[...document.querySelectorAll('${changes} .diff-files li')].map((li) => [li.dataset.path, li.dataset.status])`,
      ),
    ).toEqual(
      expect.arrayContaining([
        [XSS, 'added'],
        ['notes.txt', 'modified'],
      ]),
    );
    expect(await texts(page, `${changes} .diff-files li`)).toHaveLength(2);
    const notes = `${changes} .diff-file[data-path="notes.txt"]`;
    expect(await texts(page, `${notes} summary .diff-counts`)).toEqual(['+2 −1']);
    expect(await texts(page, `${notes} .diff-add .diff-text`)).toEqual([
      'the notes say: ship on monday',
      'and test first',
    ]);
    expect(await texts(page, `${notes} .diff-del .diff-text`)).toEqual(['the notes say: ship on friday']);
    expect(await texts(page, `${notes} .diff-ctx .diff-text`)).toEqual(['keep this line']);
    // The model's file name and lines are text: no element was made of them and nothing ran.
    const added = await evaluate<string[]>(
      page,
      `[...document.querySelectorAll('${changes} .diff-file')].filter((f) => f.dataset.path === ${JSON.stringify(XSS)}).map((f) => f.querySelector('summary').textContent + '|' + [...f.querySelectorAll('.diff-add .diff-text')].map((l) => l.textContent).join('|'))`,
    );
    expect(added).toEqual([`added ${XSS} +2 −0|<script>window.__xss=2</script>|hello`]);
    expect(await evaluate<number>(page, `document.querySelectorAll('.changes img, .changes script').length`)).toBe(0);
    expect(await evaluate<unknown>(page, 'window.__xss')).toBeUndefined();

    // A run that only reads has no change set: the runs list's Changes says so in the Changes panel.
    t.fake.script(
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'notes.txt' } }] },
      { text: 'Read.' },
    );
    const second = await prompt(page, 'Read the notes', 1);
    await waitForText(page, `.run[data-run-id="${second}"] .run-end`, 'completed');
    expect(
      await evaluate<number>(page, `document.querySelectorAll('.run[data-run-id="${second}"] .changes').length`),
    ).toBe(0);
    await page.waitForSelector(`.runs li[data-run-id="${second}"] .changes-btn`);
    await page.click(`.runs li[data-run-id="${second}"] .changes-btn`);
    await waitForText(page, '.changes-panel', 'the run made no call that could change files');
    // The first run's changes from the list: the same files in the panel.
    await page.click(`.runs li[data-run-id="${first}"] .changes-btn`);
    await page.waitForSelector('.changes-panel .diff-file[data-path="notes.txt"]');
    expect(await texts(page, '.changes-panel .diff-file[data-path="notes.txt"] .diff-del .diff-text')).toEqual([
      'the notes say: ship on friday',
    ]);
    t.fake.assertDone();

    // Fork from here on the second run: a new session with the transcript as that run found it, opened at once.
    await page.click(`.runs li[data-run-id="${second}"] .fork-btn`);
    await page.waitForFunction(`location.hash !== '#/sessions/${id}'`, { timeout: 10_000 });
    const forkId = decodeURIComponent((await evaluate<string>(page, 'location.hash')).replace('#/sessions/', ''));
    await waitForText(page, '.session-head', 'Fork of');
    await waitForText(page, '.session-head', second);
    const forks = (await api<{ sessions: Array<{ id: string }> }>('GET', `/v1/sessions?forkedFrom=${id}`)).body
      .sessions;
    expect(forks.map((s) => s.id)).toEqual([forkId]);
    const fork = (
      await api<{ session: { forkedFrom: { sessionId: string; atRunId: string; atMessage: number } } }>(
        'GET',
        `/v1/sessions/${forkId}`,
      )
    ).body.session;
    expect(fork.forkedFrom).toMatchObject({ sessionId: id, atRunId: second });
    const parent = (await api<{ messages: unknown[] }>('GET', `/v1/sessions/${id}/history`)).body.messages;
    const forked = (await api<{ messages: unknown[] }>('GET', `/v1/sessions/${forkId}/history`)).body.messages;
    expect(forked).toEqual(parent.slice(0, fork.forkedFrom.atMessage));
    expect(forked.length).toBeGreaterThan(0);
    await waitForText(page, '.transcript', `${forked.length} message`);
    // Back to the parent from the fork's head.
    await page.click('.session-head a.fork-parent');
    await page.waitForFunction(`location.hash === '#/sessions/${id}'`);
    expect(logs.filter((l) => l.startsWith('pageerror') || /content security policy/i.test(l))).toEqual([]);
  });
});
