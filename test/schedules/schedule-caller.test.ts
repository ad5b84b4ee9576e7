import { describe, expect, it } from 'vitest';
import type { Scope } from '../../src/config/api-token.js';
import { scheduleCaller } from '../../src/runtime/schedules/schedule-caller.js';
import { Authenticator } from '../../src/server/authenticator.js';

const token = (principal: string, tenantId: string, scopes: Scope[], n: number) => ({
  token: `${principal}-${tenantId}-token-${n}-0123456789`,
  principal,
  tenantId,
  scopes,
});

const owner = (scopes: Scope[]) => ({ principal: 'alice', tenantId: 't1', scopes });

function scopesOf(result: ReturnType<typeof scheduleCaller>): string[] {
  if (!('caller' in result)) throw new Error(`refused: ${result.refused.code}`);
  return [...result.caller.scopes].sort();
}

describe("scheduleCaller: the intersection of what a schedule stored and what its owner's tokens grant now", () => {
  it('a token that grants more now does not widen the schedule; one that grants less narrows it', () => {
    const wider = new Authenticator([token('alice', 't1', ['sessions', 'host_direct'], 1)]);
    expect(scopesOf(scheduleCaller(owner(['sessions']), wider))).toEqual(['sessions']);
    const narrower = new Authenticator([token('alice', 't1', ['sessions'], 1)]);
    expect(scopesOf(scheduleCaller(owner(['sessions', 'host_direct']), narrower))).toEqual(['sessions']);
  });

  it("the principal's tokens of that tenant count together; admin on one side stands for every scope", () => {
    const two = new Authenticator([
      token('alice', 't1', ['sessions'], 1),
      token('alice', 't1', ['host_direct'], 2),
      token('alice', 't2', ['admin'], 3),
    ]);
    expect(scopesOf(scheduleCaller(owner(['admin']), two))).toEqual(['host_direct', 'sessions']);
    const admin = new Authenticator([token('alice', 't1', ['admin'], 1)]);
    expect(scopesOf(scheduleCaller(owner(['sessions', 'host_direct']), admin))).toEqual(['host_direct', 'sessions']);
    expect(scopesOf(scheduleCaller(owner(['admin']), admin))).toEqual(['admin', 'host_direct', 'sessions']);
  });

  it('no token of the owner in its tenant is TOKEN_REVOKED; tokens without "sessions" are SCOPE_REVOKED', () => {
    const elsewhere = new Authenticator([token('alice', 't2', ['sessions'], 1), token('bob', 't1', ['sessions'], 2)]);
    expect(scheduleCaller(owner(['sessions']), elsewhere)).toMatchObject({ refused: { code: 'TOKEN_REVOKED' } });
    const hostOnly = new Authenticator([token('alice', 't1', ['host_direct'], 1)]);
    expect(scheduleCaller(owner(['sessions', 'host_direct']), hostOnly)).toMatchObject({
      refused: { code: 'SCOPE_REVOKED' },
    });
  });

  it('a tokenless server grants its anonymous caller everything, and nobody else anything', () => {
    const anonymous = new Authenticator([]);
    expect(
      scopesOf(scheduleCaller({ principal: 'anonymous', tenantId: 'default', scopes: ['sessions'] }, anonymous)),
    ).toEqual(['sessions']);
    expect(scheduleCaller(owner(['sessions']), anonymous)).toMatchObject({ refused: { code: 'TOKEN_REVOKED' } });
  });
});
