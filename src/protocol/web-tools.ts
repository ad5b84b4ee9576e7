import { z } from 'zod';

/** Default, largest `timeout` (seconds) of one web_fetch call. */
export const WEB_FETCH_DEFAULT_TIMEOUT_SECS = 30;
export const WEB_FETCH_MAX_TIMEOUT_SECS = 120;
/** Default and largest `max_chars` of one web_fetch page (larger requests are clamped, see `range.limit_clamped`). */
export const WEB_FETCH_DEFAULT_MAX_CHARS = 50_000;
export const WEB_FETCH_MAX_CHARS = 100_000;
/** Default, largest `limit` of one web_search call. */
export const WEB_SEARCH_DEFAULT_LIMIT = 10;
export const WEB_SEARCH_MAX_LIMIT = 50;
/** Default (config web.search.timeout_secs) and largest `timeout` (seconds) of one web_search call. */
export const WEB_SEARCH_DEFAULT_TIMEOUT_SECS = 20;
export const WEB_SEARCH_MAX_TIMEOUT_SECS = 60;
/** Bounds of `full_text_bytes` (json format only). */
export const WEB_SEARCH_MIN_FULL_TEXT_BYTES = 512;
export const WEB_SEARCH_MAX_FULL_TEXT_BYTES = 32_768;

/*
 * Key order matters: parsed arguments keep it, and the permission subject of the web tools is their compact
 * JSON (SEED-REFERENCE §3.2). `url` and `query` come first so a rule such as
 * `web_fetch({"url":"https://docs.example.com/**)` is a prefix test on the address.
 */

/** web_fetch arguments (the seed's schema; defaults are applied by the tool, so the policy sees the call as given). */
export const WebFetchParamsSchema = z
  .object({
    url: z.string().min(1).max(8192).describe('Required. The http:// or https:// URL to fetch.'),
    format: z
      .enum(['markdown', 'text', 'html'])
      .optional()
      .describe(
        'How an HTML page is returned: markdown (default), text or html. Other text content is returned as it is.',
      ),
    timeout: z
      .number()
      .int()
      .min(1)
      .max(WEB_FETCH_MAX_TIMEOUT_SECS)
      .optional()
      .describe(
        `Seconds for the whole fetch, redirects and body included (default ${WEB_FETCH_DEFAULT_TIMEOUT_SECS}, max ${WEB_FETCH_MAX_TIMEOUT_SECS}).`,
      ),
    body_only: z
      .boolean()
      .optional()
      .describe('Only the <body> of an HTML page, without script, style and noscript (default true).'),
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'Character offset into the converted content to start from (default 0); use the next_offset a previous call gave.',
      ),
    max_chars: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        `Most characters to return (default ${WEB_FETCH_DEFAULT_MAX_CHARS}; values above ${WEB_FETCH_MAX_CHARS} are clamped to it).`,
      ),
  })
  .strict();

/** Parsed web_fetch arguments. */
export type WebFetchParams = z.infer<typeof WebFetchParamsSchema>;

/** web_search arguments (the seed's schema); an unknown key is refused, with a hint for `engine`. */
export const WebSearchParamsSchema = z.strictObject(
  {
    query: z.string().trim().min(1).max(2000).describe('Required. What to search for.'),
    engines: z
      .union([z.array(z.string().min(1).max(64)).max(32), z.string().max(2048)])
      .optional()
      .describe(
        'Engines to ask, as a list or a comma-separated string (e.g. ["brave", "wiki"] or "ddg,bing"). Default: config web.search.default_engines, else every configured backend.',
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(WEB_SEARCH_MAX_LIMIT)
      .optional()
      .describe(`Most results to return (default ${WEB_SEARCH_DEFAULT_LIMIT}, max ${WEB_SEARCH_MAX_LIMIT}).`),
    timeout: z
      .number()
      .int()
      .min(1)
      .max(WEB_SEARCH_MAX_TIMEOUT_SECS)
      .optional()
      .describe(
        `Seconds to wait for the backends (default ${WEB_SEARCH_DEFAULT_TIMEOUT_SECS} or config web.search.timeout_secs, max ${WEB_SEARCH_MAX_TIMEOUT_SECS}).`,
      ),
    proxy: z
      .string()
      .max(2048)
      .optional()
      .describe('Not supported by this server: a proxy would bypass its address checks. Leave it out.'),
    format: z
      .enum(['text', 'json'])
      .optional()
      .describe('text (default): a numbered list; json: the results as a JSON array.'),
    full_text_bytes: z
      .number()
      .int()
      .min(WEB_SEARCH_MIN_FULL_TEXT_BYTES)
      .max(WEB_SEARCH_MAX_FULL_TEXT_BYTES)
      .optional()
      .describe(
        `json format only: include up to this many bytes of each result's full text where the backend provides it (${WEB_SEARCH_MIN_FULL_TEXT_BYTES}..${WEB_SEARCH_MAX_FULL_TEXT_BYTES}).`,
      ),
  },
  {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const keys = issue.keys.map((key) => `"${key}"`).join(', ');
      const hint = issue.keys.includes('engine') ? ' (the key is "engines": a list or a comma-separated string)' : '';
      return `unknown key${issue.keys.length === 1 ? '' : 's'} ${keys}${hint}; web_search accepts query, engines, limit, timeout, proxy, format, full_text_bytes`;
    },
  },
);

/** Parsed web_search arguments. */
export type WebSearchParams = z.infer<typeof WebSearchParamsSchema>;

/** One web_search result in the seed's shape. */
export const WebSearchResultSchema = z
  .object({
    title: z.string(),
    url: z.string(),
    content: z.string(),
    engines: z.array(z.string()),
    score: z.number(),
    published_date: z.string().optional(),
    full_text: z.string().optional(),
  })
  .meta({ id: 'WebSearchResult' });

/** A web_search result. */
export type WebSearchResult = z.infer<typeof WebSearchResultSchema>;
