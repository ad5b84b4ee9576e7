import { CodeError } from '../../errors.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { KeyedLock } from '../../stores/keyed-lock.js';
import { sessionIdOf, sessionKeyOf, type SessionKey } from '../../stores/session-key.js';
import { hasScope, type Caller } from '../ports/caller.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { SessionServices } from '../session-kernel/session-services.js';
import type { LiveSessions } from './live-sessions.js';
import { lostRunFacts } from './lost-run.js';
import { reattachMcp } from './session-mcp-layers.js';
import type { SessionFactory } from './session-factory.js';
import { ownedElsewhere, releasingLeaseOnFailure, takeLease } from './session-leases.js';

/** NODE_LOST (410): the session lived only in the memory of `nodeId`, which is gone. */
function nodeLost(key: SessionKey, nodeId: string): CodeError {
  const sessionId = sessionIdOf(key);
  return new CodeError(
    'NODE_LOST',
    `session ${sessionId} was not saved (no autoSave) and its node ${nodeId} is gone; create a new session`,
    { sessionId, nodeId },
  );
}

/** What hydration needs from the agent. */
export interface SessionHydrationHost {
  readonly deps: SessionServices;
  readonly live: LiveSessions;
  /** One opening (create, resume, hydrate) at a time per session key. */
  readonly opening: KeyedLock;
  readonly factory: SessionFactory;
  /** Resume a run from its loop checkpoint (autoResume of a run a dead owner left in flight). */
  resumeRun(key: SessionKey, runId: string, caller: Caller): Promise<unknown>;
}

/**
 * Makes stored sessions live on this node: implicit hydration before a request uses a session
 * (passivated here, or left by a node that died), and the restore of a snapshot that resume and
 * hydration share (lease, rebuild, MCP layers re-attached, registered).
 */
export class SessionHydration {
  constructor(private readonly host: SessionHydrationHost) {}

  /**
   * Make a stored session live on this node before a request uses it: sessions passivated here or owned by
   * a node that died are hydrated from the store (taking the lease); a session another live node owns
   * (its lease, or the home record of a session created there without autoSave) throws
   * SESSION_OWNED_ELSEWHERE with the owner's address, which the routes forward there; an unsaved session
   * whose node is gone answers 410 NODE_LOST. A run left in flight by a dead owner is marked failed
   * (NODE_LOST) and, with autoResume, resumed.
   */
  async ensureLocal(key: SessionKey, caller: Caller, startsRun: boolean): Promise<void> {
    const { live, deps } = this.host;
    if (live.has(key) || !live.admitting) return;
    // On one node a closed session stays closed until resume: true reopens it here; in a cluster another
    // node may have reopened it, so the store decides.
    if (live.closed.has(key) && !deps.ownership.clustered) return;
    await this.host.opening.run(key, () => this.hydrate(key, caller, startsRun));
  }

  private async hydrate(key: SessionKey, caller: Caller, startsRun: boolean): Promise<void> {
    const { live, deps } = this.host;
    // Another request may have opened it while this one waited its turn.
    if (live.has(key)) return;
    const sessionId = sessionIdOf(key);
    const { ownership } = deps;
    // Another live node has it (leased, or an unsaved session's home): the request goes there, nothing is loaded here.
    const where = ownership.clustered ? await ownership.locate(key) : undefined;
    if (where && where.nodeId !== ownership.nodeId && where.alive)
      throw ownedElsewhere(key, { ok: false, ownerNodeId: where.nodeId, ownerUrl: where.url });
    const snapshot = await this.host.factory.loadStored(key);
    if (!snapshot) {
      // Created without autoSave on a node that is gone (or restarted here): nothing of it was saved.
      // (One closed here is remembered as closed and answers SESSION_CLOSED.)
      if (where?.unsaved && !live.closed.has(key)) throw nodeLost(key, where.nodeId);
      return;
    }
    if (snapshot.session.ownerTenantId !== caller.tenantId && !hasScope(caller, 'admin')) return;
    // Remembered like a session closed here: requests answer SESSION_CLOSED, DELETE stays idempotent.
    if (snapshot.session.closed) {
      live.closed.remember(key);
      return;
    }
    const lease = await ownership.acquire(key);
    if (!lease.ok) {
      const busy = startsRun ? await ownership.activeRun(key) : undefined;
      if (busy)
        throw new CodeError(
          'SESSION_BUSY',
          `session ${sessionId} is busy with run ${busy} on node ${lease.ownerNodeId}`,
          { activeRunId: busy, ownerNodeId: lease.ownerNodeId },
        );
      throw ownedElsewhere(key, lease);
    }
    // A run the previous owner left in flight is marked lost before the session goes live, so no request
    // sees (or starts a run on) the session in between.
    const lost = await releasingLeaseOnFailure(ownership, key, () => ownership.activeRun(key));
    // Listed with what survived of it (its input, its start): the runs list shows the lost run, not only its checkpoint.
    const facts =
      lost !== undefined
        ? await lostRunFacts(ownership, deps.checkpoints, key, lost, snapshot.session.sessionSequence)
        : undefined;
    await this.restore(snapshot, caller, true, {}, (session) => {
      if (lost !== undefined) session.runs.markLost(lost, facts?.input ?? '', facts?.createdAtMs);
    });
    if (lost !== undefined) {
      ownership.setActiveRun(key, undefined);
      if (snapshot.session.options.autoResume) {
        void this.host
          .resumeRun(key, lost, caller)
          .catch((error: unknown) => deps.logger.persistenceFailed(sessionId, error));
      }
    }
  }

  /**
   * Restore a stored session and make it live: its lease (unless `leased`), rebuilt parts, `beforeAttach` (the
   * checks of MCP servers a resume adds), MCP layers re-attached, `beforeLive`, registered.
   */
  async restore(
    snapshot: SessionSnapshotV1,
    caller: Caller,
    leased = false,
    relabel: Partial<SessionOptions> = {},
    beforeLive?: (session: AgentSession) => void,
    beforeAttach?: (session: AgentSession) => Promise<void>,
  ): Promise<AgentSession> {
    const { live, deps, factory } = this.host;
    const stored = snapshot.session;
    const key = sessionKeyOf(snapshot);
    if (!leased) await takeLease(deps.ownership, key);
    // Continue numbering after whatever the previous owner already published.
    const session = await releasingLeaseOnFailure(deps.ownership, key, async () =>
      factory.rebuild(snapshot, caller, relabel, await deps.ownership.lastSequence(key)),
    );
    await live.unlessFailing(session, async () => {
      await beforeAttach?.(session);
      await reattachMcp(session, stored.options.mcpServers ?? [], stored.ownMcpServers ?? [], deps);
      beforeLive?.(session);
      await live.register(session);
    });
    // Its run queue (multitaskStrategy) resumes: the first queued run starts.
    session.runs.resumeQueue();
    return session;
  }
}
