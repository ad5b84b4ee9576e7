import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { clickNow, launchBrowser, openConsole, waitForText, type ConsolePage } from '../support/browser.js';
import { createInPage, evaluate, prompt, signIn } from '../support/console-actions.js';
import { eventually } from '../support/run-helpers.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const A = 'console-token-tenant-a-000001';
const B = 'console-token-tenant-b-000001';
const XSS = '<img src=x onerror="window.__xss=1">';

/** REST as tenant `token`. */
async function api<T>(
  t: TestServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const answer = await fetch(`${t.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: answer.status, body: (await answer.json()) as T };
}

/** Every retained event of a run over REST. */
async function restEvents(t: TestServer, token: string, sessionId: string, runId: string): Promise<EventEnvelope[]> {
  const page = await api<{ events: EventEnvelope[] }>(
    t,
    token,
    'GET',
    `/v1/sessions/${sessionId}/runs/${runId}/events?after=-1&limit=1000`,
  );
  return page.body.events;
}

/** The session_sequence numbers the page rendered for a run (every event lands in one element's data-seqs). */
async function renderedSeqs(page: Page, runId: string): Promise<number[]> {
  const lists = await evaluate<string[]>(
    page,
    `[...document.querySelectorAll('.run[data-run-id=${JSON.stringify(runId)}] [data-seqs]')].map((e) => e.dataset.seqs)`,
  );
  return lists.flatMap((list) => list.split(' ').map(Number)).sort((x, y) => x - y);
}

describe('the console in headless Chromium against a real server', () => {
  let t: TestServer;
  let browser: Browser;
  const pages: ConsolePage[] = [];
  /** Origins the pages may talk to: the server, and the TCP proxy in front of it (http and ws). */
  const allowed = new Set<string>();
  const allow = (base: string): void => {
    const url = new URL(base);
    allowed.add(`http://${url.host}`);
    allowed.add(`ws://${url.host}`);
  };
  const open = async (base = t.url, path?: string): Promise<ConsolePage> => {
    const opened = await openConsole(browser, base, path);
    pages.push(opened);
    return opened;
  };

  beforeAll(async () => {
    t = await startTestServer({
      files: {
        'tenant-a/notes.txt': 'the notes say: ship on friday\n',
        'tenant-a/page.html': '<script>window.__xss=2</script><b>bold?</b>\n',
      },
      config: {
        apiTokens: [
          { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
          { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
        ],
      },
    });
    browser = await launchBrowser();
    allow(t.url);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in with a token, creates a session, and shows a read tool call and the streamed answer live', async () => {
    const { page, requests, logs } = await open();
    await waitForText(page, '#app', 'Sign in');
    await signIn(page, A);
    // The token is kept in this tab's sessionStorage only, and never put in a URL.
    expect(await evaluate<string | null>(page, `sessionStorage.getItem('a3s.console.token')`)).toBe(A);
    const id = await createInPage(page, 'server-default');
    // The console answers questions, so the sessions it creates offer ask_user.
    expect((await api<{ session: { askUser: boolean } }>(t, A, 'GET', `/v1/sessions/${id}`)).body.session.askUser).toBe(
      true,
    );

    t.fake.script(
      { toolCalls: [{ id: 'c_read', name: 'read', arguments: { file_path: 'notes.txt' } }] },
      // The answer comes 1.5 s after the tool ran, so the page must show the call before the run ends.
      { text: 'The notes say to ship on Friday.', chunks: 4, chunkDelayMs: 50, delayMs: 1500 },
    );
    const runId = await prompt(page, 'What do the notes say?', 0);
    await waitForText(page, '.log [data-tool-id="c_read"] .tool-output', 'ship on friday');
    expect(await evaluate<boolean>(page, `document.querySelector('.log .run-end') === null`)).toBe(true);
    const toolText = await evaluate<string>(page, `document.querySelector('.log [data-tool-id="c_read"]').textContent`);
    expect(toolText).toContain('read');
    expect(toolText).toContain('"file_path": "notes.txt"');
    await waitForText(page, '.log .run-end', 'completed');
    // text_delta chunks accumulate into one assistant message.
    const answers = await evaluate<string[]>(
      page,
      `[...document.querySelectorAll('.log .message-assistant .message-text')].map((e) => e.textContent)`,
    );
    expect(answers).toEqual(['The notes say to ship on Friday.']);
    // The runs panel lists the run with its status and tokens; the list page shows the last run.
    await waitForText(page, `.runs li[data-run-id="${runId}"]`, 'completed');
    expect(await renderedSeqs(page, runId)).toEqual(
      (await restEvents(t, A, id, runId)).map((e) => e.metadata.session_sequence),
    );
    // The sessions list shows the session with its last run's status.
    await clickNow(page, '.crumbs a');
    await waitForText(page, `tr[data-session-id="${id}"]`, 'completed');
    for (const url of requests) expect(url).not.toContain(A);
    // No script error, no CSP violation: the only console error is the sign-in probe's expected 401.
    expect(logs.filter((l) => l.startsWith('pageerror') || (l.startsWith('error') && !l.includes('401')))).toEqual([]);
    t.fake.assertDone();

    // A stored token the server refuses returns to the sign-in form with a message; sign out forgets it.
    await clickNow(page, '.topnav button');
    await waitForText(page, '#app', 'Signed out');
    expect(await evaluate<string | null>(page, `sessionStorage.getItem('a3s.console.token')`)).toBeNull();
    await evaluate(page, `sessionStorage.setItem('a3s.console.token', 'not-a-valid-token-000000')`);
    await page.reload({ waitUntil: 'load' });
    await waitForText(page, '#app', 'The stored token was refused (401)');
  });

  it('a confirmation approved in the page releases the run; one answered elsewhere disappears; "always" lets the same call pass', async () => {
    const { page } = await open();
    await signIn(page, A);
    const id = await createInPage(page, 'ask-before-changes');

    t.fake.script(
      {
        toolCalls: [
          { id: 'c_w1', name: 'write', arguments: { file_path: 'out.txt', content: 'approved in the console\n' } },
        ],
      },
      { text: 'Wrote out.txt.' },
    );
    const first = await prompt(page, 'Write out.txt', 0);
    await page.waitForSelector('.confirm[data-tool-id="c_w1"]');
    const card = await evaluate<string>(page, `document.querySelector('.confirm[data-tool-id="c_w1"]').textContent`);
    expect(card).toContain('write');
    expect(card).toContain('"file_path": "out.txt"');
    expect(card).toContain('approved in the console');
    await clickNow(page, '.confirm[data-tool-id="c_w1"] .btn-primary');
    await waitForText(page, `.run[data-run-id="${first}"] .run-end`, 'completed');
    expect(await evaluate<number>(page, `document.querySelectorAll('.confirm').length`)).toBe(0);
    expect(readFileSync(join(t.root, 'tenant-a', 'out.txt'), 'utf8')).toBe('approved in the console\n');

    t.fake.script(
      { toolCalls: [{ id: 'c_w2', name: 'write', arguments: { file_path: 'other.txt', content: 'never\n' } }] },
      { text: 'Not written.' },
    );
    const second = await prompt(page, 'Write other.txt', 1);
    await page.waitForSelector('.confirm[data-tool-id="c_w2"]');
    // Answered elsewhere (a CI bot, the CLI): the card goes away and the run goes on.
    expect(
      (await api(t, A, 'POST', `/v1/sessions/${id}/confirmations/c_w2`, { approved: false, reason: 'not now' })).status,
    ).toBe(200);
    await page.waitForFunction(`document.querySelector('.confirm[data-tool-id="c_w2"]') === null`, { timeout: 10_000 });
    await waitForText(page, `.run[data-run-id="${second}"] .run-end`, 'completed');
    await waitForText(page, `.run[data-run-id="${second}"]`, 'Rejected');
    expect(existsSync(join(t.root, 'tenant-a', 'other.txt'))).toBe(false);

    // "Always for this session": the next write of the same file passes without asking.
    t.fake.script(
      { toolCalls: [{ id: 'c_w3', name: 'write', arguments: { file_path: 'log.txt', content: 'one\n' } }] },
      { toolCalls: [{ id: 'c_w4', name: 'write', arguments: { file_path: 'log.txt', content: 'two\n' } }] },
      { text: 'Logged twice.' },
    );
    const third = await prompt(page, 'Write log.txt twice', 2);
    await page.waitForSelector('.confirm[data-tool-id="c_w3"]');
    await clickNow(page, '.confirm[data-tool-id="c_w3"] .actions .btn:not(.btn-primary):not(.btn-danger)');
    await waitForText(page, `.run[data-run-id="${third}"] .run-end`, 'completed');
    const events = await restEvents(t, A, id, third);
    expect(events.filter((e) => e.type === 'confirmation_required').map((e) => e.payload.tool_id)).toEqual(['c_w3']);
    expect(readFileSync(join(t.root, 'tenant-a', 'log.txt'), 'utf8')).toBe('two\n');
    t.fake.assertDone();
  });

  it('the events socket cut mid-run: the page reconnects from its cursor and shows every event exactly once', async () => {
    const port = new URL(t.url).port;
    let proxy: TcpProxy | undefined;
    try {
      proxy = await startTcpProxy(`redis://127.0.0.1:${port}`);
      const base = `http://127.0.0.1:${new URL(proxy.url).port}`;
      allow(base);
      const created = await api<{ session: { id: string } }>(t, A, 'POST', '/v1/sessions', {});
      const id = created.body.session.id;
      const { page } = await open(base);
      await signIn(page, A);
      await page.evaluate(`location.hash = '#/sessions/${id}'`);
      await page.waitForSelector('.session-view .session-head dl');

      const words = Array.from({ length: 24 }, (_, i) => `w${i}`);
      t.fake.script({ text: words.join(' '), chunks: 24, chunkDelayMs: 80 });
      const runId = await prompt(page, 'Stream slowly', 0);
      await waitForText(page, `.run[data-run-id="${runId}"] .message-assistant`, 'w3');
      proxy.cut();
      proxy.restore();
      await waitForText(page, `.run[data-run-id="${runId}"] .run-end`, 'completed', 15_000);
      const rest = (await restEvents(t, A, id, runId)).map((e) => e.metadata.session_sequence);
      expect(await renderedSeqs(page, runId)).toEqual(rest);
      expect(
        await evaluate<string>(
          page,
          `document.querySelector('.run[data-run-id="${runId}"] .message-assistant .message-text').textContent`,
        ),
      ).toBe(words.join(' '));
      await waitForText(page, '.connection', 'reconnected');
      t.fake.assertDone();
    } finally {
      await proxy?.close();
    }
  });

  it('cancels a running run from the runs list; Resume on a failed run asks the server to continue it from its checkpoint', async () => {
    const id = (await api<{ session: { id: string } }>(t, A, 'POST', '/v1/sessions', {})).body.session.id;
    const { page } = await open();
    await signIn(page, A);
    await page.evaluate(`location.hash = '#/sessions/${id}'`);
    await page.waitForSelector('.session-view .session-head dl');

    t.fake.script({ hang: true });
    const hung = await prompt(page, 'Think forever', 0);
    await waitForText(page, '.busy', hung);
    // Single flight: a second prompt is refused at once, naming the run that holds the session.
    await page.type('#prompt', 'And another thing');
    await page.keyboard.press('Enter');
    await waitForText(page, '.prompt-form .form-status', `Busy: run ${hung}`);
    await evaluate(page, `document.querySelector('#prompt').value = ''`);
    await page.waitForSelector(`.runs li[data-run-id="${hung}"] .btn-danger`);
    await clickNow(page, `.runs li[data-run-id="${hung}"] .btn-danger`);
    await waitForText(page, `.run[data-run-id="${hung}"] .run-end`, 'cancelled');
    await waitForText(page, '.busy', 'Idle');

    // Resume continues a failed run from its loop checkpoint, which only a run lost with its node keeps (a run
    // that failed on its own deleted it): the page sends the resume and shows the server's answer.
    t.fake.script(
      { toolCalls: [{ id: 'c_r1', name: 'read', arguments: { file_path: 'notes.txt' } }] },
      { error: { status: 400, message: 'bad request from the fake' } },
    );
    const failed = await prompt(page, 'Read then fail', 1);
    await waitForText(page, `.runs li[data-run-id="${failed}"]`, 'PROVIDER_ERROR');
    await clickNow(page, `.runs li[data-run-id="${failed}"] .actions .btn:not(.btn-danger)`);
    await waitForText(page, '.toast', 'CHECKPOINT_NOT_FOUND');
    t.fake.assertDone();
  });

  it("another tenant's session is not listed, and its URL shows not found", async () => {
    const other = (
      await api<{ session: { id: string } }>(t, B, 'POST', '/v1/sessions', { sessionId: 'bobs-private-session' })
    ).body.session.id;
    const mine = (await api<{ session: { id: string } }>(t, A, 'POST', '/v1/sessions', { sessionId: 'alices-session' }))
      .body.session.id;
    const { page } = await open();
    await signIn(page, A);
    await page.waitForSelector(`tr[data-session-id="${mine}"]`);
    expect(
      await evaluate<string[]>(
        page,
        `[...document.querySelectorAll('tr[data-session-id]')].map((r) => r.dataset.sessionId)`,
      ),
    ).not.toContain(other);
    await page.evaluate(`location.hash = '#/sessions/${other}'`);
    await waitForText(page, '.content', 'Session not found');
  });

  it('renders model text and tool output as text: markup never executes; the page has a strict CSP and fits 375 px', async () => {
    const answer = await fetch(`${t.url}/console/`);
    const csp = answer.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');

    const { page } = await open();
    await page.setViewport({ width: 375, height: 800 });
    await signIn(page, A);
    await createInPage(page, 'read-only');
    t.fake.script(
      { toolCalls: [{ id: 'c_html', name: 'read', arguments: { file_path: 'page.html' } }] },
      { text: `Here: ${XSS}` },
    );
    const runId = await prompt(page, `Show ${XSS}`, 0);
    await waitForText(page, `.run[data-run-id="${runId}"] .run-end`, 'completed');
    await eventually(
      async () =>
        (await evaluate<string>(
          page,
          `document.querySelector('.log .message-assistant .message-text')?.textContent ?? ''`,
        )) === `Here: ${XSS}`,
      'the answer as text',
    );
    expect(
      await evaluate<string>(page, `document.querySelector('[data-tool-id="c_html"] .tool-output').textContent`),
    ).toContain('<script>window.__xss=2</script>');
    expect(await evaluate<number>(page, `document.querySelectorAll('.log img, .log script, .log b').length`)).toBe(0);
    expect(await evaluate<unknown>(page, 'window.__xss')).toBeUndefined();
    // Phone width: nothing wider than the screen.
    expect(await evaluate<number>(page, 'document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    t.fake.assertDone();
  });

  it('no page sent a request to any host but the server: no CDN, no font, no analytics', () => {
    const urls = pages.flatMap((p) => p.requests);
    expect(urls.length).toBeGreaterThan(20);
    expect(urls.some((url) => url.startsWith('ws://'))).toBe(true);
    for (const url of urls) expect(allowed, url).toContain(`${new URL(url).protocol}//${new URL(url).host}`);
  });
});

describe('the console on a loopback server without tokens', () => {
  it('needs no sign-in', async () => {
    const t = await startTestServer();
    const browser = await launchBrowser();
    try {
      const { page, requests } = await openConsole(browser, t.url);
      await page.waitForSelector('.sessions-view');
      await waitForText(page, '.topnav', 'Anonymous');
      for (const url of requests) expect(new URL(url).hostname, url).toBe('127.0.0.1');
    } finally {
      await browser.close();
      await t.close();
    }
  });
});
