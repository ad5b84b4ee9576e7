import { SESSION_OVERHEAD_BYTES } from '../../config/session-bytes-limit.js';
import type { TenantQuotas } from '../quotas/tenant-quotas.js';
import type { TenantSessionBytes } from '../quotas/tenant-session-bytes.js';
import { CodeError } from '../../errors.js';
import { tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import { hasScope, type Caller } from '../ports/caller.js';
import type { SessionOwnership } from '../ports/session-ownership.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import { ClosedSessions } from './closed-sessions.js';
import { takeLease } from './session-leases.js';
import { sessionOptionsBytes } from './session-options-bound.js';

/**
 * The sessions live on this node (and those recently closed here), by SessionKey (session ids are per
 * tenant): how a built session becomes live
 * (admission, limits.maxSessions, shutdown) or is discarded, who may see one, and child sessions' lives.
 */
export class LiveSessions {
  private readonly sessions = new Map<SessionKey, AgentSession>();
  /** Recently closed keys, so requests for them answer SESSION_CLOSED. */
  readonly closed = new ClosedSessions();
  private closing = false;

  constructor(
    private readonly ownership: SessionOwnership,
    /** The agent's limits (read at each admission). */
    private readonly limits: { readonly maxSessions: number },
    /** Per-tenant quotas: a session counts against its tenant's open sessions while it is live here. */
    private readonly quotas?: TenantQuotas,
    /** limits.maxSessionBytesPerTenant: a session's bytes count against its tenant while it is live here. */
    private readonly sessionBytes?: TenantSessionBytes,
  ) {}

  /** The live session of this key, if any. */
  get(key: SessionKey): AgentSession | undefined {
    return this.sessions.get(key);
  }

  /** True when a session of this key is live here. */
  has(key: SessionKey): boolean {
    return this.sessions.has(key);
  }

  /** Number of live sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /** The live sessions, in the order they went live. */
  values(): IterableIterator<AgentSession> {
    return this.sessions.values();
  }

  /** Drop a session without remembering it as closed (passivated, or taken over by another node). */
  delete(key: SessionKey): void {
    const session = this.sessions.get(key);
    if (session && this.sessions.delete(key)) {
      this.quotas?.releaseSession(tenantIdOf(key));
      this.sessionBytes?.release(key, session);
    }
  }

  /** Stop admitting new sessions and runs. */
  beginShutdown(): void {
    this.closing = true;
  }

  /** True while new work is admitted. */
  get admitting(): boolean {
    return !this.closing;
  }

  /** SHUTTING_DOWN once shutdown began. */
  assertAdmitting(): void {
    if (this.closing) throw new CodeError('SHUTTING_DOWN', 'the server is shutting down and admits no new sessions');
  }

  /**
   * SESSION_INITIALIZATION_ERROR when limits.maxSessions sessions are live; QUOTA_EXCEEDED when the tenant
   * (when named) is at its open-sessions or stored-bytes quota, or when a session of `optionsBytes` options
   * would take it past limits.maxSessionBytesPerTenant. Checked before a session is built; `register` checks
   * again with the built session's own measure, and counts it.
   */
  assertCapacity(tenantId?: string, optionsBytes = 0): void {
    if (this.sessions.size >= this.limits.maxSessions) {
      throw new CodeError(
        'SESSION_INITIALIZATION_ERROR',
        `limits.maxSessions (${this.limits.maxSessions}) live sessions reached`,
        { resource: 'limits.maxSessions' },
      );
    }
    if (tenantId === undefined) return;
    this.quotas?.assertSessionRoom(tenantId);
    this.sessionBytes?.assertRoom(tenantId, SESSION_OVERHEAD_BYTES + optionsBytes);
  }

  /**
   * Make a built session live, unless shutdown began while it was being built: then the caller gets
   * SHUTTING_DOWN and unlessFailing discards the session (stdio MCP servers included, which the drain
   * would otherwise miss).
   */
  async register(session: AgentSession): Promise<void> {
    // In a cluster: the tenant's counts on the other nodes, as of now (one Redis round trip).
    await this.quotas?.refresh(session.config.ownerTenantId);
    if (this.closing) {
      throw new CodeError(
        'SHUTTING_DOWN',
        `the server began shutting down while session ${session.id} was being opened`,
        { sessionId: session.id },
      );
    }
    if (this.sessions.get(session.key) === session) return;
    const tenantId = session.config.ownerTenantId;
    const bytes = this.sessionBytes;
    // Measured once (the options never change), only where the bound is on; the content after each run.
    const fixed = bytes ? SESSION_OVERHEAD_BYTES + sessionOptionsBytes(session.config.options) : 0;
    const content = bytes ? session.contentBytes() : 0;
    bytes?.assertRoom(tenantId, fixed + content);
    this.quotas?.admitSession(tenantId);
    await this.quotas?.confirmSession(tenantId);
    bytes?.hold(session.key, session, tenantId, fixed, content);
    this.closed.forget(session.key);
    this.sessions.set(session.key, session);
  }

  /** Drop a closed session and remember it as closed. */
  forget(session: AgentSession): void {
    if (this.sessions.get(session.key) === session) {
      this.sessions.delete(session.key);
      this.quotas?.releaseSession(session.config.ownerTenantId);
      this.sessionBytes?.release(session.key, session);
    }
    this.closed.remember(session.key);
  }

  /** True when the caller may see the session (its tenant's, or an admin). */
  visible(session: AgentSession, caller: Caller): boolean {
    return session.config.ownerTenantId === caller.tenantId || hasScope(caller, 'admin');
  }

  /** SESSION_NOT_FOUND when the caller may not see the session. */
  assertVisible(session: AgentSession, caller: Caller): void {
    if (!this.visible(session, caller))
      throw new CodeError('SESSION_NOT_FOUND', `session ${session.id} not found`, { sessionId: session.id });
  }

  /**
   * Finish opening a built session; when that fails the session is discarded (its MCP servers stopped,
   * nothing published) and its lease released before the error goes on.
   */
  async unlessFailing(session: AgentSession, finish: () => Promise<void>, undo?: () => Promise<void>): Promise<void> {
    try {
      await finish();
    } catch (error) {
      if (this.sessions.get(session.key) !== session) {
        await session.abandon();
        await undo?.();
        await this.ownership.release(session.key).catch(() => undefined);
      }
      throw error;
    }
  }

  /** Make a child session live: leased and registered like any session, within limits.maxSessions. */
  async openChild(session: AgentSession): Promise<void> {
    this.assertAdmitting();
    this.assertCapacity();
    await takeLease(this.ownership, session.key);
    await this.unlessFailing(session, () => this.register(session));
  }

  /** Close a child session (its task was dropped, or its parent closed) and drop it. */
  async closeChild(session: AgentSession): Promise<void> {
    await session.close('closed');
    if (this.sessions.get(session.key) === session) this.forget(session);
    await this.ownership.release(session.key).catch(() => undefined);
  }
}
