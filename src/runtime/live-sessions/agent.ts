import { purgeStoredSession } from '../retention/purge-stored-session.js';
import { removeSandboxHome } from '../sandbox/remove-sandbox-home.js';
import { CodeError } from '../../errors.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import { KeyedLock } from '../../stores/keyed-lock.js';
import { sessionIdOf, sessionKey, tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import { hasScope, type Caller } from '../ports/caller.js';
import type { SessionQueue } from '../queue/session-queue.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { RunHandle } from '../session-kernel/run-handle.js';
import type { SessionServices } from '../session-kernel/session-services.js';
import { AgentChildSpawner } from './agent-child-spawner.js';
import { LiveSessions } from './live-sessions.js';
import { attachInheritedMcp } from './session-mcp-layers.js';
import { labelOptions, SessionFactory } from './session-factory.js';
import { SessionHydration } from './session-hydration.js';
import { assertOwnIdentity } from './session-identity.js';
import { assertSessionOptionsBound } from './session-options-bound.js';
import { releasingLeaseOnFailure, takeLease } from './session-leases.js';
import { SessionPassivation } from './session-passivation.js';

/**
 * The agent: global configuration and the registry of live sessions. Session ids are per tenant: an id
 * is looked up in the caller's tenant (an admin's addressed tenant, see addressedCaller), so another
 * tenant's session of the same id is simply another session, and one of another tenant is never found.
 */
export class Agent {
  /** The live sessions (and those recently closed here). */
  private readonly sessions: LiveSessions;
  /** Opening a session (create, resume, hydrate) is one at a time per key: no session is ever built twice. */
  private readonly opening = new KeyedLock();
  private readonly factory: SessionFactory;
  private readonly hydration: SessionHydration;
  private readonly passivation: SessionPassivation;
  private mcpVersion = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(readonly deps: SessionServices) {
    const sessions = new LiveSessions(deps.ownership, deps.config.limits, deps.quotas, deps.sessionBytes);
    this.sessions = sessions;
    const children = new AgentChildSpawner({
      resolveModel: (modelId, field, temperature) => this.factory.resolveModel(modelId, field, temperature),
      create: (config, hostEnv, link) => this.factory.createChild(config, hostEnv, link),
      open: (session) => sessions.openChild(session),
      close: (session) => sessions.closeChild(session),
    });
    this.factory = new SessionFactory(deps, () => this.mcpVersion, children);
    this.hydration = new SessionHydration({ deps, live: sessions, opening: this.opening, factory: this.factory, resumeRun: (key, runId, caller) => this.resumeRunOf(key, runId, caller) });
    this.passivation = new SessionPassivation(deps, sessions, this.opening);
    deps.ownership.onLost((key) => void this.abandon(key));
    deps.mcp.onChange(() => {
      this.mcpVersion += 1;
    });
    const idleSessionMs = deps.config.sessionIdleTimeoutMs;
    if (idleSessionMs !== undefined) this.passivation.startReaper(idleSessionMs);
    const idle = deps.config.mcpIdleDisconnect;
    if (idle) {
      this.idleTimer = setInterval(() => void this.disconnectIdleMcp(idle.thresholdMs).catch(() => undefined), idle.intervalMs);
      this.idleTimer.unref();
    }
  }

  /** The agent-global MCP layer. */
  get mcp(): McpManager {
    return this.deps.mcp;
  }

  /** Re-list the tools of every global MCP server (agent.refreshMcpTools). */
  refreshMcpTools() {
    return this.deps.mcp.refresh();
  }

  /** Disconnect MCP servers (global and every live session's) idle longer than the threshold; their configuration stays. */
  async disconnectIdleMcp(thresholdMs: number): Promise<string[]> {
    const names = await this.deps.mcp.disconnectIdle(thresholdMs);
    for (const session of this.sessions.values()) {
      for (const layer of session.mcp.layers().slice(1)) names.push(...(await layer.disconnectIdle(thresholdMs)).map((n) => `${session.id}/${n}`));
    }
    return names;
  }

  /** Number of live sessions. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** The lane queues of the live sessions that have one (read by /metrics when scraped). */
  *queues(): IterableIterator<SessionQueue> {
    for (const session of this.sessions.values()) if (session.queue) yield session.queue;
  }

  /**
   * Create a session from SessionOptions (or resume a stored one with `resume: true`). `field` names where the
   * options came from in errors about them as a whole (`body` of POST /v1/sessions, `params` of ACP session/new).
   */
  async createSession(options: SessionOptions, caller: Caller, field = 'body'): Promise<{ session: AgentSession; resumed: boolean }> {
    this.sessions.assertAdmitting();
    // Before anything is looked up: options over their byte bound, or naming another tenant or principal, are refused
    // whether or not the session exists.
    const optionsBytes = assertSessionOptionsBound(options, this.deps.config.limits.maxSessionOptionsBytes, field);
    assertOwnIdentity(options, caller);
    if (options.resume && options.sessionId === undefined) {
      throw new CodeError('SESSION_CONFIGURATION_ERROR', 'sessionId: resume: true needs the sessionId of the session to resume', { field: 'sessionId' });
    }
    const requestedId = options.sessionId;
    if (requestedId === undefined) return this.openSession(options, caller, undefined, optionsBytes);
    // The session is the caller's tenant's (or, for an admin, the tenant its options name: assertOwnIdentity).
    const key = sessionKey(options.tenantId ?? caller.tenantId, requestedId);
    return this.opening.run(key, () => this.openSession(options, caller, key, optionsBytes));
  }

  private async openSession(options: SessionOptions, caller: Caller, key: SessionKey | undefined, optionsBytes: number): Promise<{ session: AgentSession; resumed: boolean }> {
    const requestedId = options.sessionId;
    if (options.resume && key !== undefined) {
      const live = this.sessions.get(key);
      if (live) {
        this.sessions.assertVisible(live, caller);
        return { session: live, resumed: true };
      }
    }
    this.sessions.assertCapacity(options.tenantId ?? caller.tenantId, optionsBytes);
    // Only the caller's own tenant is searched: another tenant's session of this id is never an obstacle (nor revealed).
    if (key !== undefined && this.sessions.has(key)) throw new CodeError('SESSION_EXISTS', `session ${requestedId} already exists`, { sessionId: requestedId });
    let snapshot: SessionSnapshotV1 | undefined;
    if (key !== undefined) snapshot = await this.factory.loadStored(key);
    if (options.resume) {
      if (!snapshot || (snapshot.session.ownerTenantId !== caller.tenantId && !hasScope(caller, 'admin'))) {
        throw new CodeError('SESSION_NOT_FOUND', `session ${requestedId} not found`, { sessionId: requestedId });
      }
      const session = await this.hydration.restore(snapshot, caller, false, labelOptions(options));
      // Reopening a closed session is stored at once: the store is what other nodes (and restarts) go by.
      if (snapshot.session.closed) await session.persistence.save().catch((error: unknown) => this.deps.logger.persistenceFailed(session.id, error));
      return { session, resumed: true };
    }
    if (snapshot) throw new CodeError('SESSION_EXISTS', `session ${requestedId} already exists in the store; pass resume: true to resume it`, { sessionId: requestedId });
    const { config, hostEnv } = await this.factory.resolve(options, caller);
    const newKey = sessionKey(config.ownerTenantId, config.sessionId);
    // A generated id is new by construction; a requested one was checked above, under this key's lock.
    if (key === undefined && this.sessions.has(newKey)) throw new CodeError('SESSION_EXISTS', `session ${config.sessionId} already exists`, { sessionId: config.sessionId });
    await takeLease(this.deps.ownership, newKey);
    const session = await releasingLeaseOnFailure(this.deps.ownership, newKey, async () => this.factory.create(config, hostEnv));
    let stored = false;
    await this.sessions.unlessFailing(
      session,
      async () => {
        if (options.mcpServers?.length) await attachInheritedMcp(session, options.mcpServers, caller, this.deps);
        this.sessions.assertAdmitting();
        // An autoSave session is stored from the start, so its runs can be resumed even if this process dies mid-run.
        if (config.autoSave) {
          await session.persistence.save();
          stored = true;
        } else await this.deps.ownership.recordHome(newKey); // Other nodes learn where it lives (and when it is lost).

        await this.sessions.register(session);
      },
      // A session that never opened leaves nothing in the store to come back on the next hydration.
      async () => {
        if (stored) await this.factory.storesFor(config.sessionStore).store.delete(session.key).catch((error: unknown) => this.deps.logger.persistenceFailed(session.id, error));
      },
    );
    session.governance.notifyStart();
    return { session, resumed: false };
  }

  /**
   * Resume a run from its loop checkpoint: hydrate the session from the store when it is not live here,
   * then start a new run (new id; the old run is named in its metadata) from the checkpoint's transcript
   * and counters. SESSION_STORE_REQUIRED without a durable checkpoint store; CHECKPOINT_NOT_FOUND when the
   * run has no checkpoint (it finished, never completed a tool round, or was lost).
   */
  async resumeRun(sessionId: string, runId: string, caller: Caller, idempotencyKey?: string): Promise<{ session: AgentSession; handle: RunHandle }> {
    return this.resumeRunOf(sessionKey(caller.tenantId, sessionId), runId, caller, idempotencyKey);
  }

  private async resumeRunOf(key: SessionKey, runId: string, caller: Caller, idempotencyKey?: string): Promise<{ session: AgentSession; handle: RunHandle }> {
    this.sessions.assertAdmitting();
    const sessionId = sessionIdOf(key);
    if (this.deps.checkpoints.kind === 'memory') {
      throw new CodeError('SESSION_STORE_REQUIRED', 'resume_run requires a session_store: this server keeps checkpoints in memory (use storage_backend "file" on one node, REDIS_URL across nodes)', { storageBackend: this.deps.config.storageBackend });
    }
    let session = this.sessions.get(key);
    if (session) this.sessions.assertVisible(session, caller);
    else {
      // A closed session stays closed: only POST /v1/sessions with resume: true reopens it.
      this.sessions.closed.assertNotClosed(key, caller);
      const tenantId = tenantIdOf(key);
      session = (await this.createSession({ sessionId, resume: true, ...(tenantId === caller.tenantId ? {} : { tenantId }) }, caller)).session;
    }
    // A retried resume answers with the run the first one started, even after that run consumed the checkpoint.
    const earlier = idempotencyKey !== undefined ? session.runs.forIdempotencyKey(idempotencyKey) : undefined;
    if (earlier) return { session, handle: earlier };
    if (session.config.sessionStore === 'memory') {
      throw new CodeError('SESSION_STORE_REQUIRED', 'resume_run requires a session_store: this session was created with sessionStore {type: "memory"}, so its checkpoints live in this process only', { sessionStore: 'memory' });
    }
    if (session.runs.activeRunId === runId) throw new CodeError('SESSION_BUSY', `run ${runId} is still running on this node`, { activeRunId: runId });
    const checkpoint = await this.deps.checkpoints.load(session.key, runId);
    if (!checkpoint || checkpoint.session_id !== session.id) {
      throw new CodeError('CHECKPOINT_NOT_FOUND', `no loop checkpoint found for run '${runId}' (session ${sessionId}): the run finished, never completed a tool round, or was lost`, { runId });
    }
    return { session, handle: session.runs.start({ input: checkpoint.input, resumeFrom: checkpoint, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) }) };
  }

  /** The caller's tenant's live session of this id; SESSION_NOT_FOUND otherwise, SESSION_CLOSED when closed. */
  getSession(id: string, caller: Caller): AgentSession {
    const key = sessionKey(caller.tenantId, id);
    const session = this.sessions.get(key);
    if (!session) {
      this.sessions.closed.assertNotClosed(key, caller);
      throw new CodeError('SESSION_NOT_FOUND', `session ${id} not found`, { sessionId: id });
    }
    this.sessions.assertVisible(session, caller);
    session.touch();
    return session;
  }

  /**
   * Live sessions the caller lists: its tenant's; an admin's, every tenant's unless `tenantId` names one
   * (a non-admin naming another tenant gets FORBIDDEN from addressedCaller before this).
   */
  listSessions(caller: Caller, tenantId?: string): AgentSession[] {
    const admin = hasScope(caller, 'admin');
    const tenant = tenantId ?? (admin ? undefined : caller.tenantId);
    return [...this.sessions.values()].filter((s) => (tenant === undefined || s.config.ownerTenantId === tenant) && this.sessions.visible(s, caller));
  }

  /** True when the session of this key is live on this node. */
  isLive(key: SessionKey): boolean {
    return this.sessions.has(key);
  }

  /**
   * DELETE /v1/sessions/:id?purge=true: close the caller's tenant's session of this id if it is open, then
   * delete what is stored of it at once (snapshot, its runs' checkpoints; artifacts are in the snapshot).
   * SESSION_NOT_FOUND when the tenant has no such session, open, closed or stored.
   */
  async purgeSession(id: string, caller: Caller): Promise<{ closed: boolean; purged: boolean }> {
    const key = sessionKey(caller.tenantId, id);
    return this.opening.run(key, async () => {
      const closed = this.sessions.has(key) ? await this.closeLive(key, id, caller) : false;
      const purged = await purgeStoredSession({ ...this.factory.storesFor('file'), ownership: this.deps.ownership }, key);
      if (!closed && !purged && !this.sessions.closed.visibleTo(key, caller)) throw new CodeError('SESSION_NOT_FOUND', `session ${id} not found`, { sessionId: id });
      this.deps.quotas?.recordStored(tenantIdOf(key), id, 0);
      // A stored session that was not live here still has its commands' $HOME: it goes with the session.
      await removeSandboxHome(this.deps.sandbox, this.deps.quotas, key);
      return { closed, purged };
    });
  }

  /** Close the caller's tenant's session of this id: true when it was open, false when it was already closed (idempotent). */
  async closeSession(id: string, caller: Caller): Promise<boolean> {
    const key = sessionKey(caller.tenantId, id);
    // Under the session's opening lock: a resume: true arriving meanwhile waits and then reopens it.
    return this.opening.run(key, () => this.closeLive(key, id, caller));
  }

  private async closeLive(key: SessionKey, id: string, caller: Caller): Promise<boolean> {
    const session = this.sessions.get(key);
    if (!session) {
      if (this.sessions.closed.visibleTo(key, caller)) return false;
      throw new CodeError('SESSION_NOT_FOUND', `session ${id} not found`, { sessionId: id });
    }
    this.sessions.assertVisible(session, caller);
    await session.close('closed');
    if (session.config.sessionStore === 'memory') {
      // A memory session closed by its client is discarded: nothing of it stays in the process.
      await this.factory.storesFor('memory').store.delete(session.key);
    } else if (session.persistence.saved) {
      // A stored session is marked closed, so it is not hydrated again implicitly (resume: true reopens it).
      await session.persistence.save().catch((error: unknown) => this.deps.logger.persistenceFailed(session.id, error));
    }
    this.sessions.forget(session);
    await this.deps.ownership.release(session.key);
    return true;
  }

  /** Stop admitting new sessions and runs. */
  beginShutdown(): void {
    this.sessions.beginShutdown();
  }

  /** True while the agent admits new work. */
  get admitting(): boolean {
    return this.sessions.admitting;
  }

  /** Drain and close: every session stops its run (checkpoint kept) and, when stored and changed, is saved; then leases, MCP, stores. */
  async close(): Promise<void> {
    this.sessions.beginShutdown();
    // Openings in progress end first: each either registers (and is drained below) or, refused with
    // SHUTTING_DOWN, discards its session and MCP servers.
    await this.opening.drain();
    // Drain: stop each session's run (keeping its checkpoint), save one final generation, then release leases.
    await Promise.all([...this.sessions.values()].map(async (s) => {
      await s.close('shutdown');
      // Only sessions the store should hold (autoSave, or saved before) and that changed since: bounded work.
      if ((s.config.autoSave || s.persistence.saved) && s.persistence.dirty) await s.persistence.save().catch((error: unknown) => this.deps.logger.persistenceFailed(s.id, error));
      this.sessions.forget(s);
    }));
    clearInterval(this.idleTimer);
    this.passivation.stopReaper();
    // Each part is closed even when an earlier one fails (Redis unreachable, say); the first failure is reported at the end.
    const failures: unknown[] = [];
    for (const part of [this.deps.ownership, this.deps.mcp, this.deps.store, this.deps.checkpoints]) {
      await part.close().catch((error: unknown) => failures.push(error));
    }
    if (failures.length > 0) throw failures[0];
  }

  /**
   * Make a stored session live on this node before a request uses it: sessions passivated here or owned by
   * a node that died are hydrated from the store (taking the lease); a session another live node owns
   * answers 421 with the owner's address, or SESSION_BUSY for a run request while it runs there. A run
   * left in flight by a dead owner is marked failed (NODE_LOST) and, with autoResume, resumed.
   */
  async ensureLocal(sessionId: string, caller: Caller, startsRun: boolean): Promise<void> {
    await this.hydration.ensureLocal(sessionKey(caller.tenantId, sessionId), caller, startsRun);
  }

  /**
   * Passivate a session: wait for its active run until the deadline (then stop it, keeping its checkpoint),
   * save it, release its lease and drop it from memory. The next request hydrates it again, on any node.
   */
  async passivate(key: SessionKey, deadlineMs: number): Promise<void> {
    await this.passivation.passivate(key, deadlineMs);
  }

  /** Passivate every session idle (no active run, no request) longer than `idleMs`; returns their keys. */
  async reapIdleSessions(idleMs: number): Promise<SessionKey[]> {
    return this.passivation.reapIdleSessions(idleMs);
  }

  /** Drop a session whose lease another node took: nothing more is saved or published from here. */
  async abandon(key: SessionKey): Promise<void> {
    const session = this.sessions.get(key);
    if (!session) return;
    this.sessions.delete(key);
    await session.abandon();
  }
}
