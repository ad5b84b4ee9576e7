import { WEB_SEARCH_DEFAULT_LIMIT, type WebSearchParams, type WebSearchResult } from '../../protocol/web-tools.js';
import type { ToolResult } from '../tools/define-tool.js';
import {
  searchBrave,
  SearchBackendError,
  searchSearxng,
  searchTavily,
  type BackendQuery,
  type SearchBackendName,
} from './search-backends.js';
import { engineNames, planSearch } from './search-plan.js';
import type { WebAccess } from './web-access.js';
import { WebRequestError } from './web-request-error.js';

interface BackendFailure {
  backend: SearchBackendName;
  message: string;
  kind: 'timeout' | 'cancelled' | 'rate_limited' | 'refused' | 'error';
  retryAfterMs?: number;
}

function fail(message: string, errorKind: ToolResult['errorKind'], metadata?: Record<string, unknown>): ToolResult {
  return { output: message, exitCode: 1, ...(metadata ? { metadata } : {}), ...(errorKind ? { errorKind } : {}) };
}

function ask(access: WebAccess, backend: SearchBackendName, query: BackendQuery): Promise<WebSearchResult[]> {
  const { search } = access.settings;
  switch (backend) {
    case 'searxng':
      return searchSearxng(access, search.searxngUrl as string, query);
    case 'brave':
      return searchBrave(access, search.braveApiKey as string, query);
    case 'tavily':
      return searchTavily(access, search.tavilyApiKey as string, { ...query, engines: [] });
  }
}

/** Cut a string to at most `bytes` UTF-8 bytes without splitting a character. */
function cutUtf8(text: string, bytes: number): string {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= bytes) return text;
  return buffer
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

/** Merge backend answers in backend order: one entry per URL (engines joined, best score kept), at most `limit`. */
function merge(lists: readonly WebSearchResult[][], limit: number): WebSearchResult[] {
  const byUrl = new Map<string, WebSearchResult>();
  for (const list of lists) {
    for (const entry of list) {
      const key = entry.url.replace(/\/+$/, '');
      const seen = byUrl.get(key);
      if (!seen) byUrl.set(key, { ...entry, engines: [...entry.engines] });
      else {
        for (const engine of entry.engines) if (!seen.engines.includes(engine)) seen.engines.push(engine);
        seen.score = Math.max(seen.score, entry.score);
        if (!seen.full_text && entry.full_text) seen.full_text = entry.full_text;
      }
    }
  }
  return [...byUrl.values()].slice(0, limit);
}

function renderText(query: string, results: readonly WebSearchResult[]): string {
  if (results.length === 0) return `No results for "${query}".`;
  const lines = [`Search results for "${query}" (${results.length}):`, ''];
  results.forEach((entry, index) => {
    lines.push(`${index + 1}. ${entry.title || entry.url}`, `   ${entry.url}`);
    if (entry.content) lines.push(`   ${entry.content.replace(/\s+/g, ' ').trim()}`);
    const about = [
      `engines: ${entry.engines.join(', ')}`,
      `score: ${Number(entry.score.toFixed(4))}`,
      ...(entry.published_date ? [`published: ${entry.published_date}`] : []),
    ];
    lines.push(`   [${about.join(' · ')}]`, '');
  });
  return lines.join('\n').trimEnd();
}

function failureOf(
  backend: SearchBackendName,
  error: unknown,
  timedOut: boolean,
  cancelled: boolean,
  timeoutMs: number,
): BackendFailure {
  if (timedOut) return { backend, kind: 'timeout', message: `${backend} did not answer within ${timeoutMs / 1000} s` };
  if (cancelled) return { backend, kind: 'cancelled', message: `${backend} was cancelled` };
  if (error instanceof SearchBackendError)
    return {
      backend,
      kind: error.status === 429 ? 'rate_limited' : 'error',
      message: error.message,
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    };
  if (error instanceof WebRequestError)
    return { backend, kind: error.failure === 'refused' ? 'refused' : 'error', message: error.message };
  return { backend, kind: 'error', message: error instanceof Error ? error.message : String(error) };
}

/**
 * The web_search tool's work: plan the backends (planSearch), ask them at once within `timeout` seconds
 * (each backend URL checked like web_fetch's, no redirects), merge their results in the seed's shape and
 * render them as a numbered list (`text`) or a JSON array (`json`, with `full_text` cut to
 * `full_text_bytes` where a backend gave page text). Some backends failing is a result with a note; all
 * failing is a tool error (`timeout`, `rate_limited` or `transport` kind).
 */
export async function runWebSearch(access: WebAccess, args: WebSearchParams, signal: AbortSignal): Promise<ToolResult> {
  if (args.proxy !== undefined) {
    return fail(
      'web_search: `proxy` is not supported by this server (a proxy would bypass its outbound address checks); call again without it.',
      { type: 'unsupported', message: 'proxy is not supported' },
    );
  }
  const format = args.format ?? 'text';
  if (args.full_text_bytes !== undefined && format !== 'json') {
    return fail(
      'web_search: full_text_bytes applies to format "json" only; add format: "json" or leave full_text_bytes out.',
      { type: 'invalid_argument', message: 'full_text_bytes needs format json' },
    );
  }
  const plan = planSearch(access.settings.search, engineNames(args.engines));
  if ('error' in plan) return fail(plan.error, { type: 'unsupported', message: plan.error });
  const limit = args.limit ?? WEB_SEARCH_DEFAULT_LIMIT;
  const timeoutMs = (args.timeout ?? access.settings.search.timeoutSecs) * 1000;
  const timer = AbortSignal.timeout(timeoutMs);
  const combined = AbortSignal.any([signal, timer]);
  const query: BackendQuery = {
    query: args.query,
    limit,
    engines: plan.searxngEngines,
    fullText: args.full_text_bytes !== undefined,
    signal: combined,
  };
  const settled = await Promise.allSettled(plan.backends.map((backend) => ask(access, backend, query)));
  const lists: WebSearchResult[][] = [];
  const failures: BackendFailure[] = [];
  settled.forEach((outcome, index) => {
    const backend = plan.backends[index] as SearchBackendName;
    if (outcome.status === 'fulfilled') lists.push(outcome.value);
    else failures.push(failureOf(backend, outcome.reason, timer.aborted && !signal.aborted, signal.aborted, timeoutMs));
  });
  const meta = {
    query: args.query,
    backends: plan.backends,
    ...(plan.searxngEngines.length > 0 ? { engines: plan.searxngEngines } : {}),
    failures: failures.map(({ backend, kind, message }) => ({ backend, kind, message })),
  };
  if (signal.aborted) return fail('web_search was cancelled.', { type: 'cancelled', op: 'web_search' }, meta);
  if (lists.length === 0) {
    const message = `web_search failed: ${failures.map((entry) => entry.message).join('; ')}`;
    const first = failures[0];
    if (failures.every((entry) => entry.kind === 'timeout'))
      return fail(message, { type: 'timeout', op: 'web_search', duration_ms: timeoutMs }, meta);
    if (first?.kind === 'rate_limited' && failures.every((entry) => entry.kind === 'rate_limited'))
      return fail(
        message,
        { type: 'rate_limited', ...(first.retryAfterMs !== undefined ? { retry_after_ms: first.retryAfterMs } : {}) },
        meta,
      );
    if (failures.every((entry) => entry.kind === 'refused'))
      return fail(message, { type: 'invalid_argument', message }, meta);
    return fail(message, { type: 'transport', op: 'web_search' }, meta);
  }
  const bytes = args.full_text_bytes;
  const results = merge(lists, limit).map((entry) => {
    const { full_text: fullText, ...rest } = entry;
    return bytes !== undefined && fullText ? { ...rest, full_text: cutUtf8(fullText, bytes) } : rest;
  });
  const note =
    format === 'text' && failures.length > 0
      ? `\n\n[Some backends failed: ${failures.map((entry) => entry.message).join('; ')}]`
      : '';
  const output = format === 'json' ? JSON.stringify(results, null, 2) : renderText(args.query, results);
  return {
    output: `${output}${note}`,
    exitCode: 0,
    metadata: { ...meta, result_count: results.length, source_anchors: results.map((entry) => entry.url) },
  };
}
