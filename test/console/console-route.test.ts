import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole, waitForText } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TOKEN = 'console-route-token-0123456789';

describe('GET /console', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: { apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'acme', scopes: ['sessions'] }] },
    });
  });
  afterAll(async () => t.close());

  it('serves the page at /console and /console/ without a token, with a strict CSP', async () => {
    const slash = await fetch(`${t.url}/console/`);
    expect(slash.status).toBe(200);
    const page = await fetch(`${t.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    // Attachment thumbnails are data: URLs the page builds from bytes it fetched with the token: images from
    // this origin and data: only, never blob: or another host.
    const img = csp
      .split(';')
      .map((d) => d.trim())
      .find((d) => d.startsWith('img-src'));
    expect(img).toBe("img-src 'self' data:");
    expect(csp).not.toMatch(/blob:|https?:|\*/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/console/console.js"></script>');
    expect(await slash.text()).toBe(html);
    expect(html).not.toMatch(/<script>|style=|https?:\/\//);
  });

  it('serves the bundle and stylesheet with their types and answers 304 to a matching ETag', async () => {
    const js = await fetch(`${t.url}/console/console.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const body = await js.text();
    expect(body.length).toBeGreaterThan(1000);
    // Bundled: no bare imports left for a browser to resolve, no other host to load from.
    expect(body).not.toMatch(/\bimport\s*["'{]|from\s*["'](?![./])/);
    const etag = js.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${t.url}/console/console.js`, { headers: { 'if-none-match': etag ?? '' } });
    expect(again.status).toBe(304);
    const css = await fetch(`${t.url}/console/console.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers unknown files, traversal attempts and encoded separators with NOT_FOUND in the error shape', async () => {
    for (const path of [
      '/console/nope.js',
      '/console/..%2fpackage.json',
      '/console/%2e%2e%2fsrc%2fmain.ts',
      '/console/.env',
      '/console/index.html%00.js',
    ]) {
      const answer = await fetch(`${t.url}${path}`);
      expect(answer.status, path).toBe(404);
      const body = (await answer.json()) as { error: { code: string } };
      expect(body.error.code, path).toBe('NOT_FOUND');
    }
    const deeper = await fetch(`${t.url}/console/../package.json`);
    expect(deeper.status).toBe(404);
  });

  it('loads in headless Chromium and renders from the bundle', async () => {
    const browser = await launchBrowser();
    try {
      const { page, requests, logs } = await openConsole(browser, t.url);
      await waitForText(page, '#app', 'Sign in');
      expect(logs.filter((l) => l.startsWith('pageerror'))).toEqual([]);
      const origin = new URL(t.url).origin;
      expect(requests.length).toBeGreaterThan(0);
      for (const url of requests)
        expect(new URL(url).origin === origin || url.startsWith(origin.replace('http', 'ws')), url).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
