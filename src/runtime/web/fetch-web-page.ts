import type { ToolResult } from '../tools/define-tool.js';
import {
  WEB_FETCH_DEFAULT_MAX_CHARS,
  WEB_FETCH_DEFAULT_TIMEOUT_SECS,
  WEB_FETCH_MAX_CHARS,
  type WebFetchParams,
} from '../../protocol/web-tools.js';
import { checkedRequest } from './checked-request.js';
import { contentKind, decodeBody, mediaType } from './content-kind.js';
import { convertHtml } from './html-content.js';
import { pageOf } from './page-range.js';
import { readCappedBody } from './read-capped-body.js';
import type { WebAccess } from './web-access.js';
import { WebRequestError } from './web-request-error.js';

/** Most decoded body bytes web_fetch reads; a longer body is an error (nothing half-converted is returned). */
export const WEB_FETCH_BODY_CAP_BYTES = 5 * 1024 * 1024;
/** Most redirects web_fetch follows, each target checked again. */
export const WEB_FETCH_MAX_REDIRECTS = 10;

const USER_AGENT = 'a3s-code-server web_fetch (+https://github.com/a3s-lab)';
const ACCEPT =
  'text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/json;q=0.8,application/xml;q=0.8,*/*;q=0.1';

function fail(message: string, errorKind?: ToolResult['errorKind'], metadata?: Record<string, unknown>): ToolResult {
  return { output: message, exitCode: 1, ...(metadata ? { metadata } : {}), ...(errorKind ? { errorKind } : {}) };
}

/** Retry-After (seconds or an HTTP date) in milliseconds from now, when it is readable. */
function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

function errorOf(error: unknown, url: string, timeoutMs: number, timedOut: boolean, cancelled: boolean): ToolResult {
  if (timedOut)
    return fail(`web_fetch of ${url} timed out after ${timeoutMs / 1000} s (timeout; the most is 120).`, {
      type: 'timeout',
      op: 'web_fetch',
      duration_ms: timeoutMs,
    });
  if (cancelled) return fail(`web_fetch of ${url} was cancelled.`, { type: 'cancelled', op: 'web_fetch' });
  if (error instanceof WebRequestError) {
    if (error.failure === 'refused')
      return fail(
        `web_fetch refused: ${error.message}`,
        { type: 'invalid_argument', message: error.message },
        { refused: true },
      );
    return fail(`web_fetch failed: ${error.message}`, { type: 'transport', op: 'web_fetch' });
  }
  return fail(`web_fetch of ${url} failed: ${error instanceof Error ? error.message : String(error)}`, {
    type: 'transport',
    op: 'web_fetch',
  });
}

/**
 * The web_fetch tool's work: fetch `url` through checkedRequest (every address and redirect target checked,
 * at most 10 redirects), read at most 5 MB of body, refuse binary content, convert HTML to the requested
 * format, and return one page of `max_chars` from `offset` with the seed's range metadata. Faults are tool
 * errors: `timeout` kind when `timeout` seconds pass, `rate_limited` on HTTP 429, `cancelled` with `signal`.
 */
export async function fetchWebPage(access: WebAccess, args: WebFetchParams, signal: AbortSignal): Promise<ToolResult> {
  const timeoutMs = (args.timeout ?? WEB_FETCH_DEFAULT_TIMEOUT_SECS) * 1000;
  const format = args.format ?? 'markdown';
  const bodyOnly = args.body_only ?? true;
  const offset = args.offset ?? 0;
  const requested = args.max_chars ?? WEB_FETCH_DEFAULT_MAX_CHARS;
  const timer = AbortSignal.timeout(timeoutMs);
  const combined = AbortSignal.any([signal, timer]);
  let release: (() => void) | undefined;
  try {
    const answer = await checkedRequest(access, args.url, {
      headers: { 'user-agent': USER_AGENT, accept: ACCEPT },
      maxRedirects: WEB_FETCH_MAX_REDIRECTS,
      signal: combined,
    });
    release = answer.release;
    const { response, finalUrl, redirects } = answer;
    const type = response.headers.get('content-type');
    const base = {
      url: args.url,
      final_url: finalUrl,
      status: response.status,
      content_type: mediaType(type) || null,
      redirects: redirects.length,
    };
    if (response.status === 429) {
      await response.body?.cancel().catch(() => undefined);
      const retry = retryAfterMs(response.headers.get('retry-after'), Date.now());
      return fail(
        `web_fetch of ${finalUrl} was rate limited (HTTP 429)${retry !== undefined ? `; retry after ${Math.ceil(retry / 1000)} s` : ''}.`,
        { type: 'rate_limited', ...(retry !== undefined ? { retry_after_ms: retry } : {}) },
        base,
      );
    }
    const body = await readCappedBody(response, WEB_FETCH_BODY_CAP_BYTES);
    if (body.overflow) {
      return fail(
        `web_fetch of ${finalUrl} refused: the response body is larger than the ${WEB_FETCH_BODY_CAP_BYTES} byte (5 MB) cap; reading stopped there and nothing is returned.`,
        { type: 'unsupported', message: 'response body over the 5 MB cap' },
        { ...base, body_cap_bytes: WEB_FETCH_BODY_CAP_BYTES },
      );
    }
    const kind = contentKind(type, body.bytes);
    if (kind === 'binary') {
      return fail(
        `web_fetch of ${finalUrl} refused: content type ${mediaType(type) || '(none, binary bytes)'} is binary; web_fetch reads HTML, text, JSON and XML only.`,
        { type: 'unsupported', message: `binary content type ${mediaType(type) || 'unknown'}` },
        base,
      );
    }
    const raw = decodeBody(body.bytes, type);
    const content = kind === 'html' ? convertHtml(raw, format, bodyOnly) : raw;
    if (response.status >= 400) {
      const snippet = content.slice(0, 1000);
      const errorKind: ToolResult['errorKind'] =
        response.status === 404 || response.status === 410
          ? { type: 'not_found', path: finalUrl }
          : { type: 'transport', op: 'web_fetch' };
      return fail(
        `web_fetch of ${finalUrl} answered HTTP ${response.status}${snippet ? `:\n${snippet}` : '.'}`,
        errorKind,
        base,
      );
    }
    const page = pageOf(content, offset, requested, WEB_FETCH_MAX_CHARS);
    if (!page)
      return fail(
        `web_fetch: offset ${offset} is past the end of the content (${content.length} characters); use an offset from 0 to ${content.length}.`,
        { type: 'invalid_argument', message: `offset ${offset} > total_chars ${content.length}` },
        base,
      );
    const { range } = page;
    const hint = range.eof
      ? ''
      : `\n\n[Showing characters ${range.offset}-${range.offset + range.returned_chars} of ${range.total_chars}. Call web_fetch again with offset=${range.next_offset} to continue.]`;
    return {
      output: `${page.text}${hint}`,
      exitCode: 0,
      metadata: { source_anchors: [finalUrl], range, ...base, format: kind === 'html' ? format : 'raw' },
    };
  } catch (error) {
    return errorOf(error, args.url, timeoutMs, timer.aborted && !signal.aborted, signal.aborted);
  } finally {
    release?.();
  }
}
