import { isWebhookUrl } from '../../../protocol/hooks.js';
import { HostBridgeError } from './host-bridge-error.js';
import { linkSignals } from './linked-signal.js';

/** Largest webhook answer read; a longer body is a failed request. */
export const MAX_WEBHOOK_RESPONSE_BYTES = 1024 * 1024;

/**
 * A webhook host: the server POSTs JSON to `url` (http or https only) and reads a JSON answer. Webhooks
 * are server-side requests to a URL the host configured when it registered the hook or budget endpoint;
 * redirects are not followed (a 3xx is a failure), so the request never lands anywhere else.
 */
export interface WebhookHostEndpoint {
  kind: 'webhook';
  url: string;
  headers?: Record<string, string>;
}

/** How one webhook request is made. */
export interface WebhookRequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The fetch implementation (defaults to the global one). */
  fetch?: typeof fetch;
}

async function readBounded(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_WEBHOOK_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new HostBridgeError('bad_response', `webhook answer is larger than ${MAX_WEBHOOK_RESPONSE_BYTES} bytes (MAX_WEBHOOK_RESPONSE_BYTES)`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** POST `body` as JSON and return the parsed JSON answer; non-2xx, bad JSON, timeout and abort reject with HostBridgeError. */
export async function postWebhook(endpoint: WebhookHostEndpoint, body: Record<string, unknown>, options: WebhookRequestOptions): Promise<unknown> {
  if (!isWebhookUrl(endpoint.url)) throw new HostBridgeError('invalid_endpoint', 'webhook url must be an absolute http:// or https:// URL without credentials');
  const link = linkSignals([options.signal]);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    link.abort(new Error('webhook timeout'));
  }, options.timeoutMs);
  const signal = link.signal;
  const fetchImpl = options.fetch ?? fetch;
  try {
    const headers = new Headers(endpoint.headers);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json');
    const response = await fetchImpl(endpoint.url, { method: 'POST', headers, body: JSON.stringify(body), signal, redirect: 'manual' });
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => undefined);
      throw new HostBridgeError('http_status', `webhook answered HTTP ${response.status}`);
    }
    const text = await readBounded(response);
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
    throw new HostBridgeError('network', `webhook request failed${error instanceof Error ? `: ${error.message}` : ''}${cause}`);
  } finally {
    clearTimeout(timer);
    link.dispose();
  }
}
