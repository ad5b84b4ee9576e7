import type { KeyedLock } from '../../stores/keyed-lock.js';
import { tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { SessionServices } from '../session-kernel/session-services.js';
import type { LiveSessions } from './live-sessions.js';

/**
 * Passivation: a live session is saved, its lease released and it is dropped from memory (the next
 * request hydrates it again, on any node); the idle reaper passivates sessions nobody used for a while.
 */
export class SessionPassivation {
  private reaperTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: SessionServices,
    private readonly live: LiveSessions,
    /** One opening (create, resume, hydrate, passivate) at a time per session id. */
    private readonly opening: KeyedLock,
  ) {}

  /** Start the idle reaper: every so often passivate sessions idle longer than `idleSessionMs`. */
  startReaper(idleSessionMs: number): void {
    this.reaperTimer = setInterval(
      () => void this.reapIdleSessions(idleSessionMs),
      Math.min(Math.max(idleSessionMs / 2, 500), 30_000),
    );
    this.reaperTimer.unref();
  }

  /** Stop the idle reaper. */
  stopReaper(): void {
    clearInterval(this.reaperTimer);
  }

  /**
   * Passivate a session: wait for its active run until the deadline (then stop it, keeping its checkpoint),
   * save it, release its lease and drop it from memory. The next request hydrates it again, on any node.
   */
  async passivate(key: SessionKey, deadlineMs: number): Promise<void> {
    await this.opening.run(key, () => this.passivateLive(key, deadlineMs));
  }

  /** Passivate a session whose opening lock the caller already holds (a resume that adds options rebuilds it). */
  passivateHeld(key: SessionKey, deadlineMs: number): Promise<void> {
    return this.passivateLive(key, deadlineMs);
  }

  private async passivateLive(key: SessionKey, deadlineMs: number): Promise<void> {
    const session = this.live.get(key);
    if (!session) return;
    await session.runs.waitIdle(deadlineMs);
    await session.close('passivated');
    await session.persistence.save().catch((error: unknown) => this.deps.logger.persistenceFailed(session.id, error));
    this.live.delete(key);
    await this.deps.ownership.release(key);
  }

  /** Passivate every session idle (no active run, no request) longer than `idleMs`; returns their keys. */
  async reapIdleSessions(idleMs: number): Promise<SessionKey[]> {
    const now = this.deps.hostEnv.now();
    // Child sessions live and end with their parent (they are never saved on their own). A session holding
    // what cannot move with it stays where it is: a pending confirmation, a stdio MCP server it started, or a
    // WebSocket host (hooks, commands, budget guard) attached to it on this node.
    const idle = [...this.live.values()].filter(
      (s) =>
        s.config.parentSessionId === null &&
        s.runs.activeRunId === undefined &&
        now - s.lastActivityMs > idleMs &&
        this.movable(s),
    );
    for (const session of idle) {
      session.injectClusterEvent('passivation_requested', { reason: 'idle_reaper', deadline_ms: now });
      await this.passivate(session.key, 0);
    }
    return idle.map((s) => s.key);
  }

  private movable(session: AgentSession): boolean {
    if (session.governance.pendingConfirmations().length > 0) return false;
    if (session.governance.pendingQuestions().length > 0) return false;
    // Its own and its inherited (SessionOptions.mcpServers) servers; the global layer is every node's.
    if (
      session.mcp
        .layers()
        .slice(1)
        .some((layer) => layer.configs().some((config) => config.transport.type === 'stdio'))
    )
      return false;
    return this.deps.governance.hostRegistry.hostsOf(tenantIdOf(session.key), session.id).length === 0;
  }
}
