import { request, type Dispatcher } from 'undici';
import { checkOutboundUrl, type OutboundResolver } from '../outbound/check-outbound-url.js';
import { OutboundUrlError } from '../outbound/outbound-url-error.js';
import { pinnedDispatcher } from '../outbound/pinned-dispatcher.js';

/** The most of a receiver's answer a delivery reads; the rest is never read (the connection is closed). */
export const WEBHOOK_ANSWER_READ_BYTES = 4096;

/** One attempt's outcome: delivered on a 2xx, otherwise the status (when one came) and why it failed. */
export interface WebhookAttemptOutcome {
  readonly ok: boolean;
  readonly status: number | null;
  /** Why it failed, in the server's words (never the receiver's body). */
  readonly error: string | null;
}

/** One attempt's request. */
export interface WebhookAttempt {
  readonly url: string;
  readonly allowPrivate: boolean;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly timeoutMs: number;
  /** Name resolution for the address check (tests play a DNS server; default: the system resolver). */
  readonly resolve?: OutboundResolver;
}

async function readSome(body: AsyncIterable<Uint8Array>, max: number): Promise<number> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size >= max) break;
  }
  return Math.min(size, max);
}

/**
 * POST one webhook delivery: the URL checked at this attempt (one resolution, every address checked, private ones
 * only with `allowPrivate`) and the connection pinned to the checked address, no redirect followed, the whole
 * attempt (answer included) bounded by `timeoutMs`, and at most WEBHOOK_ANSWER_READ_BYTES of the answer read.
 * Never throws: the outcome says what happened.
 */
export async function sendWebhook(attempt: WebhookAttempt): Promise<WebhookAttemptOutcome> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('webhook timeout'));
  }, attempt.timeoutMs);
  let dispatcher: Dispatcher | undefined;
  let status: number | null = null;
  try {
    const checked = await checkOutboundUrl(attempt.url, {
      allowPrivate: attempt.allowPrivate,
      ...(attempt.resolve ? { resolve: attempt.resolve } : {}),
    });
    dispatcher = pinnedDispatcher(checked);
    // undici's request follows no redirects: a 3xx comes back as it is.
    const response = await request(checked.url, {
      dispatcher,
      method: 'POST',
      headers: attempt.headers,
      body: attempt.body,
      signal: controller.signal,
    });
    status = response.statusCode;
    response.body.on('error', () => undefined);
    // The status decides; the answer is read (at most 4 KiB, within the timeout) only to let the receiver finish.
    await readSome(response.body, WEBHOOK_ANSWER_READ_BYTES)
      .catch(() => 0)
      .finally(() => response.body.destroy());
    if (status >= 200 && status <= 299) return { ok: true, status, error: null };
    if (status >= 300 && status <= 399)
      return { ok: false, status, error: `answered a redirect (HTTP ${status}); redirects are not followed` };
    return { ok: false, status, error: `answered HTTP ${status}` };
  } catch (error) {
    if (error instanceof OutboundUrlError) return { ok: false, status: null, error: `url refused: ${error.message}` };
    if (timedOut) return { ok: false, status, error: `no answer within ${attempt.timeoutMs} ms` };
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const code =
      typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
        ? ` (${(error as { code: string }).code})`
        : '';
    return { ok: false, status, error: `request failed${code}${cause}` };
  } finally {
    clearTimeout(timer);
    if (dispatcher) void dispatcher.destroy().catch(() => undefined);
  }
}
