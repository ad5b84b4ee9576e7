import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiToken, Scope } from '../config/api-token.js';
import { CodeError } from '../errors.js';
import type { Caller } from '../runtime/ports/caller.js';

const ALL_SCOPES: ReadonlySet<Scope> = new Set<Scope>(['sessions', 'host_direct', 'admin']);

interface TokenEntry {
  digest: Buffer;
  caller: Caller;
}

/** True for loopback bind addresses (anonymous access is allowed only there). */
export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || host.startsWith('127.');
}

/**
 * Maps bearer tokens to callers. Tokens are compared by SHA-256 digest in constant time. With no
 * tokens configured, every request is the anonymous caller (the server only allows that on loopback).
 */
export class Authenticator {
  private readonly entries: TokenEntry[];

  constructor(tokens: readonly ApiToken[]) {
    this.entries = tokens.map((t) => ({
      digest: Buffer.from(t.tokenSha256 ?? sha256(t.token ?? ''), 'hex'),
      caller: { principal: t.principal, tenantId: t.tenantId, scopes: new Set(t.scopes) },
    }));
  }

  /** True when no tokens are configured. */
  get anonymous(): boolean {
    return this.entries.length === 0;
  }

  /** The caller for an Authorization header value; UNAUTHORIZED when missing or unknown. */
  fromHeader(header: string | undefined): Caller {
    if (this.anonymous) return anonymousCaller();
    if (!header) throw new CodeError('UNAUTHORIZED', 'missing Authorization: Bearer <token> header');
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new CodeError('UNAUTHORIZED', 'Authorization header must be "Bearer <token>"');
    return this.fromToken(match[1]);
  }

  /**
   * The scopes the configured tokens of a principal in a tenant grant together now (undefined: none is configured);
   * a schedule's ticks run with these and what its creation stored. Without tokens: the anonymous caller's.
   */
  grantsOf(principal: string, tenantId: string): ReadonlySet<Scope> | undefined {
    if (this.anonymous) {
      const anonymous = anonymousCaller();
      return principal === anonymous.principal && tenantId === anonymous.tenantId ? anonymous.scopes : undefined;
    }
    const scopes = new Set<Scope>();
    let found = false;
    for (const { caller } of this.entries) {
      if (caller.principal !== principal || caller.tenantId !== tenantId) continue;
      found = true;
      for (const scope of caller.scopes) scopes.add(scope);
    }
    return found ? scopes : undefined;
  }

  /** The caller for a raw token; UNAUTHORIZED when unknown. */
  fromToken(token: string): Caller {
    if (this.anonymous) return anonymousCaller();
    const digest = Buffer.from(sha256(token), 'hex');
    for (const entry of this.entries) if (timingSafeEqual(entry.digest, digest)) return entry.caller;
    throw new CodeError('UNAUTHORIZED', 'invalid bearer token');
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The caller of an unauthenticated loopback-only server: every scope, tenant "default". */
export function anonymousCaller(): Caller {
  return { principal: 'anonymous', tenantId: 'default', scopes: ALL_SCOPES };
}
