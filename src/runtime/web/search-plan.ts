import type { WebSettings } from './web-access.js';
import type { SearchBackendName } from './search-backends.js';

/** Which backends one web_search call asks, and the SearXNG engines it names. */
export interface SearchPlan {
  readonly backends: readonly SearchBackendName[];
  readonly searxngEngines: readonly string[];
}

/** The config keys that give web_search a backend (named in the error of a server without one). */
export const SEARCH_BACKEND_KEYS =
  'web.search.searxng_url (a SearXNG instance with its JSON API on), web.search.brave_api_key or web.search.tavily_api_key';

// The seed's engine names as SearXNG calls them; other names go to SearXNG as written.
const SEARXNG_NAMES: Readonly<Record<string, string>> = {
  ddg: 'duckduckgo',
  wiki: 'wikipedia',
  '360': '360search',
  so360: '360search',
  bing_cn: 'bing',
};
const HEADLESS = new Set(['google_browser', 'baidu_browser', 'bing_browser', 'brave_browser']);

/** The engine names of a call: a list or a comma-separated string, trimmed, lower-cased, without repeats. */
export function engineNames(engines: readonly string[] | string | undefined): string[] {
  const list = typeof engines === 'string' ? engines.split(',') : (engines ?? []);
  return [...new Set(list.map((name) => name.trim().toLowerCase()).filter((name) => name !== ''))];
}

/**
 * Plan a call: with no engines (neither in the call nor in web.search.default_engines) every configured
 * backend is asked; otherwise `searxng`, `brave` and `tavily` name those backends (`brave` falls back to
 * SearXNG's brave engine without a Brave key) and every other name is a SearXNG engine. Answers an error
 * message naming the missing configuration instead of a plan when a name cannot be served.
 */
export function planSearch(
  settings: WebSettings['search'],
  requested: readonly string[],
): SearchPlan | { error: string } {
  const configured: SearchBackendName[] = [];
  if (settings.searxngUrl) configured.push('searxng');
  if (settings.braveApiKey) configured.push('brave');
  if (settings.tavilyApiKey) configured.push('tavily');
  if (configured.length === 0)
    return {
      error: `web_search has no search backend configured on this server: set ${SEARCH_BACKEND_KEYS} in the server config`,
    };
  const names = requested.length > 0 ? requested : engineNames(settings.defaultEngines);
  if (names.length === 0) return { backends: configured, searxngEngines: [] };
  const backends = new Set<SearchBackendName>();
  const searxngEngines: string[] = [];
  for (const name of names) {
    if (HEADLESS.has(name))
      return { error: `engine "${name}" needs a headless browser, which this server does not run; use another engine` };
    if (name === 'searxng' || name === 'tavily' || (name === 'brave' && settings.braveApiKey)) {
      if (!configured.includes(name))
        return {
          error: `engine "${name}" needs web.search.${name === 'searxng' ? 'searxng_url' : 'tavily_api_key'} in the server config`,
        };
      backends.add(name);
      continue;
    }
    if (!settings.searxngUrl)
      return {
        error: `engine "${name}" is served through SearXNG: it needs web.search.searxng_url in the server config${name === 'brave' ? ' (or web.search.brave_api_key)' : ''}; configured: ${configured.join(', ')}`,
      };
    backends.add('searxng');
    searxngEngines.push(SEARXNG_NAMES[name] ?? name);
  }
  return { backends: [...backends], searxngEngines };
}
