import { request, type Dispatcher } from 'undici';
import { isWebhookUrl } from '../../../protocol/hooks.js';
import { checkOutboundUrl, type CheckedOutboundUrl, type OutboundResolver } from '../../outbound/check-outbound-url.js';
import { OutboundUrlError } from '../../outbound/outbound-url-error.js';
import { pinnedDispatcher } from '../../outbound/pinned-dispatcher.js';
import { HostBridgeError } from './host-bridge-error.js';
import { linkSignals } from './linked-signal.js';

/** Largest webhook answer read; a longer body is a failed request. */
export const MAX_WEBHOOK_RESPONSE_BYTES = 1024 * 1024;

/**
 * A webhook host: the server POSTs JSON to `url` (http or https only) and reads a JSON answer. Webhooks
 * are server-side requests to a URL the host configured when it registered the hook or budget endpoint:
 * before every request the host is resolved once and every address checked (private, loopback and
 * link-local ranges refused unless `allowPrivateNetworks`), the connection goes to a checked address
 * only, and redirects are not followed (a 3xx is a failure), so the request never lands anywhere else.
 */
export interface WebhookHostEndpoint {
  kind: 'webhook';
  url: string;
  headers?: Record<string, string>;
  /**
   * The URL may name private, loopback or link-local addresses: the operator's config declared it, or the
   * registering caller had host_direct (or config outbound.allow_private_networks was on). Absent: refused.
   */
  allowPrivateNetworks?: boolean;
}

/** How one webhook request is made. */
export interface WebhookRequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * A fetch implementation to send the request with instead of undici's `request` (a test seam): it gets
   * the checked URL and, in `init.dispatcher`, the dispatcher pinned to the checked address.
   */
  fetch?: typeof fetch;
  /** Name resolution for the address check (default: the system resolver). */
  resolve?: OutboundResolver;
}

async function readBounded(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const value of body) {
    size += value.byteLength;
    if (size > MAX_WEBHOOK_RESPONSE_BYTES) {
      throw new HostBridgeError(
        'bad_response',
        `webhook answer is larger than ${MAX_WEBHOOK_RESPONSE_BYTES} bytes (MAX_WEBHOOK_RESPONSE_BYTES)`,
      );
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

interface WebhookAnswer {
  status: number;
  location: string | undefined;
  body: AsyncIterable<Uint8Array> & { destroy?(): void };
}

async function send(
  checked: CheckedOutboundUrl,
  dispatcher: Dispatcher,
  headers: Headers,
  body: string,
  signal: AbortSignal,
  fetchImpl: typeof fetch | undefined,
): Promise<WebhookAnswer> {
  if (fetchImpl) {
    const init: RequestInit & { dispatcher: Dispatcher } = {
      method: 'POST',
      headers,
      body,
      signal,
      redirect: 'manual',
      dispatcher,
    };
    const response = await fetchImpl(checked.url, init);
    const stream = response.body ?? (async function* () {})();
    return {
      status: response.status,
      location: response.headers.get('location') ?? undefined,
      body: stream as AsyncIterable<Uint8Array>,
    };
  }
  // undici's request follows no redirects: a 3xx comes back as it is.
  const response = await request(checked.url, {
    dispatcher,
    method: 'POST',
    headers: Object.fromEntries(headers),
    body,
    signal,
  });
  const location = response.headers.location;
  // An unread body is destroyed when the request ends; its abort error then has nobody else to reach.
  response.body.on('error', () => undefined);
  return {
    status: response.statusCode,
    location: Array.isArray(location) ? location[0] : location,
    body: response.body,
  };
}

/**
 * POST `body` as JSON and return the parsed JSON answer. The URL is checked first (checkOutboundUrl: one
 * resolution, every address checked) and the connection is pinned to the checked address; a refused URL,
 * a redirect, non-2xx, bad JSON, timeout and abort reject with HostBridgeError.
 */
export async function postWebhook(
  endpoint: WebhookHostEndpoint,
  body: Record<string, unknown>,
  options: WebhookRequestOptions,
): Promise<unknown> {
  if (!isWebhookUrl(endpoint.url))
    throw new HostBridgeError(
      'invalid_endpoint',
      'webhook url must be an absolute http:// or https:// URL without credentials',
    );
  const link = linkSignals([options.signal]);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    link.abort(new Error('webhook timeout'));
  }, options.timeoutMs);
  const signal = link.signal;
  let dispatcher: Dispatcher | undefined;
  let answerBody: WebhookAnswer['body'] | undefined;
  try {
    let checked: CheckedOutboundUrl;
    try {
      checked = await checkOutboundUrl(endpoint.url, {
        allowPrivate: endpoint.allowPrivateNetworks === true,
        ...(options.resolve ? { resolve: options.resolve } : {}),
      });
    } catch (error) {
      if (error instanceof OutboundUrlError)
        throw new HostBridgeError('invalid_endpoint', `webhook url refused: ${error.message}`);
      throw error;
    }
    dispatcher = pinnedDispatcher(checked);
    const headers = new Headers(endpoint.headers);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json');
    const answer = await send(checked, dispatcher, headers, JSON.stringify(body), signal, options.fetch);
    answerBody = answer.body;
    if (answer.status >= 300 && answer.status <= 399) {
      const target = answer.location ? ` to ${answer.location}` : '';
      throw new HostBridgeError(
        'http_status',
        `webhook answered a redirect (HTTP ${answer.status}${target}); redirects are not followed`,
      );
    }
    if (answer.status < 200 || answer.status > 299)
      throw new HostBridgeError('http_status', `webhook answered HTTP ${answer.status}`);
    const text = await readBounded(answer.body);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new HostBridgeError('bad_response', 'webhook answer is not valid JSON');
    }
  } catch (error) {
    if (options.signal?.aborted) throw new HostBridgeError('aborted', 'request aborted by the caller');
    if (timedOut) throw new HostBridgeError('timeout', `webhook gave no answer within ${options.timeoutMs} ms`);
    if (error instanceof HostBridgeError) throw error;
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    throw new HostBridgeError(
      'network',
      `webhook request failed${error instanceof Error ? `: ${error.message}` : ''}${cause}`,
    );
  } finally {
    clearTimeout(timer);
    link.dispose();
    answerBody?.destroy?.();
    // The pool held one connection for this request; closing it without waiting frees the socket.
    if (dispatcher) void dispatcher.destroy().catch(() => undefined);
  }
}
