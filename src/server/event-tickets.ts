import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { clusterSecretsOf, type ClusterSecrets } from '../cluster/cluster-secrets.js';
import { ScopeSchema } from '../config/api-token.js';
import { CodeError } from '../errors.js';
import type { Caller } from '../runtime/ports/caller.js';
import type { SessionKey } from '../stores/session-key.js';

/** A ticket and the instant it stops being accepted. */
export interface IssuedTicket {
  ticket: string;
  expiresAtMs: number;
}

// What a ticket says, signed: version, key id, principal, tenant, scopes, session key, expiry (epoch ms).
const TicketClaimsSchema = z
  .object({
    v: z.literal(1),
    k: z.string(),
    p: z.string(),
    t: z.string(),
    s: z.array(ScopeSchema),
    key: z.string(),
    exp: z.number().int(),
  })
  .strict();

// Domain separation: the cluster secret also signs A3S-Forwarded; a ticket's MAC can never stand for one.
const DOMAIN = 'a3s-event-ticket.v1\n';

const REFUSED = 'query.ticket: unknown, expired, or not for this session; ask POST /v1/auth/ticket for a new one';

/**
 * Short-lived tickets for one session's events route, for clients that cannot set an Authorization header
 * (a browser's EventSource). A ticket is `<claims>.<mac>`: the claims (principal, tenant, scopes, session key,
 * expiry, key id) in base64url JSON and their HMAC-SHA256 under the cluster secret, so any node of the cluster
 * accepts a ticket any other issued, and nothing is stored. It is accepted until it expires, as often as the
 * client reconnects. A key rotation keeps tickets signed with `previous_secret` valid; a key that is no longer
 * configured refuses them. Without a cluster secret (one node) the secret is random per process.
 */
export class EventTickets {
  constructor(
    private readonly secrets: ClusterSecrets,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Issue a ticket for `key` to `caller`. */
  issue(caller: Caller, key: SessionKey): IssuedTicket {
    const expiresAtMs = this.now() + this.ttlMs;
    const claims = {
      v: 1,
      k: this.secrets.signingId,
      p: caller.principal,
      t: caller.tenantId,
      s: [...caller.scopes].sort(),
      key,
      exp: expiresAtMs,
    };
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return { ticket: `${body}.${this.secrets.sign(DOMAIN + body)}`, expiresAtMs };
  }

  /**
   * The caller a ticket stands for on the events route of `key`; UNAUTHORIZED when the ticket is malformed,
   * tampered with, signed by an unknown key, expired, or bound to another session (the same answer for all).
   */
  redeem(ticket: string, key: (caller: Caller) => SessionKey): Caller {
    const dot = ticket.indexOf('.');
    if (dot <= 0 || ticket.indexOf('.', dot + 1) !== -1) throw new CodeError('UNAUTHORIZED', REFUSED);
    const body = ticket.slice(0, dot);
    const claims = parseClaims(body);
    if (!claims || !this.secrets.verify(claims.k, DOMAIN + body, ticket.slice(dot + 1)) || claims.exp <= this.now()) {
      throw new CodeError('UNAUTHORIZED', REFUSED);
    }
    const caller: Caller = { principal: claims.p, tenantId: claims.t, scopes: new Set(claims.s) };
    if (key(caller) !== claims.key) throw new CodeError('UNAUTHORIZED', REFUSED);
    return caller;
  }
}

function parseClaims(body: string): z.infer<typeof TicketClaimsSchema> | undefined {
  try {
    const parsed = TicketClaimsSchema.safeParse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const byContext = new WeakMap<object, EventTickets>();

/** The ticket issuer of one server context (shared by the ticket route and the events route). */
export function eventTicketsFor(ctx: {
  config: { limits: { eventTicketTtlMs: number } };
  hostEnv: { now(): number };
  clusterSecrets: ClusterSecrets | undefined;
}): EventTickets {
  let tickets = byContext.get(ctx);
  if (!tickets) {
    const secrets =
      ctx.clusterSecrets ?? clusterSecretsOf({ id: 'local', secret: randomBytes(32).toString('base64url') });
    tickets = new EventTickets(secrets, ctx.config.limits.eventTicketTtlMs, () => ctx.hostEnv.now());
    byContext.set(ctx, tickets);
  }
  return tickets;
}
