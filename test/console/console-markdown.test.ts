import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole, waitForText, type ConsolePage } from '../support/browser.js';
import { evaluate, prompt, signIn } from '../support/console-actions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const A = 'console-markdown-token-00001';
const COLS = 20;
const ROWS = 200;
const CODE = 'const a = 1 < 2 && "<script>alert(1)</script>";\nconsole.log(`${a}`);';

/** The model's hostile answer: `tracker` is the origin of a local server that counts every request it gets. */
function hostileAnswer(tracker: string): string {
  const header = `| ${Array.from({ length: COLS }, (_, c) => `h${c}`).join(' | ')} |`;
  const rule = `|${Array.from({ length: COLS }, (_, c) => (c === 1 ? ':-:' : c === 2 ? '--:' : '---')).join('|')}|`;
  const rows = Array.from(
    { length: ROWS },
    (_, r) => `| ${Array.from({ length: COLS }, (_, c) => (c === 0 ? `**r${r}**` : `${r}.${c}`)).join(' | ')} |`,
  );
  return [
    '# Title heading',
    '',
    '## Second heading',
    '',
    'Some *em*, **strong**, `code <b>x</b>`, ~~gone~~ and AT&amp;T.',
    '',
    '[x](javascript:alert(1)) [d](data:text/html,hi) [v](vbscript:msgbox(1)) [r](/v1/sessions) [J](JaVaScRiPt:alert(2))',
    '',
    `[good](https://example.com/a?b=1 "Title") <mailto:someone@example.com> [local](${tracker}/linked)`,
    '',
    '<img src=x onerror="window.__xss=1">',
    '',
    '<script>window.__xss=2</script>',
    '',
    'Inline <svg onload="window.__xss=3"></svg> and <a href="javascript:window.__xss=4">a tag</a>.',
    '',
    `![i](http://127.0.0.1:1/track.png) ![t](${tracker}/track.png "tracked") ![j](javascript:alert(5))`,
    '',
    '- one',
    '- two',
    '  1. nested first',
    '  2. nested second',
    '- [x] done task',
    '',
    '> quoted',
    '',
    '```ts',
    CODE,
    '```',
    '',
    header,
    rule,
    ...rows,
    '',
    'The end.',
  ].join('\n');
}

/** Page-side: a summary of what the Markdown of the message `root` selects became. */
function domReport(root: string): string {
  return `(() => {
    const root = document.querySelector(${JSON.stringify(root)});
    const all = [...document.querySelectorAll('*')];
    return {
      onAttributes: all.flatMap((e) => [...e.attributes].filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => e.tagName + ' ' + a.name)),
      forbidden: document.querySelectorAll('img, svg, iframe, object, embed, video, audio, link[rel=preload]').length,
      scripts: [...document.querySelectorAll('script')].map((s) => s.src),
      xss: window.__xss ?? null,
      h1: [...root.querySelectorAll('h1')].map((e) => e.textContent),
      h2: [...root.querySelectorAll('h2')].map((e) => e.textContent),
      em: root.querySelector('p em')?.textContent ?? null,
      strong: root.querySelector('p strong')?.textContent ?? null,
      del: root.querySelector('p del')?.textContent ?? null,
      codespan: root.querySelector('p code')?.textContent ?? null,
      links: [...root.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), rel: a.getAttribute('rel'), target: a.getAttribute('target'), text: a.textContent, cls: a.className, title: a.getAttribute('title') })),
      ulItems: root.querySelectorAll(':scope > ul > li').length,
      olItems: [...root.querySelectorAll('ul > li > ol > li')].map((e) => e.textContent),
      task: root.querySelector('li.md-task input[type=checkbox]')?.checked ?? null,
      quote: root.querySelector('blockquote')?.textContent ?? null,
      code: root.querySelector('pre.md-code > code.language-ts')?.textContent ?? null,
      th: [...root.querySelectorAll('table thead th')].map((e) => e.textContent),
      thClasses: [...root.querySelectorAll('table thead th')].slice(0, 3).map((e) => e.className),
      rows: root.querySelectorAll('table tbody tr').length,
      cellsPerRow: [...new Set([...root.querySelectorAll('table tbody tr')].map((r) => r.children.length))],
      lastRowFirst: root.querySelector('table tbody tr:last-child td strong')?.textContent ?? null,
      lastCell: root.querySelector('table tbody tr:last-child td:last-child')?.textContent ?? null,
      text: root.textContent,
      styled: all.filter((e) => e.hasAttribute('style')).length,
    };
  })()`;
}

/** Page-side: record every element of a forbidden kind or on* attribute ever added, and each re-render of an answer. */
const WATCH = `(() => {
  const watch = { seen: [], renders: 0 };
  window.__watch = watch;
  const bad = (e) => e.nodeType === 1 && (/^(IMG|SCRIPT|SVG|IFRAME|OBJECT|EMBED|VIDEO|AUDIO)$/i.test(e.tagName) || [...e.attributes].some((a) => /^on/i.test(a.name)));
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes' && /^on/i.test(r.attributeName)) watch.seen.push(r.target.tagName + ' ' + r.attributeName);
      if (r.target.nodeType === 1 && r.target.matches('.message-assistant .message-text') && r.addedNodes.length > 0) watch.renders += 1;
      for (const n of r.addedNodes) {
        if (n.nodeType !== 1) continue;
        for (const e of [n, ...n.querySelectorAll('*')]) if (bad(e)) watch.seen.push(e.tagName);
      }
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true });
})()`;

interface Report {
  onAttributes: string[];
  forbidden: number;
  scripts: string[];
  xss: unknown;
  h1: string[];
  h2: string[];
  em: string | null;
  strong: string | null;
  del: string | null;
  codespan: string | null;
  links: Array<{ href: string; rel: string; target: string; text: string; cls: string; title: string | null }>;
  ulItems: number;
  olItems: string[];
  task: boolean | null;
  quote: string | null;
  code: string | null;
  th: string[];
  thClasses: string[];
  rows: number;
  cellsPerRow: number[];
  lastRowFirst: string | null;
  lastCell: string | null;
  text: string;
  styled: number;
}

function expectSafeAndRendered(report: Report, tracker: string): void {
  // Nothing executable or fetching: no on* attributes, no <img>/<svg>, only the console's own script.
  expect(report.onAttributes).toEqual([]);
  expect(report.forbidden).toBe(0);
  expect(report.scripts).toHaveLength(1);
  expect(report.scripts[0]).toMatch(/\/console\.js$/);
  expect(report.xss).toBeNull();
  expect(report.styled).toBe(0);
  // Raw HTML and unsafe links are shown as the text the model wrote.
  for (const literal of [
    '[x](javascript:alert(1))',
    '[d](data:text/html,hi)',
    '[v](vbscript:msgbox(1))',
    '[r](/v1/sessions)',
    '[J](JaVaScRiPt:alert(2))',
    '![j](javascript:alert(5))',
    '<img src=x onerror="window.__xss=1">',
    '<script>window.__xss=2</script>',
    '<svg onload="window.__xss=3">',
    '<a href="javascript:window.__xss=4">',
    'AT&T',
  ])
    expect(report.text).toContain(literal);
  // Links: only http(s) and mailto, each opening apart with no opener or referrer; images are links.
  expect(report.links.map((l) => l.href)).toEqual([
    'https://example.com/a?b=1',
    'mailto:someone@example.com',
    `${tracker}/linked`,
    'http://127.0.0.1:1/track.png',
    `${tracker}/track.png`,
  ]);
  for (const link of report.links) {
    expect(link.rel).toBe('noopener noreferrer');
    expect(link.target).toBe('_blank');
    expect(['http:', 'https:', 'mailto:']).toContain(new URL(link.href).protocol);
  }
  expect(report.links[0]).toMatchObject({ text: 'good', title: 'Title', cls: 'md-link' });
  expect(report.links.slice(3).map((l) => [l.text, l.cls])).toEqual([
    ['image: i', 'md-image-link'],
    ['image: t', 'md-image-link'],
  ]);
  // Headings, emphasis, lists, quote, code and the table render as elements.
  expect(report.h1).toEqual(['Title heading']);
  expect(report.h2).toEqual(['Second heading']);
  expect([report.em, report.strong, report.del, report.codespan]).toEqual(['em', 'strong', 'gone', 'code <b>x</b>']);
  expect(report.ulItems).toBe(3);
  expect(report.olItems).toEqual(['nested first', 'nested second']);
  expect(report.task).toBe(true);
  expect(report.quote).toBe('quoted');
  expect(report.code).toBe(CODE);
  expect(report.th).toEqual(Array.from({ length: COLS }, (_, c) => `h${c}`));
  expect(report.thClasses).toEqual(['', 'align-center', 'align-right']);
  expect(report.rows).toBe(ROWS);
  expect(report.cellsPerRow).toEqual([COLS]);
  expect(report.lastRowFirst).toBe(`r${ROWS - 1}`);
  expect(report.lastCell).toBe(`${ROWS - 1}.${COLS - 1}`);
  expect(report.text).toContain('The end.');
}

describe('the console renders model Markdown safely (issue 34) in headless Chromium', () => {
  let t: TestServer;
  let browser: Browser;
  let tracker: Server;
  let trackerOrigin: string;
  const hits: string[] = [];
  const pages: ConsolePage[] = [];

  beforeAll(async () => {
    tracker = createServer((request, response) => {
      hits.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'image/png' }).end();
    });
    await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
    trackerOrigin = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
    t = await startTestServer({
      config: { apiTokens: [{ token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }] },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise<void>((resolve) => (tracker ? tracker.close(() => resolve()) : resolve()));
  });

  const openSession = async (id: string): Promise<Page> => {
    const opened = await openConsole(browser, t.url);
    pages.push(opened);
    await signIn(opened.page, A);
    await opened.page.evaluate(`location.hash = '#/sessions/${id}'`);
    await opened.page.waitForSelector('.session-view .session-head dl');
    return opened.page;
  };

  it('streams hostile Markdown into elements: no script, image, handler or unsafe link; nothing fetched', async () => {
    const created = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${A}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const id = ((await created.json()) as { session: { id: string } }).session.id;
    const page = await openSession(id);
    const answer = hostileAnswer(trackerOrigin);
    // Many chunks: the block is re-rendered as deltas arrive, through half-open fences and half tables.
    t.fake.script({ text: answer, chunks: 40, chunkDelayMs: 15 });
    // Every intermediate render is watched too: an element or handler that appears for one delta is a finding.
    await page.evaluate(WATCH);
    const runId = await prompt(page, 'Show me everything', 0);
    const message = `.run[data-run-id="${runId}"] .message-assistant .message-text`;
    await waitForText(page, `.run[data-run-id="${runId}"] .run-end`, 'completed', 20_000);
    expectSafeAndRendered(await evaluate<Report>(page, domReport(message)), trackerOrigin);
    const watched = await evaluate<{ seen: string[]; renders: number }>(page, 'window.__watch');
    expect(watched.seen).toEqual([]);
    // The block was re-rendered as deltas arrived, not once at the end.
    expect(watched.renders).toBeGreaterThan(10);

    // The transcript (a fresh page of the session) renders the same answer the same way.
    const again = await openSession(id);
    await again.waitForSelector('.transcript .message-assistant .message-text table tbody tr:nth-child(200)', {
      timeout: 10_000,
    });
    expectSafeAndRendered(
      await evaluate<Report>(again, domReport('.transcript .message-assistant .message-text')),
      trackerOrigin,
    );

    // Nothing the model named was requested: not by the pages, not at the counting server.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hits).toEqual([]);
    for (const opened of pages) {
      expect(opened.requests.filter((url) => url.includes('127.0.0.1:1/') || url.startsWith(trackerOrigin))).toEqual(
        [],
      );
      expect(
        opened.requests.filter((url) => !url.startsWith(t.url) && !url.startsWith(t.url.replace('http', 'ws'))),
      ).toEqual([]);
      expect(opened.logs.filter((line) => /pageerror|Content Security Policy|Refused/i.test(line))).toEqual([]);
    }
    t.fake.assertDone();
  }, 60_000);
});
