import { randomBytes } from 'node:crypto';
import type { ClusterSecrets } from './cluster-secrets.js';

/** The header a node adds to a request it forwards to the session's owner. */
export const FORWARDED_HEADER = 'a3s-forwarded';

/** How far a forwarded request's time may be from the receiver's clock (either way). */
export const FORWARDED_MAX_SKEW_MS = 30_000;

/** A forward is never forwarded again: one hop. */
export const MAX_HOPS = 1;

/** What a valid A3S-Forwarded says. */
export interface ForwardedHop {
  /** The node that forwarded the request. */
  readonly fromNode: string;
  /** The client address the forwarding node saw (believed only because the signature is valid). */
  readonly clientAddress: string;
  readonly hop: number;
}

/** Why an A3S-Forwarded header was refused. */
export type ForwardedRefusal = 'malformed' | 'bad_signature' | 'expired' | 'replayed' | 'hop_limit';

const FIELD = /^[A-Za-z0-9_.:-]{1,128}$/;

function payloadOf(
  fields: Record<'kid' | 't' | 'hop' | 'from' | 'for' | 'n', string>,
  method: string,
  url: string,
): string {
  return [
    'a3s-forwarded-v1',
    fields.kid,
    fields.t,
    fields.hop,
    fields.from,
    fields.for,
    fields.n,
    method.toUpperCase(),
    url,
  ].join('\n');
}

/**
 * Signs and checks `A3S-Forwarded: v1;kid=<key id>;t=<unix ms>;hop=<n>;from=<node id>;for=<client address>;n=<nonce>;sig=<HMAC>`,
 * an HMAC-SHA256 with the cluster secret over all of those plus the method and the request's path and query.
 * A header is accepted once (its nonce is remembered for twice the allowed skew; an unknown key id is a bad signature), within FORWARDED_MAX_SKEW_MS
 * of this node's clock, at hop <= MAX_HOPS. The receiver still authenticates the client's own credentials:
 * the signature only says which node forwarded it, for whom, and that it must not be forwarded again.
 */
export class ForwardedHeaders {
  private readonly seen = new Map<string, number>();
  private sweepAt = 0;

  constructor(
    private readonly secrets: ClusterSecrets,
    private readonly nodeId: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The header value for a request this node forwards (`url` is the path and query it sends). */
  sign(method: string, url: string, clientAddress: string): string {
    const fields = {
      kid: this.secrets.signingId,
      t: String(this.now()),
      hop: '1',
      from: this.nodeId,
      for: clientAddress.replace(/[^A-Za-z0-9_.:-]/g, '') || 'unknown',
      n: randomBytes(12).toString('base64url'),
    };
    const sig = this.secrets.sign(payloadOf(fields, method, url));
    return `v1;kid=${fields.kid};t=${fields.t};hop=${fields.hop};from=${fields.from};for=${fields.for};n=${fields.n};sig=${sig}`;
  }

  /** The hop a header describes, or why it is refused. */
  verify(
    value: string,
    method: string,
    url: string,
  ): { ok: true; hop: ForwardedHop } | { ok: false; reason: ForwardedRefusal } {
    const parts = value.split(';');
    if (parts[0] !== 'v1' || parts.length !== 8) return { ok: false, reason: 'malformed' };
    const fields: Record<string, string> = {};
    for (const part of parts.slice(1)) {
      const eq = part.indexOf('=');
      const name = part.slice(0, eq);
      const field = part.slice(eq + 1);
      if (eq <= 0 || !FIELD.test(field) || Object.hasOwn(fields, name)) return { ok: false, reason: 'malformed' };
      fields[name] = field;
    }
    const { kid, t, hop, from, n, sig } = fields;
    const forAddress = fields.for;
    if (
      kid === undefined ||
      t === undefined ||
      hop === undefined ||
      from === undefined ||
      forAddress === undefined ||
      n === undefined ||
      sig === undefined
    )
      return { ok: false, reason: 'malformed' };
    if (!/^[0-9]{1,16}$/.test(t) || !/^[0-9]{1,3}$/.test(hop)) return { ok: false, reason: 'malformed' };
    if (!this.secrets.verify(kid, payloadOf({ kid, t, hop, from, for: forAddress, n }, method, url), sig))
      return { ok: false, reason: 'bad_signature' };
    const now = this.now();
    if (Math.abs(now - Number(t)) > FORWARDED_MAX_SKEW_MS) return { ok: false, reason: 'expired' };
    if (Number(hop) > MAX_HOPS) return { ok: false, reason: 'hop_limit' };
    this.sweep(now);
    const nonce = `${kid}:${n}`;
    if (this.seen.has(nonce)) return { ok: false, reason: 'replayed' };
    this.seen.set(nonce, Number(t) + 2 * FORWARDED_MAX_SKEW_MS);
    return { ok: true, hop: { fromNode: from, clientAddress: forAddress, hop: Number(hop) } };
  }

  /** Forget nonces whose header could no longer pass the clock check (at most once a second). */
  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + 1000;
    for (const [nonce, expires] of this.seen) if (expires < now) this.seen.delete(nonce);
  }
}
