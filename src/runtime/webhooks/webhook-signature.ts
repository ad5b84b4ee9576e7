import { createHmac, timingSafeEqual } from 'node:crypto';

/** The signature header of a webhook delivery. */
export const WEBHOOK_SIGNATURE_HEADER = 'A3S-Signature';
/** The delivery id header: the same on every attempt of one delivery, on every node. */
export const WEBHOOK_DELIVERY_HEADER = 'A3S-Delivery-Id';
/** The event name header. */
export const WEBHOOK_EVENT_HEADER = 'A3S-Event';

/** The hex HMAC-SHA256 of `<t>.<body>` with `secret`. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * The A3S-Signature value `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: one v1 entry per secret (the tenant's current one
 * first and, while rotating, the one being retired), so a receiver that knows either accepts it.
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${webhookSignature(secret, timestamp, body)}`)].join(',');
}

/** The parts of an A3S-Signature value: its timestamp and its v1 signatures; undefined when malformed. */
export function parseSignatureHeader(value: string): { timestamp: number; signatures: string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const key = part.slice(0, eq).trim();
    const val = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(val)) timestamp = Number(val);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(val)) signatures.push(val);
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures };
}

/** True when one of the header's v1 signatures is `secret`'s over `<t>.<body>` (compared in constant time). */
export function signatureMatches(
  secret: string,
  timestamp: number,
  body: string,
  signatures: readonly string[],
): boolean {
  const expected = Buffer.from(webhookSignature(secret, timestamp, body), 'hex');
  return signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
