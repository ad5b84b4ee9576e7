import { CodeError } from '../../errors.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import { sessionKey, type SessionKey } from '../../stores/session-key.js';
import { hasScope, type Caller } from '../ports/caller.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { SessionServices } from '../session-kernel/session-services.js';
import type { LiveSessions } from './live-sessions.js';
import { labelOptions, type SessionFactory } from './session-factory.js';
import type { SessionHydration } from './session-hydration.js';
import { attachInheritedMcp } from './session-mcp-layers.js';
import { releasingLeaseOnFailure, takeLease } from './session-leases.js';

/** What opening a session needs from the agent. */
export interface SessionOpenerHost {
  readonly deps: SessionServices;
  readonly live: LiveSessions;
  readonly factory: SessionFactory;
  readonly hydration: SessionHydration;
}

/**
 * Opens one session for createSession, under its key's opening lock when it has a requested id: resumes a
 * live or stored one (`resume: true`), or builds a new one (lease, MCP servers, first save or home record).
 */
export class SessionOpener {
  constructor(private readonly host: SessionOpenerHost) {}

  /** Open the session of these (already bounded and identity-checked) options; `key` is absent for a generated id. */
  async open(
    options: SessionOptions,
    caller: Caller,
    key: SessionKey | undefined,
    optionsBytes: number,
  ): Promise<{ session: AgentSession; resumed: boolean }> {
    const { deps, live, factory, hydration } = this.host;
    const requestedId = options.sessionId;
    if (options.resume && key !== undefined) {
      const open = live.get(key);
      if (open) {
        live.assertVisible(open, caller);
        return { session: open, resumed: true };
      }
    }
    live.assertCapacity(options.tenantId ?? caller.tenantId, optionsBytes);
    // Only the caller's own tenant is searched: another tenant's session of this id is never an obstacle (nor revealed).
    if (key !== undefined && live.has(key))
      throw new CodeError('SESSION_EXISTS', `session ${requestedId} already exists`, { sessionId: requestedId });
    let snapshot: SessionSnapshotV1 | undefined;
    if (key !== undefined) snapshot = await factory.loadStored(key);
    if (options.resume) {
      if (!snapshot || (snapshot.session.ownerTenantId !== caller.tenantId && !hasScope(caller, 'admin'))) {
        throw new CodeError('SESSION_NOT_FOUND', `session ${requestedId} not found`, { sessionId: requestedId });
      }
      const session = await hydration.restore(snapshot, caller, false, labelOptions(options));
      // Reopening a closed session is stored at once: the store is what other nodes (and restarts) go by.
      if (snapshot.session.closed)
        await session.persistence.save().catch((error: unknown) => deps.logger.persistenceFailed(session.id, error));
      return { session, resumed: true };
    }
    if (snapshot)
      throw new CodeError(
        'SESSION_EXISTS',
        `session ${requestedId} already exists in the store; pass resume: true to resume it`,
        { sessionId: requestedId },
      );
    const { config, hostEnv } = await factory.resolve(options, caller);
    const newKey = sessionKey(config.ownerTenantId, config.sessionId);
    // A generated id is new by construction; a requested one was checked above, under this key's lock.
    if (key === undefined && live.has(newKey))
      throw new CodeError('SESSION_EXISTS', `session ${config.sessionId} already exists`, {
        sessionId: config.sessionId,
      });
    await takeLease(deps.ownership, newKey);
    const session = await releasingLeaseOnFailure(deps.ownership, newKey, async () => factory.create(config, hostEnv));
    let stored = false;
    await live.unlessFailing(
      session,
      async () => {
        if (options.mcpServers?.length) await attachInheritedMcp(session, options.mcpServers, caller, deps);
        live.assertAdmitting();
        // An autoSave session is stored from the start, so its runs can be resumed even if this process dies mid-run.
        if (config.autoSave) {
          await session.persistence.save();
          stored = true;
        } else await deps.ownership.recordHome(newKey); // Other nodes learn where it lives (and when it is lost).

        await live.register(session);
      },
      // A session that never opened leaves nothing in the store to come back on the next hydration.
      async () => {
        if (stored)
          await factory
            .storesFor(config.sessionStore)
            .store.delete(session.key)
            .catch((error: unknown) => deps.logger.persistenceFailed(session.id, error));
      },
    );
    session.governance.notifyStart();
    return { session, resumed: false };
  }
}
