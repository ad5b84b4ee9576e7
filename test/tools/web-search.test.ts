import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { searchBrave, searchTavily } from '../../src/runtime/web/search-backends.js';
import type { WebAccess } from '../../src/runtime/web/web-access.js';
import { WebSearchParamsSchema } from '../../src/protocol/web-tools.js';
import type { TestServer } from '../support/test-server.js';
import { createSession, ofType, runAndWait, runEvents, useTestServers } from '../support/run-helpers.js';
import { send, startPageServer, type PageServer } from '../support/web-page-server.js';

const server = useTestServers();
const pages: PageServer[] = [];
afterEach(async () => {
  for (const page of pages.splice(0)) await page.close();
});

const ALLOW_WEB = {
  permissionPolicy: { allow: ['web_fetch', 'web_search'], defaultDecision: 'deny' },
  maxParseRetries: 10,
};

type ToolEnd = {
  id: string;
  output: string;
  exit_code: number;
  metadata?: Record<string, unknown>;
  error_kind?: Record<string, unknown>;
};

const SEARXNG_RESULTS = [
  {
    title: 'Rust Language',
    url: 'https://www.rust-lang.org/',
    content: 'A language empowering everyone.',
    engines: ['duckduckgo', 'wikipedia'],
    score: 4.5,
    publishedDate: '2024-05-01T00:00:00',
  },
  {
    title: 'Rust (programming language)',
    url: 'https://en.wikipedia.org/wiki/Rust_(programming_language)',
    content: 'Rust is a general-purpose   language.',
    engines: ['wikipedia'],
    score: 2.25,
    publishedDate: null,
  },
  {
    title: 'The Book',
    url: 'https://doc.rust-lang.org/book/',
    content: 'The Rust Programming Language book.',
    engine: 'duckduckgo',
    score: 1,
  },
];

/** A fake SearXNG instance: `/search?q=...&format=json` answers SEARXNG_RESULTS, recording each query string. */
async function fakeSearxng(routes: Parameters<typeof startPageServer>[0] = {}): Promise<PageServer> {
  const page = await startPageServer({
    '/search': (req, res) => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      if (query.get('format') !== 'json' || !query.get('q')) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('bad query');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ query: query.get('q'), number_of_results: 3, results: SEARXNG_RESULTS }));
    },
    ...routes,
  });
  pages.push(page);
  return page;
}

async function searchCalls(t: TestServer, calls: Array<Record<string, unknown>>): Promise<Map<string, ToolEnd>> {
  const id = await createSession(t, ALLOW_WEB);
  t.fake.script(
    { toolCalls: calls.map((args, index) => ({ id: `s${index}`, name: 'web_search', arguments: args })) },
    { text: 'done' },
  );
  const { run, runId } = await runAndWait(t, id, 'search it');
  t.fake.assertDone();
  expect(run.status).toBe('completed');
  const events = await runEvents(t, id, runId);
  return new Map(
    ofType(events, 'tool_end').map((event) => [String(event.payload.id), event.payload as unknown as ToolEnd]),
  );
}

function end(ends: Map<string, ToolEnd>, id: string): ToolEnd {
  const found = ends.get(id);
  if (!found) throw new Error(`no tool_end for ${id}`);
  return found;
}

describe('web_search over HTTP against a local SearXNG', () => {
  it('text format: a numbered list in the seed shape, engines mapped and passed on, limit applied', async () => {
    const searxng = await fakeSearxng();
    const t = await server({
      config: { web: { allowPrivateNetworks: true, search: { searxngUrl: `${searxng.origin}/` } } },
    });
    const ends = await searchCalls(t, [
      { query: 'rust language', engines: 'ddg, wiki', limit: 2 },
      { query: 'rust', engines: ['bing'] },
    ]);
    const first = end(ends, 's0');
    expect(first.exit_code).toBe(0);
    expect(first.output).toBe(
      [
        'Search results for "rust language" (2):',
        '',
        '1. Rust Language',
        '   https://www.rust-lang.org/',
        '   A language empowering everyone.',
        '   [engines: duckduckgo, wikipedia · score: 4.5 · published: 2024-05-01T00:00:00]',
        '',
        '2. Rust (programming language)',
        '   https://en.wikipedia.org/wiki/Rust_(programming_language)',
        '   Rust is a general-purpose language.',
        '   [engines: wikipedia · score: 2.25]',
      ].join('\n'),
    );
    expect(first.metadata).toMatchObject({
      backends: ['searxng'],
      engines: ['duckduckgo', 'wikipedia'],
      result_count: 2,
      source_anchors: ['https://www.rust-lang.org/', 'https://en.wikipedia.org/wiki/Rust_(programming_language)'],
      failures: [],
    });
    expect(searxng.requests[0]).toBe('/search?q=rust+language&format=json&engines=duckduckgo%2Cwikipedia');
    expect(searxng.requests[1]).toBe('/search?q=rust&format=json&engines=bing');
    expect(end(ends, 's1').output).toMatch(/^Search results for "rust" \(3\):/);
  });

  it('json format: the results as a JSON array of {title, url, content, engines, score, published_date?}', async () => {
    const searxng = await fakeSearxng();
    const t = await server({ config: { web: { allowPrivateNetworks: true, search: { searxngUrl: searxng.origin } } } });
    const ends = await searchCalls(t, [
      { query: 'rust', format: 'json', full_text_bytes: 512 },
      { query: 'rust', full_text_bytes: 512 },
      { query: 'rust', engine: 'ddg' },
      { query: 'rust', proxy: 'http://proxy.example:3128' },
    ]);
    const results = JSON.parse(end(ends, 's0').output) as unknown[];
    expect(results).toEqual([
      {
        title: 'Rust Language',
        url: 'https://www.rust-lang.org/',
        content: 'A language empowering everyone.',
        engines: ['duckduckgo', 'wikipedia'],
        score: 4.5,
        published_date: '2024-05-01T00:00:00',
      },
      {
        title: 'Rust (programming language)',
        url: 'https://en.wikipedia.org/wiki/Rust_(programming_language)',
        content: 'Rust is a general-purpose   language.',
        engines: ['wikipedia'],
        score: 2.25,
      },
      {
        title: 'The Book',
        url: 'https://doc.rust-lang.org/book/',
        content: 'The Rust Programming Language book.',
        engines: ['duckduckgo'],
        score: 1,
      },
    ]);
    expect(end(ends, 's1').output).toMatch(/full_text_bytes applies to format "json" only/);
    expect(end(ends, 's2').output).toMatch(
      /unknown key "engine" \(the key is "engines": a list or a comma-separated string\)/,
    );
    expect(end(ends, 's2').error_kind).toMatchObject({ type: 'invalid_argument' });
    expect(end(ends, 's3').output).toMatch(/`proxy` is not supported/);
    expect(end(ends, 's3').error_kind).toMatchObject({ type: 'unsupported' });
    expect(searxng.requests).toHaveLength(1);
  });

  it('a backend answering 500, one that never answers, and one on a private address without the switch are clear tool errors', async () => {
    const broken = await fakeSearxng({ '/search': send('internal trouble', 'text/plain', 500) });
    const hanging = await fakeSearxng({ '/search': () => undefined });
    const t1 = await server({ config: { web: { allowPrivateNetworks: true, search: { searxngUrl: broken.origin } } } });
    const failed = end(await searchCalls(t1, [{ query: 'x' }]), 's0');
    expect(failed.exit_code).toBe(1);
    expect(failed.output).toBe('web_search failed: SearXNG answered HTTP 500: internal trouble');
    expect(failed.error_kind).toEqual({ type: 'transport', op: 'web_search' });

    const t2 = await server({
      config: { web: { allowPrivateNetworks: true, search: { searxngUrl: hanging.origin, timeoutSecs: 1 } } },
    });
    const started = Date.now();
    const slow = end(await searchCalls(t2, [{ query: 'x' }]), 's0');
    expect(Date.now() - started).toBeLessThan(8000);
    expect(slow.output).toBe('web_search failed: searxng did not answer within 1 s');
    expect(slow.error_kind).toEqual({ type: 'timeout', op: 'web_search', duration_ms: 1000 });

    const t3 = await server({ config: { web: { search: { searxngUrl: broken.origin } } } });
    const refused = end(await searchCalls(t3, [{ query: 'x' }]), 's0');
    expect(refused.output).toMatch(
      /web_search failed: http:\/\/127\.0\.0\.1:\d+\/search\?q=x&format=json is refused: .*loopback.*web\.allow_private_networks = true/,
    );
    expect(broken.requests).toEqual(['/search?q=x&format=json']);
  });
});

describe('web_search with no backend', () => {
  it('stays listed in GET .../tools (with web_fetch) and every call answers an error naming the config keys', async () => {
    const t = await server();
    const id = await createSession(t, ALLOW_WEB);
    const tools = (await request(t.url).get(`/v1/sessions/${id}/tools`).expect(200)).body.tools as Array<{
      name: string;
      readOnly: boolean;
      parameters?: unknown;
    }>;
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['web_fetch', 'web_search']));
    expect(names.indexOf('web_search')).toBe(names.indexOf('web_fetch') + 1);
    expect(tools.filter((tool) => tool.name.startsWith('web_')).map((tool) => tool.readOnly)).toEqual([false, false]);
    t.fake.script(
      {
        toolCalls: [
          { id: 'n0', name: 'web_search', arguments: { query: 'anything' } },
          { id: 'n1', name: 'web_search', arguments: { query: 'anything', engines: 'brave' } },
        ],
      },
      { text: 'done' },
    );
    const { runId } = await runAndWait(t, id, 'search');
    t.fake.assertDone();
    const ends = ofType(await runEvents(t, id, runId), 'tool_end').map((event) => event.payload as unknown as ToolEnd);
    for (const ended of ends) {
      expect(ended.exit_code).toBe(1);
      expect(ended.output).toBe(
        'web_search has no search backend configured on this server: set web.search.searxng_url (a SearXNG instance with its JSON API on), web.search.brave_api_key or web.search.tavily_api_key in the server config',
      );
      expect(ended.error_kind).toMatchObject({ type: 'unsupported' });
    }
    expect(ends).toHaveLength(2);
  });

  it('an engine no configured backend serves names the key it needs', async () => {
    const t = await server({ config: { web: { search: { tavilyApiKey: 'tvly-test' } } } });
    const ends = await searchCalls(t, [
      { query: 'x', engines: ['ddg'] },
      { query: 'x', engines: 'google_browser' },
    ]);
    expect(end(ends, 's0').output).toMatch(/engine "ddg" is served through SearXNG: it needs web\.search\.searxng_url/);
    expect(end(ends, 's1').output).toMatch(/needs a headless browser/);
  });
});

describe('web_search arguments and the Brave and Tavily backends', () => {
  it('accepts engines as a list or a comma string and refuses unknown keys', () => {
    expect(WebSearchParamsSchema.parse({ query: 'q', engines: 'a,b' }).engines).toBe('a,b');
    expect(WebSearchParamsSchema.parse({ query: 'q', engines: ['a'] }).engines).toEqual(['a']);
    expect(() => WebSearchParamsSchema.parse({ query: 'q', limit: 51 })).toThrow();
    expect(() => WebSearchParamsSchema.parse({ query: 'q', timeout: 61 })).toThrow();
    expect(() => WebSearchParamsSchema.parse({ query: 'q', full_text_bytes: 100 })).toThrow();
    expect(() => WebSearchParamsSchema.parse({ query: '  ' })).toThrow();
  });

  it('Brave sends X-Subscription-Token and Tavily a bearer key; their answers map onto the seed shape', async () => {
    const seen: Record<string, string | undefined> = {};
    const api = await startPageServer({
      '/brave': (req, res) => {
        seen.brave = req.headers['x-subscription-token'] as string | undefined;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            web: {
              results: [
                { title: 'B1', url: 'https://b.example/1', description: 'first', page_age: '2024-01-01' },
                { title: 'B2', url: 'https://b.example/2' },
              ],
            },
          }),
        );
      },
      '/tavily': (req, res) => {
        seen.tavily = req.headers.authorization;
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          seen.tavilyBody = body;
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              results: [
                {
                  title: 'T1',
                  url: 'https://t.example/',
                  content: 'snippet',
                  score: 0.9,
                  raw_content: 'full page text',
                },
              ],
            }),
          );
        });
      },
    });
    pages.push(api);
    const access: WebAccess = { settings: { allowPrivateNetworks: true, search: { timeoutSecs: 5 } } };
    const query = { query: 'q', limit: 5, engines: [], fullText: true, signal: new AbortController().signal };
    expect(await searchBrave(access, 'brave-key', query, api.url('/brave'))).toEqual([
      {
        title: 'B1',
        url: 'https://b.example/1',
        content: 'first',
        engines: ['brave'],
        score: 1,
        published_date: '2024-01-01',
      },
      { title: 'B2', url: 'https://b.example/2', content: '', engines: ['brave'], score: 0.5 },
    ]);
    expect(await searchTavily(access, 'tvly-key', query, api.url('/tavily'))).toEqual([
      {
        title: 'T1',
        url: 'https://t.example/',
        content: 'snippet',
        engines: ['tavily'],
        score: 0.9,
        full_text: 'full page text',
      },
    ]);
    expect(seen).toEqual({
      brave: 'brave-key',
      tavily: 'Bearer tvly-key',
      tavilyBody: JSON.stringify({ query: 'q', max_results: 5, include_raw_content: true }),
    });
    expect(api.requests[0]).toBe('/brave?q=q&count=5');
  });
});

describe('config web {}', () => {
  const load = (configText: string) => loadConfig({ env: {}, cwd: process.cwd(), configText });

  it('reads web { allow_private_networks, search { ... } } from an ACL file, off and empty by default', async () => {
    const on = await load(
      'web {\n  allow_private_networks = true\n  search {\n    searxng_url = "http://search.internal:8080"\n    brave_api_key = "bk"\n    default_engines = ["ddg", "wiki"]\n    timeout_secs = 12\n  }\n}\n',
    );
    expect(on.web).toEqual({
      allowPrivateNetworks: true,
      search: {
        searxngUrl: 'http://search.internal:8080',
        braveApiKey: 'bk',
        defaultEngines: ['ddg', 'wiki'],
        timeoutSecs: 12,
      },
    });
    expect((await load('port = 8080\n')).web).toEqual({ allowPrivateNetworks: false, search: { timeoutSecs: 20 } });
  });

  it('is strict: unknown keys, a non-URL searxng_url and a timeout over 60 are errors naming the key', async () => {
    await expect(load('web {\n  search {\n    searx_url = "http://x"\n  }\n}\n')).rejects.toThrow(
      /web\.search\.searx_?[uU]rl: unknown key/,
    );
    await expect(load('web {\n  search {\n    searxng_url = "search.internal"\n  }\n}\n')).rejects.toThrow(
      /web\.search\.searxng_url must be an http/,
    );
    await expect(load('web {\n  search {\n    timeout_secs = 61\n  }\n}\n')).rejects.toThrow(
      /timeout_secs is at most 60/,
    );
    await expect(load('web {\n  allow_private_networks = "yes"\n}\n')).rejects.toThrow(
      /web\.allow_?[pP]rivate_?[nN]etworks/,
    );
  });
});
