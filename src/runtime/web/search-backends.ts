import { z } from 'zod';
import { formatZodIssues } from '../../protocol/format-zod-issues.js';
import type { WebSearchResult } from '../../protocol/web-tools.js';
import { checkedRequest } from './checked-request.js';
import { readCappedBody } from './read-capped-body.js';
import type { WebAccess } from './web-access.js';

/** The search services web_search can ask. */
export type SearchBackendName = 'searxng' | 'brave' | 'tavily';

/** Brave's and Tavily's API endpoints (a test points a backend at a local server instead). */
export const BRAVE_SEARCH_URL = 'https://api.search.brave.com/res/v1/web/search';
export const TAVILY_SEARCH_URL = 'https://api.tavily.com/search';

/** Most bytes of one backend answer read. */
const BACKEND_BODY_CAP_BYTES = 4 * 1024 * 1024;

/** One query to one backend. */
export interface BackendQuery {
  readonly query: string;
  readonly limit: number;
  /** SearXNG engine names to ask (SearXNG only; empty: the instance's defaults). */
  readonly engines: readonly string[];
  /** Ask for page text where the backend offers it (Tavily's raw_content). */
  readonly fullText: boolean;
  readonly signal: AbortSignal;
}

/** A backend that answered but not with results (an HTTP error, a body that is not its JSON). */
export class SearchBackendError extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, status?: number, retryAfterMs?: number) {
    super(message);
    this.name = 'SearchBackendError';
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

const SearxngAnswer = z.object({
  results: z.array(
    z.looseObject({
      title: z.string().nullish(),
      url: z.string(),
      content: z.string().nullish(),
      engines: z.array(z.string()).nullish(),
      engine: z.string().nullish(),
      score: z.number().nullish(),
      publishedDate: z.string().nullish(),
    }),
  ),
});
const BraveAnswer = z.object({
  web: z
    .object({
      results: z.array(
        z.looseObject({
          title: z.string().nullish(),
          url: z.string(),
          description: z.string().nullish(),
          page_age: z.string().nullish(),
          age: z.string().nullish(),
        }),
      ),
    })
    .optional(),
});
const TavilyAnswer = z.object({
  results: z.array(
    z.looseObject({
      title: z.string().nullish(),
      url: z.string(),
      content: z.string().nullish(),
      score: z.number().nullish(),
      published_date: z.string().nullish(),
      raw_content: z.string().nullish(),
    }),
  ),
});

async function askJson<T>(
  access: WebAccess,
  name: string,
  url: string,
  init: { method?: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  schema: z.ZodType<T>,
  signal: AbortSignal,
): Promise<T> {
  const answer = await checkedRequest(access, url, { ...init, maxRedirects: 0, signal });
  try {
    const { response } = answer;
    const body = await readCappedBody(response, BACKEND_BODY_CAP_BYTES);
    if (response.status === 429) {
      const seconds = Number(response.headers.get('retry-after'));
      throw new SearchBackendError(
        `${name} rate limited the search (HTTP 429)`,
        429,
        Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined,
      );
    }
    if (response.status >= 400)
      throw new SearchBackendError(
        `${name} answered HTTP ${response.status}${body.bytes.length ? `: ${body.bytes.toString('utf8', 0, Math.min(body.bytes.length, 300)).trim()}` : ''}`,
        response.status,
      );
    if (body.overflow) throw new SearchBackendError(`${name} answered more than ${BACKEND_BODY_CAP_BYTES} bytes`);
    let json: unknown;
    try {
      json = JSON.parse(body.bytes.toString('utf8'));
    } catch {
      throw new SearchBackendError(
        `${name} did not answer JSON (HTTP ${response.status}, content type ${response.headers.get('content-type') ?? 'none'})`,
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new SearchBackendError(`${name} answered JSON of an unexpected shape (${formatZodIssues(parsed.error)})`);
    return parsed.data;
  } finally {
    answer.release();
  }
}

/** Ask a SearXNG instance (`GET <base>/search?q=...&format=json`, its JSON API must be enabled). */
export async function searchSearxng(
  access: WebAccess,
  baseUrl: string,
  query: BackendQuery,
): Promise<WebSearchResult[]> {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/search`);
  url.searchParams.set('q', query.query);
  url.searchParams.set('format', 'json');
  if (query.engines.length > 0) url.searchParams.set('engines', query.engines.join(','));
  const answer = await askJson(
    access,
    'SearXNG',
    url.href,
    { headers: { accept: 'application/json' } },
    SearxngAnswer,
    query.signal,
  );
  return answer.results.slice(0, query.limit).map((entry) => ({
    title: entry.title ?? '',
    url: entry.url,
    content: entry.content ?? '',
    engines: entry.engines ?? (entry.engine ? [entry.engine] : ['searxng']),
    score: entry.score ?? 0,
    ...(entry.publishedDate ? { published_date: entry.publishedDate } : {}),
  }));
}

/** Ask Brave's web search API (`X-Subscription-Token`); its results carry no score, so the score is 1 / rank. */
export async function searchBrave(
  access: WebAccess,
  apiKey: string,
  query: BackendQuery,
  endpoint = BRAVE_SEARCH_URL,
): Promise<WebSearchResult[]> {
  const url = new URL(endpoint);
  url.searchParams.set('q', query.query);
  url.searchParams.set('count', String(Math.min(query.limit, 20)));
  const answer = await askJson(
    access,
    'Brave',
    url.href,
    { headers: { accept: 'application/json', 'x-subscription-token': apiKey } },
    BraveAnswer,
    query.signal,
  );
  return (answer.web?.results ?? []).slice(0, query.limit).map((entry, index) => ({
    title: entry.title ?? '',
    url: entry.url,
    content: entry.description ?? '',
    engines: ['brave'],
    score: 1 / (index + 1),
    ...(entry.page_age || entry.age ? { published_date: (entry.page_age ?? entry.age) as string } : {}),
  }));
}

/** Ask Tavily's search API (`POST`, bearer key); `fullText` asks for each page's raw content. */
export async function searchTavily(
  access: WebAccess,
  apiKey: string,
  query: BackendQuery,
  endpoint = TAVILY_SEARCH_URL,
): Promise<Array<WebSearchResult>> {
  const body = JSON.stringify({
    query: query.query,
    max_results: Math.min(query.limit, 20),
    include_raw_content: query.fullText,
  });
  const answer = await askJson(
    access,
    'Tavily',
    endpoint,
    {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body,
    },
    TavilyAnswer,
    query.signal,
  );
  return answer.results.slice(0, query.limit).map((entry) => ({
    title: entry.title ?? '',
    url: entry.url,
    content: entry.content ?? '',
    engines: ['tavily'],
    score: entry.score ?? 0,
    ...(entry.published_date ? { published_date: entry.published_date } : {}),
    ...(entry.raw_content ? { full_text: entry.raw_content } : {}),
  }));
}
