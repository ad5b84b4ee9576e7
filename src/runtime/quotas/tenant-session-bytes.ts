import type { CodeError } from '../../errors.js';
import type { SessionKey } from '../../stores/session-key.js';
import { quotaExceeded } from './quota-exceeded.js';

/** Retry-After of a refusal: room comes back as soon as the tenant closes a session (or one is passivated). */
export const SESSION_BYTES_RETRY_AFTER_SECONDS = 1;

/** One open session's count: its fixed part (options and overhead, measured once) and its content (re-measured after each run). */
interface HeldSession {
  readonly tenantId: string;
  /** The session object counted: a late update from a session already replaced under this key changes nothing. */
  readonly owner: object;
  readonly fixed: number;
  content: number;
}

/** One tenant's session bytes, as /metrics shows them. */
export interface TenantSessionBytesUsage {
  readonly tenantId: string;
  readonly bytes: number;
}

/**
 * The memory a tenant's open sessions hold on this node, bounded by limits.maxSessionBytesPerTenant. A session
 * counts from the moment it goes live (created, resumed, hydrated, a delegation child) until it leaves (closed,
 * passivated, taken over, discarded): its options' compact JSON bytes and a fixed overhead, plus its transcript
 * and artifact bytes as of the last run it finished. A session that would take the tenant past the limit is
 * QUOTA_EXCEEDED (429, Retry-After); runs are never refused for it.
 */
export class TenantSessionBytes {
  private readonly held = new Map<SessionKey, HeldSession>();
  private readonly tenants = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** The bytes the tenant's open sessions hold now. */
  used(tenantId: string): number {
    return this.tenants.get(tenantId) ?? 0;
  }

  /** QUOTA_EXCEEDED when a session of `bytes` more would take the tenant past the limit. */
  assertRoom(tenantId: string, bytes: number): void {
    const used = this.used(tenantId);
    if (used + bytes > this.limit) throw this.exceeded(tenantId, used, bytes);
  }

  /** Count a session going live (the room was checked with assertRoom); counting it again replaces its earlier count. */
  hold(key: SessionKey, owner: object, tenantId: string, fixed: number, content: number): void {
    this.release(key);
    this.held.set(key, { tenantId, owner, fixed, content });
    this.add(tenantId, fixed + content);
  }

  /** A counted session's content bytes changed (a run ended); nothing when `owner` is not the counted session. */
  resize(key: SessionKey, owner: object, content: number): void {
    const entry = this.held.get(key);
    if (!entry || entry.owner !== owner) return;
    this.add(entry.tenantId, content - entry.content);
    entry.content = content;
  }

  /** The session left this node: its bytes are free again (only `owner`'s count, when given). */
  release(key: SessionKey, owner?: object): void {
    const entry = this.held.get(key);
    if (!entry || (owner !== undefined && entry.owner !== owner)) return;
    this.held.delete(key);
    this.add(entry.tenantId, -(entry.fixed + entry.content));
  }

  /** Every tenant holding sessions, with their bytes (for /metrics). */
  snapshot(): TenantSessionBytesUsage[] {
    return [...this.tenants].map(([tenantId, bytes]) => ({ tenantId, bytes }));
  }

  private add(tenantId: string, delta: number): void {
    const next = this.used(tenantId) + delta;
    if (next > 0) this.tenants.set(tenantId, next);
    else this.tenants.delete(tenantId);
  }

  private exceeded(tenantId: string, used: number, requested: number): CodeError {
    return quotaExceeded({
      tenantId,
      quota: 'maxSessionBytesPerTenant',
      limit: this.limit,
      used,
      configKey: `limits.max_session_bytes_per_tenant; this session needs ${requested} bytes more: close a session of the tenant`,
      retryAfterSeconds: SESSION_BYTES_RETRY_AFTER_SECONDS,
      extra: { requested },
    });
  }
}
