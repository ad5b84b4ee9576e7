import { fetch as undiciFetch, type Response } from 'undici';
import { checkOutboundUrl } from '../outbound/check-outbound-url.js';
import { OutboundUrlError } from '../outbound/outbound-url-error.js';
import { pinnedDispatcher } from '../outbound/pinned-dispatcher.js';
import type { WebAccess } from './web-access.js';
import { WebRequestError } from './web-request-error.js';

/** Statuses that carry a Location to follow. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** One request of checkedRequest. */
export interface CheckedRequestInit {
  readonly method?: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Redirects followed (each target checked again); one more is an error. 0: a redirect is an error. */
  readonly maxRedirects: number;
  readonly signal: AbortSignal;
}

/** A response to a checked request; `release` closes its connection (call it once the body is read or abandoned). */
export interface CheckedResponse {
  readonly response: Response;
  /** The URL that answered (after redirects). */
  readonly finalUrl: string;
  /** Every redirect target followed, in order. */
  readonly redirects: readonly string[];
  release(): void;
}

function refusal(url: string, error: OutboundUrlError, redirected: boolean): WebRequestError {
  const hint =
    error.refusal === 'private_address'
      ? ' (config web.allow_private_networks = true lets the web tools reach private addresses)'
      : '';
  const what = redirected ? `redirect target ${url}` : url;
  return new WebRequestError('refused', `${what} is refused: ${error.message}${hint}`);
}

/**
 * Make one outbound request to a model- or operator-named URL: every URL, and every redirect target, is
 * checked by checkOutboundUrl (http(s) only, no credentials, no private address unless
 * web.allow_private_networks), resolved once, and the connection goes only to the checked address through
 * its own pinned dispatcher (no second DNS lookup, so no DNS rebinding). Redirects are followed by hand, at
 * most `maxRedirects`. Throws WebRequestError; an abort of `signal` rejects with the signal's reason.
 */
export async function checkedRequest(
  access: WebAccess,
  url: string,
  init: CheckedRequestInit,
): Promise<CheckedResponse> {
  const allowPrivate = access.settings.allowPrivateNetworks;
  const redirects: string[] = [];
  let current = url;
  for (;;) {
    let checked;
    try {
      checked = await checkOutboundUrl(current, {
        allowPrivate,
        ...(access.resolve ? { resolve: access.resolve } : {}),
      });
    } catch (error) {
      if (error instanceof OutboundUrlError) throw refusal(current, error, redirects.length > 0);
      throw error;
    }
    init.signal.throwIfAborted();
    const dispatcher = access.connect ? access.connect(checked) : pinnedDispatcher(checked);
    const release = (): void => void dispatcher.destroy().catch(() => undefined);
    let response: Response;
    try {
      response = await undiciFetch(checked.url, {
        method: init.method ?? 'GET',
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.body !== undefined ? { body: init.body } : {}),
        dispatcher,
        redirect: 'manual',
        signal: init.signal,
      });
    } catch (error) {
      release();
      if (init.signal.aborted) throw init.signal.reason;
      const cause =
        error instanceof Error && error.cause instanceof Error
          ? `: ${error.cause.message}`
          : error instanceof Error
            ? `: ${error.message}`
            : '';
      throw new WebRequestError('network', `request to ${checked.url.href} failed${cause}`);
    }
    if (!REDIRECTS.has(response.status)) return { response, finalUrl: checked.url.href, redirects, release };
    const location = response.headers.get('location');
    await response.body?.cancel().catch(() => undefined);
    release();
    if (init.maxRedirects === 0)
      throw new WebRequestError(
        'redirect',
        `${checked.url.href} answered a redirect (HTTP ${response.status}${location ? ` to ${location}` : ''}); redirects are not followed here`,
      );
    if (!location)
      throw new WebRequestError(
        'redirect',
        `${checked.url.href} answered HTTP ${response.status} without a Location header`,
      );
    if (redirects.length >= init.maxRedirects)
      throw new WebRequestError(
        'too_many_redirects',
        `too many redirects: more than ${init.maxRedirects} (last ${checked.url.href} -> ${location})`,
      );
    let next: URL;
    try {
      next = new URL(location, checked.url);
    } catch {
      throw new WebRequestError('redirect', `${checked.url.href} redirected to "${location}", which is not a URL`);
    }
    current = next.href;
    redirects.push(current);
  }
}
