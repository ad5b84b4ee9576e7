import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickNow, launchBrowser, openConsole, waitForText } from '../support/browser.js';
import { createInPage, evaluate, prompt, signIn } from '../support/console-actions.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startNginx, type NginxBalancer } from '../support/nginx-balancer.js';
import { startRedisNodes } from '../support/redis-target.js';
import { tempDir, type TestServer } from '../support/test-server.js';

const TOKEN = 'console-balancer-token-tenant-a-0001';

// The console in headless Chromium, served by and talking to two nodes through Debian's nginx (plain
// round-robin): its REST calls and its WebSocket land on either node, whichever owns the session.
describe('the console through a round-robin nginx in front of two nodes', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  let lb: NginxBalancer;
  let browser: Browser;
  beforeAll(async () => {
    fake = await startFakeProvider();
    [a, b] = await startRedisNodes(fake, 'a3s-console-lb', {
      apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
      workspaceRoots: [tempDir('a3s-console-lb-ws-')],
    });
    lb = await startNginx([new URL(a.url).host, new URL(b.url).host]);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await lb?.close();
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('creates a session, streams a run live, and approves a confirmation in the page', async () => {
    const { page, requests, logs } = await openConsole(browser, lb.url);
    await waitForText(page, '#app', 'Sign in');
    await signIn(page, TOKEN);
    const id = await createInPage(page, 'ask-before-changes');
    fake.script(
      { toolCalls: [{ id: 'lb_w1', name: 'write', arguments: { file_path: 'lb.txt', content: 'through nginx\n' } }] },
      { text: 'Wrote it through the balancer.', chunks: 3 },
    );
    const runId = await prompt(page, 'Write lb.txt', 0);
    await page.waitForSelector('.confirm[data-tool-id="lb_w1"]');
    await clickNow(page, '.confirm[data-tool-id="lb_w1"] .btn-primary');
    await waitForText(page, `.run[data-run-id="${runId}"] .run-end`, 'completed');
    const answers = await evaluate<string[]>(
      page,
      `[...document.querySelectorAll('.log .message-assistant .message-text')].map((e) => e.textContent)`,
    );
    expect(answers).toEqual(['Wrote it through the balancer.']);
    // A reload (new REST calls and a new socket, on whichever node) shows the same session and run.
    await page.reload({ waitUntil: 'load' });
    await waitForText(page, `.runs li[data-run-id="${runId}"]`, 'completed');
    expect(await evaluate<string>(page, 'location.hash')).toBe(`#/sessions/${encodeURIComponent(id)}`);
    // The page only ever talked to the balancer, never to a node's own address.
    const hosts = new Set(requests.map((url) => new URL(url).host));
    expect([...hosts]).toEqual([new URL(lb.url).host]);
    expect(logs.filter((l) => l.startsWith('pageerror') || (l.startsWith('error') && !l.includes('401')))).toEqual([]);
  });
});
