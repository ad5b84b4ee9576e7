import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { nonGlobalRange } from '../../src/runtime/outbound/outbound-address.js';
import type { CheckedOutboundUrl, ResolvedAddress } from '../../src/runtime/outbound/check-outbound-url.js';
import { pinnedLookup } from '../../src/runtime/outbound/pinned-dispatcher.js';
import {
  argumentString,
  BUILTIN_DEFAULT_POLICY,
  evaluatePermission,
} from '../../src/runtime/policy/permission-policy.js';
import { webFetchTool } from '../../src/runtime/tools/builtin/web-fetch.js';
import { fetchWebPage } from '../../src/runtime/web/fetch-web-page.js';
import type { WebAccess, WebSettings } from '../../src/runtime/web/web-access.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import type { TestServer } from '../support/test-server.js';
import { createSession, ofType, runAndWait, runEvents, useTestServers } from '../support/run-helpers.js';
import { send, startPageServer, type PageServer } from '../support/web-page-server.js';

const server = useTestServers();
const pages: PageServer[] = [];
afterEach(async () => {
  for (const page of pages.splice(0)) await page.close();
});

const ARTICLE = `<!doctype html><html><head><title>The Title</title><style>body { color: red }</style><script>var secret = 1;</script></head>
<body><h1>Hello web</h1><p>First <b>bold</b> paragraph with a <a href="/next">link</a>.</p><noscript>enable js</noscript>
<ul><li>one</li><li>two</li></ul><script>document.write('injected')</script><pre>code  block</pre></body></html>`;

async function pageServer(routes: Parameters<typeof startPageServer>[0]): Promise<PageServer> {
  const page = await startPageServer(routes);
  pages.push(page);
  return page;
}

/** The web tests' server: the policy allows the web tools; `allowPrivate` turns web.allow_private_networks on (pages live on 127.0.0.1). */
function webServer(allowPrivate: boolean, extra: Record<string, unknown> = {}): Promise<TestServer> {
  return server({ config: { web: { allowPrivateNetworks: allowPrivate }, ...extra } });
}

const ALLOW_WEB = { permissionPolicy: { allow: ['web_fetch', 'web_search'], defaultDecision: 'deny' } };

type ToolEnd = {
  id: string;
  output: string;
  exit_code: number;
  metadata?: Record<string, unknown>;
  error_kind?: Record<string, unknown>;
};

/** Run one model turn making these web_fetch calls (in order) and answer the tool_end payloads by call id. */
async function fetchCalls(
  t: TestServer,
  calls: Array<Record<string, unknown>>,
  sessionOptions: Record<string, unknown> = ALLOW_WEB,
): Promise<{ ends: Map<string, ToolEnd>; events: EventEnvelope[] }> {
  const id = await createSession(t, sessionOptions);
  t.fake.script(
    { toolCalls: calls.map((args, index) => ({ id: `c${index}`, name: 'web_fetch', arguments: args })) },
    { text: 'done' },
  );
  const { run, runId } = await runAndWait(t, id, 'fetch it');
  t.fake.assertDone();
  expect(run.status).toBe('completed');
  const events = await runEvents(t, id, runId);
  const ends = new Map(
    ofType(events, 'tool_end').map((event) => [String(event.payload.id), event.payload as unknown as ToolEnd]),
  );
  return { ends, events };
}

function end(ends: Map<string, ToolEnd>, id: string): ToolEnd {
  const found = ends.get(id);
  if (!found) throw new Error(`no tool_end for ${id}`);
  return found;
}

describe('web_fetch over HTTP', () => {
  it('turns a local HTML page into markdown, pages it with offset/max_chars and reports the seed range metadata', async () => {
    const page = await pageServer({ '/article': send(ARTICLE, 'text/html; charset=utf-8') });
    const t = await webServer(true);
    const { ends } = await fetchCalls(t, [
      { url: page.url('/article'), max_chars: 20 },
      { url: page.url('/article'), offset: 20 },
      { url: page.url('/article'), max_chars: 500_000 },
    ]);
    const first = end(ends, 'c0');
    expect(first.exit_code).toBe(0);
    expect(first.output.startsWith('# Hello web\n\nFirst')).toBe(true);
    expect(first.output).toMatch(
      /\[Showing characters 0-20 of \d+\. Call web_fetch again with offset=20 to continue\.\]$/,
    );
    const range = first.metadata?.range as Record<string, unknown>;
    expect(range).toMatchObject({
      offset: 0,
      requested_max_chars: 20,
      applied_max_chars: 20,
      returned_chars: 20,
      next_offset: 20,
      eof: false,
      limit_clamped: false,
    });
    expect(first.metadata).toMatchObject({
      source_anchors: [page.url('/article')],
      status: 200,
      content_type: 'text/html',
      final_url: page.url('/article'),
      format: 'markdown',
    });

    const whole = end(ends, 'c2');
    const markdown = whole.output;
    expect(markdown).toContain('First **bold** paragraph with a [link](/next).');
    expect(markdown).toContain('-   one');
    expect(markdown).not.toMatch(/secret|injected|enable js|color: red|The Title/);
    expect(whole.metadata?.range).toMatchObject({
      offset: 0,
      requested_max_chars: 500_000,
      applied_max_chars: 100_000,
      limit_clamped: true,
      eof: true,
      next_offset: null,
      total_chars: markdown.length,
    });

    const second = end(ends, 'c1');
    expect(second.exit_code).toBe(0);
    expect(first.output.slice(0, 20) + second.output).toBe(markdown);
    expect(second.metadata?.range).toMatchObject({
      offset: 20,
      returned_chars: markdown.length - 20,
      eof: true,
      next_offset: null,
    });
  });

  it('format text and html, body_only on and off', async () => {
    const page = await pageServer({
      '/article': send(ARTICLE, 'text/html'),
      '/data.json': send('{"a": [1, 2]}', 'application/json'),
    });
    const t = await webServer(true);
    const url = page.url('/article');
    const { ends } = await fetchCalls(t, [
      { url, format: 'text' },
      { url, format: 'html' },
      { url, format: 'html', body_only: false },
      { url, format: 'markdown', body_only: false },
      { url: page.url('/data.json') },
    ]);
    const text = end(ends, 'c0').output;
    expect(text).toContain('Hello web\n\nFirst bold paragraph with a link.');
    expect(text).toContain('code  block');
    expect(text).not.toMatch(/<|secret|injected|\*\*/);
    const html = end(ends, 'c1').output;
    expect(html.startsWith('<h1>Hello web</h1>')).toBe(true);
    expect(html).not.toMatch(/<script|<style|<noscript|<title/);
    expect(end(ends, 'c2').output).toBe(ARTICLE);
    const full = end(ends, 'c3').output;
    expect(full).toContain('The Title');
    expect(full).toContain('# Hello web');
    expect(full).not.toContain('secret');
    const json = end(ends, 'c4');
    expect(json.output).toBe('{"a": [1, 2]}');
    expect(json.metadata).toMatchObject({ content_type: 'application/json', format: 'raw' });
  });

  it('refuses 127.0.0.1, localhost and file:// without web.allow_private_networks, before connecting', async () => {
    const page = await pageServer({ '/article': send(ARTICLE, 'text/html') });
    const t = await webServer(false);
    const { ends } = await fetchCalls(t, [
      { url: page.url('/article') },
      { url: `http://localhost:${page.port}/article` },
      { url: 'file:///etc/passwd' },
      { url: 'ftp://example.com/x' },
      { url: 'data:text/html,<h1>x</h1>' },
    ]);
    const loopback = end(ends, 'c0');
    expect(loopback.exit_code).toBe(1);
    expect(loopback.output).toMatch(
      /web_fetch refused: http:\/\/127\.0\.0\.1:\d+\/article is refused: .*loopback 127\.0\.0\.0\/8.*web\.allow_private_networks = true/,
    );
    expect(loopback.error_kind).toMatchObject({ type: 'invalid_argument' });
    expect(end(ends, 'c1').output).toMatch(/localhost.*loopback name/);
    expect(end(ends, 'c2').output).toMatch(/scheme file: is not allowed: use http:\/\/ or https:\/\//);
    expect(end(ends, 'c3').output).toMatch(/scheme ftp: is not allowed/);
    expect(end(ends, 'c4').output).toMatch(/scheme data: is not allowed/);
    expect(page.requests).toEqual([]);
  });

  it('refuses a DNS name that the system resolver maps to loopback', async () => {
    // A name from the host's resolver (e.g. /etc/hosts) that is not a localhost name but answers a loopback address.
    let name: string | undefined;
    for (const candidate of [hostname(), 'ip6-localhost', 'ip6-loopback']) {
      const answers = await lookup(candidate, { all: true }).catch(() => []);
      if (
        !candidate.toLowerCase().endsWith('localhost') &&
        answers.length > 0 &&
        answers.every((a) => nonGlobalRange(a.address)?.startsWith('loopback'))
      ) {
        name = candidate;
        break;
      }
    }
    if (name === undefined) {
      // No such name on this host: the injected-resolver test below covers the rule.
      expect(name).toBeUndefined();
      return;
    }
    const page = await pageServer({ '/article': send(ARTICLE, 'text/html') });
    const t = await webServer(false);
    const { ends } = await fetchCalls(t, [{ url: `http://${name}:${page.port}/article` }]);
    expect(end(ends, 'c0').output).toMatch(new RegExp(`resolves to (127\\.|::1).*web\\.allow_private_networks`));
    expect(page.requests).toEqual([]);
  });

  it('refuses bodies over 5 MB, binary content, more than 10 redirects and a redirect to file://; follows 10', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const routes: Parameters<typeof startPageServer>[0] = {
      // Chunked (no Content-Length): the reader must stop at the cap by itself.
      '/huge': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        let sent = 0;
        const pump = (): void => {
          while (sent < 64 && res.write(chunk)) sent += 1;
          if (sent < 64) res.once('drain', pump);
          else res.end();
        };
        pump();
      },
      '/declared': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(6 * 1024 * 1024) });
        res.write('a');
      },
      '/image.png': send(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]), 'image/png'),
      '/octets': send(Buffer.from([1, 2, 0, 3]), 'application/octet-stream'),
      '/to-file': send('', 'text/plain', 302, { location: 'file:///etc/passwd' }),
      '/done': send('<p>arrived</p>', 'text/html'),
    };
    for (let i = 0; i <= 11; i++)
      routes[`/r${i}`] = send('', 'text/plain', i % 2 === 0 ? 301 : 307, { location: `/r${i + 1}` });
    // /r10 -> /done: ten hops from /r1; /r0 needs eleven hops (r1..r11... never reaching done).
    routes['/r10'] = send('', 'text/plain', 302, { location: '/done' });
    routes['/loop'] = send('', 'text/plain', 302, { location: '/loop' });
    const page = await pageServer(routes);
    const t = await webServer(true);
    const { ends } = await fetchCalls(t, [
      { url: page.url('/huge') },
      { url: page.url('/declared') },
      { url: page.url('/image.png') },
      { url: page.url('/octets') },
      { url: page.url('/loop') },
      { url: page.url('/to-file') },
      { url: page.url('/r1') },
    ]);
    expect(end(ends, 'c0').output).toMatch(/larger than the 5242880 byte \(5 MB\) cap; reading stopped there/);
    expect(end(ends, 'c0').exit_code).toBe(1);
    expect(end(ends, 'c1').output).toMatch(/5 MB\) cap/);
    expect(end(ends, 'c2').output).toMatch(/content type image\/png is binary/);
    expect(end(ends, 'c3').output).toMatch(/application\/octet-stream is binary/);
    expect(end(ends, 'c4').output).toMatch(/too many redirects: more than 10/);
    expect(page.requests.filter((path) => path === '/loop')).toHaveLength(11);
    expect(end(ends, 'c5').output).toMatch(
      /redirect target file:\/\/\/etc\/passwd is refused: scheme file: is not allowed/,
    );
    const followed = end(ends, 'c6');
    expect(followed.exit_code).toBe(0);
    expect(followed.output).toBe('arrived');
    expect(followed.metadata).toMatchObject({
      final_url: page.url('/done'),
      redirects: 10,
      source_anchors: [page.url('/done')],
    });
  });

  it('a slow server is a timeout tool error, 429 is rate_limited, 404 names the status; the run goes on', async () => {
    const page = await pageServer({
      '/slow': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<p>start');
      },
      '/busy': send('slow down', 'text/plain', 429, { 'retry-after': '7' }),
    });
    const t = await webServer(true);
    const started = Date.now();
    const { ends } = await fetchCalls(t, [
      { url: page.url('/slow'), timeout: 1 },
      { url: page.url('/busy') },
      { url: page.url('/missing') },
    ]);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(end(ends, 'c0').output).toMatch(/timed out after 1 s/);
    expect(end(ends, 'c0').error_kind).toEqual({ type: 'timeout', op: 'web_fetch', duration_ms: 1000 });
    expect(end(ends, 'c1').error_kind).toEqual({ type: 'rate_limited', retry_after_ms: 7000 });
    expect(end(ends, 'c2').output).toMatch(/answered HTTP 404:\nnot here/);
    expect(end(ends, 'c2').error_kind).toEqual({ type: 'not_found', path: page.url('/missing') });
  });

  it('invalid arguments are refused before anything is fetched', async () => {
    const t = await webServer(true);
    const { ends } = await fetchCalls(
      t,
      [
        { url: 'http://example.invalid/', max_chars: 0 },
        { url: 'http://example.invalid/', timeout: 121 },
        { url: 'http://example.invalid/', format: 'pdf' },
        { link: 'http://example.invalid/' },
      ],
      { ...ALLOW_WEB, maxParseRetries: 10 },
    );
    expect(end(ends, 'c0').output).toMatch(/Invalid arguments for web_fetch: max_chars/);
    expect(end(ends, 'c1').output).toMatch(/timeout/);
    expect(end(ends, 'c2').output).toMatch(/format/);
    expect(end(ends, 'c3').output).toMatch(/link/);
    for (const id of ['c0', 'c1', 'c2', 'c3'])
      expect(end(ends, id).error_kind).toMatchObject({ type: 'invalid_argument' });
  });
});

describe('web_fetch and the permission policy', () => {
  it('rules match the compact JSON of the arguments; an unmatched call asks, and without confirmation it is denied', async () => {
    const page = await pageServer({
      '/allowed': send('<p>yes</p>', 'text/html'),
      '/other': send('<p>no</p>', 'text/html'),
    });
    const t = await webServer(true);
    const policy = { permissionPolicy: { allow: ['web_fetch(**/allowed**)'], defaultDecision: 'ask' } };
    const { ends, events } = await fetchCalls(t, [{ url: page.url('/allowed') }, { url: page.url('/other') }], policy);
    expect(end(ends, 'c0').output).toBe('yes');
    expect(end(ends, 'c1').exit_code).toBe(1);
    expect(end(ends, 'c1').output).toMatch(
      /web_fetch was denied: it needs confirmation \(permission rule "defaultDecision"\) but confirmationPolicy\.enabled is false/,
    );
    expect(ofType(events, 'permission_denied').map((e) => e.payload.tool_name)).toEqual(['web_fetch']);
    expect(page.requests).toEqual(['/allowed']);
  });

  it('is not in the built-in default allow list: with the operator default the call asks (denied without confirmation)', async () => {
    const page = await pageServer({ '/p': send('<p>x</p>', 'text/html') });
    const t = await webServer(true, { defaultPermissionPolicy: undefined });
    const { ends } = await fetchCalls(t, [{ url: page.url('/p') }], {});
    expect(end(ends, 'c0').output).toMatch(/needs confirmation \(permission rule "defaultDecision"\)/);
    expect(page.requests).toEqual([]);
    const args = webFetchTool.parameters.parse({ url: 'https://example.com/docs', max_chars: 100 });
    expect(argumentString('web_fetch', args)).toBe('{"url":"https://example.com/docs","max_chars":100}');
    expect(evaluatePermission(BUILTIN_DEFAULT_POLICY, 'web_fetch', args).decision).toBe('ask');
    expect(evaluatePermission(BUILTIN_DEFAULT_POLICY, 'web_search', { query: 'x' }).decision).toBe('ask');
    const rules = { ...BUILTIN_DEFAULT_POLICY, allow: ['web_fetch({"url":"https://example.com/**)'] };
    expect(evaluatePermission(rules, 'web_fetch', args).decision).toBe('allow');
    expect(
      evaluatePermission(rules, 'web_fetch', webFetchTool.parameters.parse({ url: 'https://example.com.evil.test/' }))
        .decision,
    ).toBe('ask');
    expect(webFetchTool.readOnly).toBe(false);
  });
});

describe('web_fetch address checks with an injected resolver', () => {
  const settings = (allowPrivateNetworks: boolean): WebSettings => ({
    allowPrivateNetworks,
    search: { timeoutSecs: 20 },
  });

  /** Access whose resolver maps `public.test` to a global address, and whose connections all go to the local page server. */
  function routedAccess(page: PageServer, names: Record<string, ResolvedAddress[]>, checked: string[]): WebAccess {
    return {
      settings: settings(false),
      resolve: async (host) => {
        const answer = names[host];
        if (!answer) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        return answer;
      },
      connect: (target: CheckedOutboundUrl) => {
        checked.push(`${target.url.hostname}=${target.address.address}`);
        return new Agent({
          connect: { lookup: pinnedLookup(target.url.hostname, [{ address: '127.0.0.1', family: 4 }]) },
        });
      },
    };
  }

  it('a redirect from an allowed public host to a private address is refused: each redirect target is checked again', async () => {
    const page = await pageServer({
      '/start': send('', 'text/plain', 302, { location: `http://10.0.0.7:${0}/admin` }),
      '/go-loopback': send('', 'text/plain', 301, { location: 'http://rebind.test/secret' }),
    });
    const checked: string[] = [];
    const access = routedAccess(
      page,
      {
        'public.test': [{ address: '93.184.216.34', family: 4 }],
        'rebind.test': [{ address: '127.0.0.1', family: 4 }],
      },
      checked,
    );
    const first = await fetchWebPage(
      access,
      { url: `http://public.test:${page.port}/start` },
      new AbortController().signal,
    );
    expect(first.exitCode).toBe(1);
    expect(first.output).toMatch(/redirect target http:\/\/10\.0\.0\.7:0\/admin is refused: .*private 10\.0\.0\.0\/8/);
    const second = await fetchWebPage(
      access,
      { url: `http://public.test:${page.port}/go-loopback` },
      new AbortController().signal,
    );
    expect(second.output).toMatch(
      /redirect target http:\/\/rebind\.test\/secret is refused: .*rebind\.test resolves to 127\.0\.0\.1/,
    );
    // Only the public host was ever connected to.
    expect(checked).toEqual(['public.test=93.184.216.34', 'public.test=93.184.216.34']);
    expect(page.requests).toEqual(['/start', '/go-loopback']);
  });

  it('a name answering one public and one loopback address is refused before connecting (no rebinding window)', async () => {
    const page = await pageServer({ '/': send('<p>x</p>', 'text/html') });
    const checked: string[] = [];
    const access = routedAccess(
      page,
      {
        'mixed.test': [
          { address: '93.184.216.34', family: 4 },
          { address: '::1', family: 6 },
        ],
      },
      checked,
    );
    const result = await fetchWebPage(access, { url: `http://mixed.test:${page.port}/` }, new AbortController().signal);
    expect(result.output).toMatch(/mixed\.test resolves to ::1/);
    expect(checked).toEqual([]);
    expect(page.requests).toEqual([]);
  });

  it('the call signal aborts a fetch in flight', async () => {
    const page = await pageServer({ '/hang': () => undefined });
    const access: WebAccess = { settings: settings(true) };
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('run cancelled')), 200);
    const started = Date.now();
    const result = await fetchWebPage(access, { url: page.url('/hang') }, controller.signal);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.errorKind).toEqual({ type: 'cancelled', op: 'web_fetch' });
  });
});
