import { CodeError } from '../../errors.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import { KeyedLock } from '../../stores/keyed-lock.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import { hasScope, type Caller } from '../ports/caller.js';
import type { AgentSession } from '../session/agent-session.js';
import type { RunHandle } from '../session/run-handle.js';
import type { AgentDeps } from './agent-deps.js';
import { ClosedSessions } from './closed-sessions.js';
import { attachInheritedMcp, reattachMcp } from './session-mcp-layers.js';
import { labelOptions, SessionFactory } from './session-factory.js';
import { AgentChildSpawner } from './agent-child-spawner.js';

/**
 * The agent: global configuration and the registry of live sessions. Sessions are looked up per
 * tenant; another tenant's session is reported as not found.
 */
export class Agent {
  private readonly sessions = new Map<string, AgentSession>();
  /** Opening a session (create, resume, hydrate) is one at a time per id: no id is ever built twice. */
  private readonly opening = new KeyedLock();
  private readonly closed = new ClosedSessions();
  private readonly factory: SessionFactory;
  private closing = false;
  private mcpVersion = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private reaperTimer: NodeJS.Timeout | undefined;

  constructor(readonly deps: AgentDeps) {
    const children = new AgentChildSpawner({
      resolveModel: (modelId, field, temperature) => this.factory.resolveModel(modelId, field, temperature),
      create: (config, hostEnv, link) => this.factory.createChild(config, hostEnv, link),
      open: (session) => this.openChild(session),
      close: (session) => this.closeChild(session),
    });
    this.factory = new SessionFactory(deps, () => this.mcpVersion, children);
    deps.ownership.onLost((sessionId) => void this.abandon(sessionId));
    deps.mcp.onChange(() => {
      this.mcpVersion += 1;
    });
    const idleSessionMs = deps.config.sessionIdleTimeoutMs;
    if (idleSessionMs !== undefined) {
      this.reaperTimer = setInterval(() => void this.reapIdleSessions(idleSessionMs), Math.min(Math.max(idleSessionMs / 2, 500), 30_000));
      this.reaperTimer.unref();
    }
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
      for (const layer of session.mcpLayers().slice(1)) names.push(...(await layer.disconnectIdle(thresholdMs)).map((n) => `${session.id}/${n}`));
    }
    return names;
  }

  /** Number of live sessions. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Create a session from SessionOptions (or resume a stored one with `resume: true`). */
  async createSession(options: SessionOptions, caller: Caller): Promise<{ session: AgentSession; resumed: boolean }> {
    this.assertAdmitting();
    if (options.resume && options.sessionId === undefined) {
      throw new CodeError('SESSION_CONFIGURATION_ERROR', 'sessionId: resume: true needs the sessionId of the session to resume', { field: 'sessionId' });
    }
    const requestedId = options.sessionId;
    return requestedId === undefined ? this.openSession(options, caller) : this.opening.run(requestedId, () => this.openSession(options, caller));
  }

  private async openSession(options: SessionOptions, caller: Caller): Promise<{ session: AgentSession; resumed: boolean }> {
    const requestedId = options.sessionId;
    if (options.resume && requestedId !== undefined) {
      const live = this.sessions.get(requestedId);
      if (live) {
        this.assertVisible(live, caller);
        return { session: live, resumed: true };
      }
    }
    if (this.sessions.size >= this.deps.config.limits.maxSessions) {
      throw new CodeError('SESSION_INITIALIZATION_ERROR', `limits.maxSessions (${this.deps.config.limits.maxSessions}) live sessions reached`, { resource: 'limits.maxSessions' });
    }
    if (requestedId !== undefined && this.sessions.has(requestedId)) throw new CodeError('SESSION_EXISTS', `session ${requestedId} already exists`, { sessionId: requestedId });
    let snapshot: SessionSnapshotV1 | undefined;
    if (requestedId !== undefined) snapshot = await this.factory.loadStored(requestedId);
    if (options.resume) {
      if (!snapshot || (snapshot.session.ownerTenantId !== caller.tenantId && !hasScope(caller, 'admin'))) {
        throw new CodeError('SESSION_NOT_FOUND', `session ${requestedId} not found`, { sessionId: requestedId });
      }
      const session = await this.restore(snapshot, caller, false, labelOptions(options));
      // Reopening a closed session is stored at once: the store is what other nodes (and restarts) go by.
      if (snapshot.session.closed) await session.save().catch((error: unknown) => this.deps.onPersistenceError?.(session.id, error));
      return { session, resumed: true };
    }
    if (snapshot) throw new CodeError('SESSION_EXISTS', `session ${requestedId} already exists in the store; pass resume: true to resume it`, { sessionId: requestedId });
    const { config, hostEnv } = await this.factory.resolve(options, caller);
    await this.takeLease(config.sessionId);
    const session = await this.releasingLeaseOnFailure(config.sessionId, async () => this.factory.create(config, hostEnv));
    let stored = false;
    await this.unlessFailing(
      session,
      async () => {
        if (options.mcpServers?.length) await attachInheritedMcp(session, options.mcpServers, caller, this.deps);
        this.assertAdmitting();
        // An autoSave session is stored from the start, so its runs can be resumed even if this process dies mid-run.
        if (config.autoSave) {
          await session.save();
          stored = true;
        }
        await this.register(session);
      },
      // A session that never opened leaves nothing in the store to come back on the next hydration.
      async () => {
        if (stored) await this.factory.storesFor(config.sessionStore).store.delete(session.id).catch((error: unknown) => this.deps.onPersistenceError?.(session.id, error));
      },
    );
    session.notifyStart();
    return { session, resumed: false };
  }

  /**
   * Finish opening a built session; when that fails the session is discarded (its MCP servers stopped,
   * nothing published) and its lease released before the error goes on.
   */
  private async unlessFailing(session: AgentSession, finish: () => Promise<void>, undo?: () => Promise<void>): Promise<void> {
    try {
      await finish();
    } catch (error) {
      if (this.sessions.get(session.id) !== session) {
        await session.abandon();
        await undo?.();
        await this.deps.ownership.release(session.id).catch(() => undefined);
      }
      throw error;
    }
  }

  /**
   * Resume a run from its loop checkpoint: hydrate the session from the store when it is not live here,
   * then start a new run (new id; the old run is named in its metadata) from the checkpoint's transcript
   * and counters. SESSION_STORE_REQUIRED without a durable checkpoint store; CHECKPOINT_NOT_FOUND when the
   * run has no checkpoint (it finished, never completed a tool round, or was lost).
   */
  async resumeRun(sessionId: string, runId: string, caller: Caller, idempotencyKey?: string): Promise<{ session: AgentSession; handle: RunHandle }> {
    this.assertAdmitting();
    if (this.deps.checkpoints.kind === 'memory') {
      throw new CodeError('SESSION_STORE_REQUIRED', 'resume_run requires a session_store: this server keeps checkpoints in memory (use storage_backend "file" on one node, REDIS_URL across nodes)', { storageBackend: this.deps.config.storageBackend });
    }
    let session = this.sessions.get(sessionId);
    if (session) this.assertVisible(session, caller);
    else {
      // A closed session stays closed: only POST /v1/sessions with resume: true reopens it.
      this.closed.assertNotClosed(sessionId, caller);
      session = (await this.createSession({ sessionId, resume: true }, caller)).session;
    }
    // A retried resume answers with the run the first one started, even after that run consumed the checkpoint.
    const earlier = idempotencyKey !== undefined ? session.runForIdempotencyKey(idempotencyKey) : undefined;
    if (earlier) return { session, handle: earlier };
    if (session.config.sessionStore === 'memory') {
      throw new CodeError('SESSION_STORE_REQUIRED', 'resume_run requires a session_store: this session was created with sessionStore {type: "memory"}, so its checkpoints live in this process only', { sessionStore: 'memory' });
    }
    if (session.activeRunId === runId) throw new CodeError('SESSION_BUSY', `run ${runId} is still running on this node`, { activeRunId: runId });
    const checkpoint = await this.deps.checkpoints.load(runId);
    if (!checkpoint || checkpoint.session_id !== session.id) {
      throw new CodeError('CHECKPOINT_NOT_FOUND', `no loop checkpoint found for run '${runId}' (session ${sessionId}): the run finished, never completed a tool round, or was lost`, { runId });
    }
    return { session, handle: session.startRun({ input: checkpoint.input, resumeFrom: checkpoint, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) }) };
  }

  /** A live session visible to the caller; SESSION_NOT_FOUND otherwise, SESSION_CLOSED when closed. */
  getSession(id: string, caller: Caller): AgentSession {
    const session = this.sessions.get(id);
    if (!session) {
      this.closed.assertNotClosed(id, caller);
      throw new CodeError('SESSION_NOT_FOUND', `session ${id} not found`, { sessionId: id });
    }
    this.assertVisible(session, caller);
    session.touch();
    return session;
  }

  /** Live sessions visible to the caller. */
  listSessions(caller: Caller): AgentSession[] {
    return [...this.sessions.values()].filter((s) => this.visible(s, caller));
  }

  /** Close a session: true when it was open, false when it was already closed (idempotent). */
  async closeSession(id: string, caller: Caller): Promise<boolean> {
    // Under the session's opening lock: a resume: true arriving meanwhile waits and then reopens it.
    return this.opening.run(id, () => this.closeLive(id, caller));
  }

  private async closeLive(id: string, caller: Caller): Promise<boolean> {
    const session = this.sessions.get(id);
    if (!session) {
      if (this.closed.visibleTo(id, caller)) return false;
      throw new CodeError('SESSION_NOT_FOUND', `session ${id} not found`, { sessionId: id });
    }
    this.assertVisible(session, caller);
    await session.close('closed');
    if (session.config.sessionStore === 'memory') {
      // A memory session closed by its client is discarded: nothing of it stays in the process.
      await this.factory.storesFor('memory').store.delete(session.id);
    } else if (session.saved) {
      // A stored session is marked closed, so it is not hydrated again implicitly (resume: true reopens it).
      await session.save().catch((error: unknown) => this.deps.onPersistenceError?.(session.id, error));
    }
    this.forget(session);
    await this.deps.ownership.release(session.id);
    return true;
  }

  /** Make a child session live: leased and registered like any session, within limits.maxSessions. */
  private async openChild(session: AgentSession): Promise<void> {
    this.assertAdmitting();
    if (this.sessions.size >= this.deps.config.limits.maxSessions) {
      throw new CodeError('SESSION_INITIALIZATION_ERROR', `limits.maxSessions (${this.deps.config.limits.maxSessions}) live sessions reached`, { resource: 'limits.maxSessions' });
    }
    await this.takeLease(session.id);
    await this.unlessFailing(session, () => this.register(session));
  }

  /** Close a child session (its task was dropped, or its parent closed) and drop it. */
  private async closeChild(session: AgentSession): Promise<void> {
    await session.close('closed');
    if (this.sessions.get(session.id) === session) this.forget(session);
    await this.deps.ownership.release(session.id).catch(() => undefined);
  }

  /** Stop admitting new sessions and runs. */
  beginShutdown(): void {
    this.closing = true;
  }

  /** True while the agent admits new work. */
  get admitting(): boolean {
    return !this.closing;
  }

  /** Drain and close: every session stops its run (checkpoint kept) and, when stored and changed, is saved; then leases, MCP, stores. */
  async close(): Promise<void> {
    this.closing = true;
    // Openings in progress end first: each either registers (and is drained below) or, refused with
    // SHUTTING_DOWN, discards its session and MCP servers.
    await this.opening.drain();
    // Drain: stop each session's run (keeping its checkpoint), save one final generation, then release leases.
    await Promise.all([...this.sessions.values()].map(async (s) => {
      await s.close('shutdown');
      // Only sessions the store should hold (autoSave, or saved before) and that changed since: bounded work.
      if ((s.config.autoSave || s.saved) && s.dirty) await s.save().catch((error: unknown) => this.deps.onPersistenceError?.(s.id, error));
      this.forget(s);
    }));
    clearInterval(this.idleTimer);
    clearInterval(this.reaperTimer);
    // Each part is closed even when an earlier one fails (Redis unreachable, say); the first failure is reported at the end.
    const failures: unknown[] = [];
    for (const part of [this.deps.ownership, this.deps.mcp, this.deps.store, this.deps.checkpoints]) {
      await part.close().catch((error: unknown) => failures.push(error));
    }
    if (failures.length > 0) throw failures[0];
  }

  /** Run `build`; when it fails, release the session's lease (taken for it) before the error goes on. */
  private async releasingLeaseOnFailure<T>(sessionId: string, build: () => Promise<T>): Promise<T> {
    try {
      return await build();
    } catch (error) {
      await this.deps.ownership.release(sessionId).catch(() => undefined);
      throw error;
    }
  }

  /** Take the session's lease; SESSION_OWNED_ELSEWHERE (421, with the owner's URL) when another live node holds it. */
  private async takeLease(sessionId: string): Promise<void> {
    const result = await this.deps.ownership.acquire(sessionId);
    if (!result.ok) {
      throw new CodeError('SESSION_OWNED_ELSEWHERE', `session ${sessionId} is owned by node ${result.ownerNodeId}${result.ownerUrl ? ` at ${result.ownerUrl}` : ''}; send the request there`, { sessionId, ownerNodeId: result.ownerNodeId, ownerUrl: result.ownerUrl ?? null });
    }
  }

  /**
   * Make a stored session live on this node before a request uses it: sessions passivated here or owned by
   * a node that died are hydrated from the store (taking the lease); a session another live node owns
   * answers 421 with the owner's address, or SESSION_BUSY for a run request while it runs there. A run
   * left in flight by a dead owner is marked failed (NODE_LOST) and, with autoResume, resumed.
   */
  async ensureLocal(sessionId: string, caller: Caller, startsRun: boolean): Promise<void> {
    if (this.sessions.has(sessionId) || !this.admitting) return;
    // On one node a closed session stays closed until resume: true reopens it here; in a cluster another
    // node may have reopened it, so the store decides.
    if (this.closed.has(sessionId) && !this.deps.ownership.clustered) return;
    await this.opening.run(sessionId, () => this.hydrate(sessionId, caller, startsRun));
  }

  private async hydrate(sessionId: string, caller: Caller, startsRun: boolean): Promise<void> {
    // Another request may have opened it while this one waited its turn.
    if (this.sessions.has(sessionId)) return;
    const snapshot = await this.factory.loadStored(sessionId);
    if (!snapshot || (snapshot.session.ownerTenantId !== caller.tenantId && !hasScope(caller, 'admin'))) return;
    // Remembered like a session closed here: requests answer SESSION_CLOSED, DELETE stays idempotent.
    if (snapshot.session.closed) {
      this.closed.remember(sessionId, snapshot.session.ownerTenantId);
      return;
    }
    const { ownership } = this.deps;
    const lease = await ownership.acquire(sessionId);
    if (!lease.ok) {
      const busy = startsRun ? await ownership.activeRun(sessionId) : undefined;
      if (busy) throw new CodeError('SESSION_BUSY', `session ${sessionId} is busy with run ${busy} on node ${lease.ownerNodeId}`, { activeRunId: busy, ownerNodeId: lease.ownerNodeId });
      throw new CodeError('SESSION_OWNED_ELSEWHERE', `session ${sessionId} is owned by node ${lease.ownerNodeId}${lease.ownerUrl ? ` at ${lease.ownerUrl}` : ''}; send the request there`, { sessionId, ownerNodeId: lease.ownerNodeId, ownerUrl: lease.ownerUrl ?? null });
    }
    // A run the previous owner left in flight is marked lost before the session goes live, so no request
    // sees (or starts a run on) the session in between.
    const lost = await this.releasingLeaseOnFailure(sessionId, () => ownership.activeRun(sessionId));
    await this.restore(snapshot, caller, true, {}, (session) => {
      if (lost !== undefined) session.markRunLost(lost, '');
    });
    if (lost !== undefined) {
      ownership.setActiveRun(sessionId, undefined);
      if (snapshot.session.options.autoResume) {
        void this.resumeRun(sessionId, lost, caller).catch((error: unknown) => this.deps.onPersistenceError?.(sessionId, error));
      }
    }
  }

  /**
   * Passivate a session: wait for its active run until the deadline (then stop it, keeping its checkpoint),
   * save it, release its lease and drop it from memory. The next request hydrates it again, on any node.
   */
  async passivate(sessionId: string, deadlineMs: number): Promise<void> {
    await this.opening.run(sessionId, () => this.passivateLive(sessionId, deadlineMs));
  }

  private async passivateLive(sessionId: string, deadlineMs: number): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    await session.waitIdle(deadlineMs);
    await session.close('passivated');
    await session.save().catch((error: unknown) => this.deps.onPersistenceError?.(sessionId, error));
    this.sessions.delete(sessionId);
    await this.deps.ownership.release(sessionId);
  }

  /** Passivate every session idle (no active run, no request) longer than `idleMs`; returns their ids. */
  async reapIdleSessions(idleMs: number): Promise<string[]> {
    const now = this.deps.hostEnv.now();
    // Child sessions live and end with their parent (they are never saved on their own).
    const idle = [...this.sessions.values()].filter((s) => s.config.parentSessionId === null && s.activeRunId === undefined && now - s.lastActivityMs > idleMs);
    for (const session of idle) {
      session.injectClusterEvent('passivation_requested', { reason: 'idle_reaper', deadline_ms: now });
      await this.passivate(session.id, 0);
    }
    return idle.map((s) => s.id);
  }

  /** Drop a session whose lease another node took: nothing more is saved or published from here. */
  async abandon(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    await session.abandon();
  }

  private async restore(
    snapshot: SessionSnapshotV1,
    caller: Caller,
    leased = false,
    relabel: Partial<SessionOptions> = {},
    beforeLive?: (session: AgentSession) => void,
  ): Promise<AgentSession> {
    const stored = snapshot.session;
    if (!leased) await this.takeLease(stored.id);
    // Continue numbering after whatever the previous owner already published.
    const session = await this.releasingLeaseOnFailure(stored.id, async () => this.factory.rebuild(snapshot, caller, relabel, await this.deps.ownership.lastSequence(stored.id)));
    await this.unlessFailing(session, async () => {
      await reattachMcp(session, stored.options.mcpServers ?? [], stored.ownMcpServers ?? [], this.deps);
      beforeLive?.(session);
      await this.register(session);
    });
    return session;
  }

  /**
   * Make a built session live, unless shutdown began while it was being built: then the caller gets
   * SHUTTING_DOWN and unlessFailing discards the session (stdio MCP servers included, which the drain
   * would otherwise miss).
   */
  private async register(session: AgentSession): Promise<void> {
    if (this.closing) {
      throw new CodeError('SHUTTING_DOWN', `the server began shutting down while session ${session.id} was being opened`, { sessionId: session.id });
    }
    this.closed.forget(session.id);
    this.sessions.set(session.id, session);
  }

  private forget(session: AgentSession): void {
    this.sessions.delete(session.id);
    this.closed.remember(session.id, session.config.ownerTenantId);
  }

  private visible(session: AgentSession, caller: Caller): boolean {
    return session.config.ownerTenantId === caller.tenantId || hasScope(caller, 'admin');
  }

  private assertVisible(session: AgentSession, caller: Caller): void {
    if (!this.visible(session, caller)) throw new CodeError('SESSION_NOT_FOUND', `session ${session.id} not found`, { sessionId: session.id });
  }

  private assertAdmitting(): void {
    if (this.closing) throw new CodeError('SHUTTING_DOWN', 'the server is shutting down and admits no new sessions');
  }
}

