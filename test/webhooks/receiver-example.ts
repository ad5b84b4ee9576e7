// A receiver of A3S Code Server run webhooks, as docs/webhooks.md shows it: Node's http and crypto only, so it can
// be copied as it is. It checks the signature against each of its secrets (two while rotating), refuses a
// timestamp more than five minutes away (a replayed request), and drops a delivery id it has seen (a retry).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How far a signature's timestamp may be from the receiver's clock. */
export const TOLERANCE_SECONDS = 300;

/** Why a request was refused, or that it is good. */
export type Verdict = { ok: true } | { ok: false; reason: 'no_signature' | 'stale' | 'bad_signature' };

/** Check `A3S-Signature: t=<unix>,v1=<hex>[,v1=<hex>]` over `<t>.<raw body>` against any of `secrets`. */
export function verifyWebhook(
  headers: IncomingHttpHeaders,
  rawBody: string,
  secrets: readonly string[],
  nowSeconds: number = Math.floor(Date.now() / 1000),
): Verdict {
  const header = headers['a3s-signature'];
  if (typeof header !== 'string') return { ok: false, reason: 'no_signature' };
  let timestamp = NaN;
  const given: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key === 't') timestamp = Number(value);
    if (key === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value)) given.push(Buffer.from(value, 'hex'));
  }
  if (!Number.isInteger(timestamp) || given.length === 0) return { ok: false, reason: 'no_signature' };
  if (Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) return { ok: false, reason: 'stale' };
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
    if (given.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected)))
      return { ok: true };
  }
  return { ok: false, reason: 'bad_signature' };
}

/** One delivery the receiver accepted. */
export interface Accepted {
  deliveryId: string;
  body: Record<string, unknown>;
}

/** A running receiver. */
export interface Receiver {
  url: string;
  /** Deliveries accepted once each (a repeated delivery id is answered 200 and not kept again). */
  readonly accepted: Accepted[];
  /** Requests refused, with why. */
  readonly refused: string[];
  close(): Promise<void>;
}

/** Start the receiver on 127.0.0.1; `now` is its clock in seconds (a test moves it). */
export async function startReceiver(
  secrets: readonly string[],
  now: () => number = () => Math.floor(Date.now() / 1000),
): Promise<Receiver> {
  const accepted: Accepted[] = [];
  const refused: string[] = [];
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyWebhook(req.headers, raw, secrets, now());
      if (!verdict.ok) {
        refused.push(verdict.reason);
        res.writeHead(400).end(verdict.reason);
        return;
      }
      const deliveryId = String(req.headers['a3s-delivery-id']);
      // At least once: a retry of a delivery already handled is answered 200 and ignored.
      if (!seen.has(deliveryId)) {
        seen.add(deliveryId);
        accepted.push({ deliveryId, body: JSON.parse(raw) as Record<string, unknown> });
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    accepted,
    refused,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
