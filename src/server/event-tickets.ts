import { randomBytes } from 'node:crypto';
import { CodeError } from '../errors.js';
import type { Caller } from '../runtime/ports/caller.js';
import type { SessionKey } from '../stores/session-key.js';

/** Outstanding (unexpired) tickets one principal of one tenant may hold; one more answers 429 QUOTA_EXCEEDED. */
export const MAX_TICKETS_PER_CALLER = 1000;

interface TicketEntry {
  caller: Caller;
  key: SessionKey;
  expiresAtMs: number;
}

/** A ticket and the instant it stops being accepted. */
export interface IssuedTicket {
  ticket: string;
  expiresAtMs: number;
}

/**
 * Short-lived tickets for one session's events route, for clients that cannot set an Authorization header
 * (a browser's EventSource). A ticket is 32 random bytes, bound to the caller that asked for it (principal,
 * tenant, scopes) and to one session key; it is accepted until it expires, as often as the client
 * reconnects. Kept in this process's memory: a ticket is valid on the node that issued it (behind a load
 * balancer, route a client's ticket request and its stream to the same node, or let it ask again).
 */
export class EventTickets {
  private readonly tickets = new Map<string, TicketEntry>();
  private readonly perCaller = new Map<string, number>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Issue a ticket for `key` to `caller`; QUOTA_EXCEEDED past MAX_TICKETS_PER_CALLER outstanding ones. */
  issue(caller: Caller, key: SessionKey): IssuedTicket {
    this.sweep();
    const owner = callerKey(caller);
    const held = this.perCaller.get(owner) ?? 0;
    if (held >= MAX_TICKETS_PER_CALLER) {
      throw new CodeError('QUOTA_EXCEEDED', `at most ${MAX_TICKETS_PER_CALLER} unexpired event tickets per caller; reuse one (it is valid for reconnects until it expires)`, { quota: 'eventTickets', limit: MAX_TICKETS_PER_CALLER, usage: held });
    }
    const ticket = randomBytes(32).toString('base64url');
    const expiresAtMs = this.now() + this.ttlMs;
    this.tickets.set(ticket, { caller, key, expiresAtMs });
    this.perCaller.set(owner, held + 1);
    return { ticket, expiresAtMs };
  }

  /**
   * The caller a ticket stands for on the events route of `key`; UNAUTHORIZED when the ticket is unknown,
   * expired, or bound to another session (the same answer for all three).
   */
  redeem(ticket: string, key: (caller: Caller) => SessionKey): Caller {
    const entry = this.tickets.get(ticket);
    if (entry && entry.expiresAtMs <= this.now()) this.drop(ticket, entry);
    else if (entry && key(entry.caller) === entry.key) return entry.caller;
    throw new CodeError('UNAUTHORIZED', 'query.ticket: unknown, expired, or not for this session; ask POST /v1/auth/ticket for a new one');
  }

  /** Number of tickets held (expired ones included until the next sweep). */
  get size(): number {
    return this.tickets.size;
  }

  // At most once a second: issuing stays O(1) however many tickets are held.
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweepMs < 1000 && this.tickets.size < MAX_TICKETS_PER_CALLER) return;
    this.lastSweepMs = now;
    for (const [ticket, entry] of this.tickets) if (entry.expiresAtMs <= now) this.drop(ticket, entry);
  }

  private drop(ticket: string, entry: TicketEntry): void {
    this.tickets.delete(ticket);
    const owner = callerKey(entry.caller);
    const held = (this.perCaller.get(owner) ?? 1) - 1;
    if (held <= 0) this.perCaller.delete(owner);
    else this.perCaller.set(owner, held);
  }
}

function callerKey(caller: Caller): string {
  return `${caller.tenantId}\u0000${caller.principal}`;
}

const byContext = new WeakMap<object, EventTickets>();

/** The ticket store of one server context (shared by the ticket route and the events route). */
export function eventTicketsFor(ctx: { config: { limits: { eventTicketTtlMs: number } }; hostEnv: { now(): number } }): EventTickets {
  let tickets = byContext.get(ctx);
  if (!tickets) {
    tickets = new EventTickets(ctx.config.limits.eventTicketTtlMs, () => ctx.hostEnv.now());
    byContext.set(ctx, tickets);
  }
  return tickets;
}
