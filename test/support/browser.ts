import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Where Debian's headless Chromium is: $CHROMIUM_PATH, chromium-headless-shell, or chromium. */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].filter(
    (p): p is string => p !== undefined && p !== '',
  );
  const found = candidates.find((p) => existsSync(p));
  if (found === undefined)
    throw new Error(
      "no Chromium: install Debian's chromium-headless-shell (scripts/install-test-deps.sh does) or set CHROMIUM_PATH",
    );
  return found;
}

/** Launch headless Chromium through puppeteer-core (no browser download: the Debian binary). */
export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in CI containers: Chromium's own sandbox needs user namespaces it may not get there.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-default-apps',
      '--disable-sync',
    ],
  });
}

/** A page of the console and every request URL it made (navigations, fetches, assets and WebSockets). */
export interface ConsolePage {
  page: Page;
  requests: string[];
  /** Console messages and page errors, for failure messages. */
  logs: string[];
}

/** Open `baseUrl`/console in a new page, recording each request URL and the page's errors. */
export async function openConsole(browser: Browser, baseUrl: string, path = '/console'): Promise<ConsolePage> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const logs: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => logs.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => logs.push(`pageerror: ${error instanceof Error ? error.message : String(error)}`));
  // WebSockets are not puppeteer requests: the DevTools protocol's network domain reports them.
  const cdp = await page.createCDPSession();
  await cdp.send('Network.enable');
  cdp.on('Network.webSocketCreated', (event) => requests.push(event.url));
  await page.goto(new URL(path, baseUrl).href, { waitUntil: 'load' });
  return { page, requests, logs };
}

/**
 * Wait until the element of `selector` contains `text` (the test project has no DOM types, so the page-side
 * check is a string expression).
 */
export async function waitForText(page: Page, selector: string, text: string, timeout = 10_000): Promise<void> {
  const check = `document.querySelector(${JSON.stringify(selector)})?.textContent?.includes(${JSON.stringify(text)}) === true`;
  await page.waitForFunction(check, { timeout });
}

/**
 * Click the element of `selector` as soon as it is there and enabled, inside the page in one step: a list that
 * re-renders between puppeteer's lookup and its click ("Node is detached from document") cannot make it miss.
 */
export async function clickNow(page: Page, selector: string, timeout = 10_000): Promise<void> {
  const click = `(() => { const e = document.querySelector(${JSON.stringify(selector)}); if (!e || e.disabled) return false; e.click(); return true; })()`;
  await page.waitForFunction(click, { timeout });
}
