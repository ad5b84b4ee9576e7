import { describe, expect, it } from 'vitest';
import { clusterSecretsOf } from '../../src/cluster/cluster-secrets.js';
import { CodeError } from '../../src/errors.js';
import type { Caller } from '../../src/runtime/ports/caller.js';
import { EventTickets } from '../../src/server/event-tickets.js';
import { sessionKey } from '../../src/stores/session-key.js';

const SECRET = 'event-ticket-secret-0123456789abcdef';
const alice: Caller = { principal: 'alice', tenantId: 'tenant-a', scopes: new Set(['sessions']) };
const keyOf = (sessionId: string) => (caller: Caller) => sessionKey(caller.tenantId, sessionId);

function refused(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CodeError);
    expect((error as CodeError).code).toBe('UNAUTHORIZED');
    return (error as CodeError).message;
  }
  throw new Error('the ticket was accepted');
}

describe('EventTickets: HMAC tickets any node with the cluster secret accepts', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('a ticket issued by one node is redeemed by another with the same secret, as often as asked, and carries the caller', () => {
    const a = new EventTickets(clusterSecretsOf({ id: '1', secret: SECRET }), 60_000, clock);
    const b = new EventTickets(clusterSecretsOf({ id: '1', secret: SECRET }), 60_000, clock);
    const { ticket, expiresAtMs } = a.issue(alice, sessionKey('tenant-a', 's1'));
    expect(expiresAtMs).toBe(now + 60_000);
    for (let i = 0; i < 2; i += 1) {
      const caller = b.redeem(ticket, keyOf('s1'));
      expect({ principal: caller.principal, tenantId: caller.tenantId, scopes: [...caller.scopes] }).toEqual({
        principal: 'alice',
        tenantId: 'tenant-a',
        scopes: ['sessions'],
      });
    }
  });

  it('refuses another session, an expired ticket, a tampered one, another secret, and a rotated-out key; accepts previous_secret', () => {
    const k1 = new EventTickets(clusterSecretsOf({ id: 'k1', secret: SECRET }), 1000, clock);
    const { ticket } = k1.issue(alice, sessionKey('tenant-a', 's1'));
    expect(refused(() => k1.redeem(ticket, keyOf('s2')))).toContain('query.ticket');
    // A ticket names its tenant's session: read as another tenant's s1, it does not match.
    refused(() => k1.redeem(ticket, () => sessionKey('tenant-b', 's1')));
    // Tampered claims (another principal, same MAC) or MAC.
    const [body, mac] = ticket.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forgedBody = Buffer.from(JSON.stringify({ ...claims, p: 'mallory', s: ['admin'] })).toString('base64url');
    refused(() => k1.redeem(`${forgedBody}.${mac}`, keyOf('s1')));
    refused(() => k1.redeem(`${body}.${mac.slice(0, -2)}AA`, keyOf('s1')));
    refused(() => k1.redeem(`${body}.${mac}.x`, keyOf('s1')));
    refused(() => k1.redeem('not-a-ticket', keyOf('s1')));
    refused(() =>
      new EventTickets(clusterSecretsOf({ id: 'k1', secret: `${SECRET}-other` }), 1000, clock).redeem(
        ticket,
        keyOf('s1'),
      ),
    );
    // Rotation: k2 signs, k1 is previous_secret (accepted); once k1 is gone, refused.
    const rotating = new EventTickets(
      clusterSecretsOf({ id: 'k2', secret: `${SECRET}-k2` }, { id: 'k1', secret: SECRET }),
      1000,
      clock,
    );
    expect(rotating.redeem(ticket, keyOf('s1')).principal).toBe('alice');
    const rotated = new EventTickets(
      clusterSecretsOf({ id: 'k3', secret: `${SECRET}-k3` }, { id: 'k2', secret: `${SECRET}-k2` }),
      1000,
      clock,
    );
    refused(() => rotated.redeem(ticket, keyOf('s1')));
    expect(rotated.redeem(rotating.issue(alice, sessionKey('tenant-a', 's1')).ticket, keyOf('s1')).tenantId).toBe(
      'tenant-a',
    );
    // Expired.
    now += 1000;
    refused(() => k1.redeem(ticket, keyOf('s1')));
  });

  it('a ticket MAC is not an A3S-Forwarded MAC of the same bytes (domain separated)', () => {
    const secrets = clusterSecretsOf({ id: '1', secret: SECRET });
    const { ticket } = new EventTickets(secrets, 1000, clock).issue(alice, sessionKey('tenant-a', 's1'));
    const [body, mac] = ticket.split('.') as [string, string];
    expect(secrets.verify('1', body, mac)).toBe(false);
  });
});
