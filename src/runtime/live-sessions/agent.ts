import type { TraceParent } from '../ports/telemetry.js';
import { purgeStoredSession } from '../retention/purge-stored-session.js';
import { removeSandboxHome } from '../sandbox/remove-sandbox-home.js';
import { CodeError } from '../../errors.js';
import type { ForkRequest } from '../../protocol/fork.js';
import type { PendingQuestionView, QuestionAnswer } from '../../protocol/questions.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import { KeyedLock } from '../../stores/keyed-lock.js';
import { sessionKey, tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import { hasScope, type Caller } from '../ports/caller.js';
import { assertStdioMcpAllowed } from './assert-stdio-mcp-allowed.js';
import type { SessionQueue } from '../queue/session-queue.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { RunHandle } from '../session-kernel/run-handle.js';
import type { SessionServices } from '../session-kernel/session-services.js';
import { AgentChildSpawner } from './agent-child-spawner.js';
import { LiveSessions } from './live-sessions.js';
import { SessionFactory } from './session-factory.js';
import { SessionHydration } from './session-hydration.js';
import { assertOwnIdentity } from './session-identity.js';
import { assertSessionOptionsBound } from './session-options-bound.js';
import { SessionPassivation } from './session-passivation.js';
import { RunResumer } from './run-resumer.js';
import { SessionOpener } from './session-opener.js';
import { assertForkGrants, forkOptions, forkSeed } from './session-fork.js';
import { makeForkCopy } from './fork-copy.js';

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
  private readonly opener: SessionOpener;
  private readonly resumer: RunResumer;
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
    this.hydration = new SessionHydration({
      deps,
      live: sessions,
      opening: this.opening,
      factory: this.factory,
      resumeRun: (key, runId, caller) => this.resumer.resume(key, runId, caller),
    });
    this.passivation = new SessionPassivation(deps, sessions, this.opening);
    this.opener = new SessionOpener({
      deps,
      live: sessions,
      factory: this.factory,
      hydration: this.hydration,
      passivation: this.passivation,
    });
    this.resumer = new RunResumer({
      deps,
      live: sessions,
      reopen: (options, caller) => this.createSession(options, caller),
    });
    deps.ownership.onLost((key) => void this.abandon(key));
    deps.mcp.onChange(() => {
      this.mcpVersion += 1;
    });
    const idleSessionMs = deps.config.sessionIdleTimeoutMs;
    if (idleSessionMs !== undefined) this.passivation.startReaper(idleSessionMs);
    const idle = deps.config.mcpIdleDisconnect;
    if (idle) {
      this.idleTimer = setInterval(
        () => void this.disconnectIdleMcp(idle.thresholdMs).catch(() => undefined),
        idle.intervalMs,
      );
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
      for (const layer of session.mcp.layers().slice(1))
        names.push(...(await layer.disconnectIdle(thresholdMs)).map((n) => `${session.id}/${n}`));
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
  async createSession(
    options: SessionOptions,
    caller: Caller,
    field = 'body',
  ): Promise<{ session: AgentSession; resumed: boolean }> {
    this.sessions.assertAdmitting();
    // Before anything is looked up: options over their byte bound, or naming another tenant or principal, are refused
    // whether or not the session exists.
    const optionsBytes = assertSessionOptionsBound(options, this.deps.config.limits.maxSessionOptionsBytes, field);
    assertOwnIdentity(options, caller);
    if (options.resume && options.sessionId === undefined) {
      throw new CodeError(
        'SESSION_CONFIGURATION_ERROR',
        'sessionId: resume: true needs the sessionId of the session to resume',
        { field: 'sessionId' },
      );
    }
    const requestedId = options.sessionId;
    if (requestedId === undefined) return this.opener.open(options, caller, undefined, optionsBytes);
    // The session is the caller's tenant's (or, for an admin, the tenant its options name: assertOwnIdentity).
    const key = sessionKey(options.tenantId ?? caller.tenantId, requestedId);
    return this.opening.run(key, () => this.opener.open(options, caller, key, optionsBytes));
  }

  /**
   * The checks of a session creation without making one (byte bound, identity, grants, workspace, model, options;
   * stdio MCP servers need host_direct): a schedule's template goes through them at its creation and every tick.
   */
  async checkSessionOptions(options: SessionOptions, caller: Caller, field = 'body'): Promise<void> {
    assertSessionOptionsBound(options, this.deps.config.limits.maxSessionOptionsBytes, field);
    assertOwnIdentity(options, caller);
    assertStdioMcpAllowed(options.mcpServers, caller, `${field}.mcpServers`);
    // Resolving a new session's configuration is every creation check; it holds nothing (no descriptor, no lease).
    await this.factory.resolve(options, caller);
  }

  /**
   * POST /v1/sessions/:id/fork: a new session of the forking `caller`'s tenant with the transcript of `parent` (as
   * `getSession` found it for the addressed caller) up to the fork point, its options re-checked as a creation with
   * the caller's scopes (session-fork.ts); grants, hooks, hosts, pending confirmations and questions are not copied.
   */
  async forkSession(parent: AgentSession, request: ForkRequest, caller: Caller): Promise<AgentSession> {
    this.sessions.assertAdmitting();
    const seed = forkSeed(parent, request, caller.tenantId);
    // A generated id comes from the server's HostEnv: a replay HostEnv copied from the parent would hand out the
    // parent's own id again.
    const forkId = request.sessionId ?? this.deps.hostEnv.newId('sess');
    const options = forkOptions(parent, forkId);
    assertForkGrants(parent, options, caller, this.deps.config);
    const copy = request.workspace === 'copy';
    // A fork of another tenant's session (an admin's) lives in the caller's tenant: so must its workspace (a copy is
    // made there).
    if (!copy && parent.config.ownerTenantId !== caller.tenantId) {
      const inside = await this.factory.canonicalWorkspace(parent.workspace, caller.tenantId, false);
      if (inside !== parent.workspace)
        throw new CodeError(
          'FORBIDDEN',
          `workspace: the parent's workspace is not inside tenant "${caller.tenantId}"'s space, where the fork would live; fork a session of your own tenant`,
          { field: 'workspace' },
        );
    }
    const optionsBytes = assertSessionOptionsBound(options, this.deps.config.limits.maxSessionOptionsBytes, 'body');
    const key = sessionKey(caller.tenantId, forkId);
    if (!copy)
      return (await this.opening.run(key, () => this.opener.open(options, caller, key, optionsBytes, seed))).session;
    return this.opening.run(key, async () => {
      if (this.sessions.has(key))
        throw new CodeError('SESSION_EXISTS', `session ${forkId} already exists`, { sessionId: forkId });
      const made = await makeForkCopy(parent, request.atRunId, { id: forkId, tenantId: caller.tenantId }, this.deps);
      try {
        const { session } = await this.opener.open(
          { ...options, workspace: made.dir.path },
          caller,
          key,
          optionsBytes,
          {
            ...seed,
            origin: { ...seed.origin, workspace: 'copy', tree: made.tree },
            workspacePin: made.dir.pin,
          },
        );
        made.dir.close();
        return session;
      } catch (error) {
        await made.discard();
        throw error;
      }
    });
  }

  /**
   * Resume a run from its loop checkpoint: hydrate the session from the store when it is not live here,
   * then start a new run (new id; the old run is named in its metadata) from the checkpoint's transcript
   * and counters. SESSION_STORE_REQUIRED without a durable checkpoint store; CHECKPOINT_NOT_FOUND when the
   * run has no checkpoint (it finished, never completed a tool round, or was lost).
   */
  async resumeRun(
    sessionId: string,
    runId: string,
    caller: Caller,
    idempotencyKey?: string,
    traceParent?: TraceParent,
  ): Promise<{ session: AgentSession; handle: RunHandle }> {
    return this.resumer.resume(sessionKey(caller.tenantId, sessionId), runId, caller, idempotencyKey, traceParent);
  }

  /**
   * Answer a question of the session's agent (the broker's 404, 409 and 400). A question kept across a restart
   * or takeover resumes its run from the checkpoint taken before it was asked; when that fails (resumeRun's
   * errors, e.g. SESSION_BUSY while another run is active) the answer is taken back and the error thrown.
   */
  async answerQuestion(
    sessionId: string,
    questionId: string,
    answer: QuestionAnswer,
    caller: Caller,
  ): Promise<{ question: PendingQuestionView; resumedRunId?: string }> {
    const session = this.getSession(sessionId, caller);
    const { question, resumesRun } = session.governance.answerQuestion(questionId, answer);
    if (resumesRun === undefined) return { question };
    try {
      const { handle } = await this.resumeRun(sessionId, resumesRun, caller);
      return { question, resumedRunId: handle.record.runId };
    } catch (error) {
      session.governance.withdrawAnswer(questionId);
      throw error;
    }
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
    return [...this.sessions.values()].filter(
      (s) => (tenant === undefined || s.config.ownerTenantId === tenant) && this.sessions.visible(s, caller),
    );
  }

  /** True when the session of this key is live on this node. */
  isLive(key: SessionKey): boolean {
    return this.sessions.has(key);
  }

  /**
   * DELETE /v1/sessions/:id?purge=true: close the caller's tenant's session of this id if it is open, then
   * delete what is stored of it at once (snapshot, its runs' checkpoints, its attachments; artifacts are in the
   * snapshot).
   * SESSION_NOT_FOUND when the tenant has no such session, open, closed or stored.
   */
  async purgeSession(id: string, caller: Caller): Promise<{ closed: boolean; purged: boolean }> {
    const key = sessionKey(caller.tenantId, id);
    return this.opening.run(key, async () => {
      const closed = this.sessions.has(key) ? await this.closeLive(key, id, caller) : false;
      const purged = await purgeStoredSession(
        { ...this.factory.storesFor('file'), ownership: this.deps.ownership },
        key,
      );
      if (!closed && !purged && !this.sessions.closed.visibleTo(key, caller))
        throw new CodeError('SESSION_NOT_FOUND', `session ${id} not found`, { sessionId: id });
      this.deps.quotas?.recordStored(tenantIdOf(key), id, 0);
      // Its attachments go with it (the transcript that referenced them is gone).
      await this.deps.attachments?.deleteSession(key);
      // A stored session that was not live here still has its commands' $HOME: it goes with the session.
      await removeSandboxHome(this.deps.sandbox, this.deps.quotas, key);
      // Its change sets and shadow git store too.
      await this.deps.changes?.removeSession(key);
      // Its webhook deliveries and their log.
      await this.deps.webhooks?.removeSession(key).catch(() => undefined);
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
    await Promise.all(
      [...this.sessions.values()].map(async (s) => {
        await s.close('shutdown');
        // Only sessions the store should hold (autoSave, or saved before) and that changed since: bounded work.
        if ((s.config.autoSave || s.persistence.saved) && s.persistence.dirty)
          await s.persistence.save().catch((error: unknown) => this.deps.logger.persistenceFailed(s.id, error));
        this.sessions.forget(s);
      }),
    );
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
