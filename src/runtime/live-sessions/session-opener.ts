import { isDeepStrictEqual } from 'node:util';
import { CodeError } from '../../errors.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import { sessionKey, type SessionKey } from '../../stores/session-key.js';
import { hasScope, type Caller } from '../ports/caller.js';
import { assertStdioMcpAllowed } from './assert-stdio-mcp-allowed.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { SessionServices } from '../session-kernel/session-services.js';
import type { LiveSessions } from './live-sessions.js';
import { labelOptions, type SessionFactory } from './session-factory.js';
import type { SessionHydration } from './session-hydration.js';
import { assertCallerGrants } from '../session-kernel/session-builder.js';
import { resumeChanges, resumeConflictError, type StoredSessionOptions } from './resume-options.js';
import { assertMcpCwdsInTenantSpace, assertMcpUrlsOutbound, attachInheritedMcp } from './session-mcp-layers.js';
import { releasingLeaseOnFailure, takeLease } from './session-leases.js';
import type { ForkSeed } from './session-fork.js';
import type { WorkspacePin } from '../workspace/workspace-directory.js';

/** What opening a session needs from the agent. */
export interface SessionOpenerHost {
  readonly deps: SessionServices;
  readonly live: LiveSessions;
  readonly factory: SessionFactory;
  readonly hydration: SessionHydration;
  /** Passivates a live session under the opening lock the opener holds (a resume that adds options rebuilds it). */
  readonly passivation: { passivateHeld(key: SessionKey, deadlineMs: number): Promise<void> };
}

/**
 * Opens one session for createSession, under its key's opening lock when it has a requested id: resumes a
 * live or stored one (`resume: true`), or builds a new one (lease, MCP servers, first save or home record).
 */
export class SessionOpener {
  constructor(private readonly host: SessionOpenerHost) {}

  /**
   * A resume's options with a workspace that names the stored session's in other words (a relative path, the
   * path a restore canonicalised) given as the stored one, so only another directory conflicts.
   */
  private async sameWorkspace(
    options: SessionOptions,
    stored: StoredSessionOptions,
    caller: Caller,
  ): Promise<SessionOptions> {
    const requested = options.workspace;
    if (requested === undefined || requested === stored.workspace || requested === stored.options.workspace)
      return options;
    const tenantId = options.tenantId ?? caller.tenantId;
    const canonical = await this.host.factory.canonicalWorkspace(requested, tenantId, hasScope(caller, 'admin'));
    return canonical === stored.workspace ? { ...options, workspace: stored.workspace } : options;
  }

  /**
   * Open the session of these (already bounded and identity-checked) options; `key` is absent for a generated id.
   * A fork's `seed` is its transcript and origin: the new session starts with them (never a resume).
   */
  async open(
    options: SessionOptions,
    caller: Caller,
    key: SessionKey | undefined,
    optionsBytes: number,
    seed?: ForkSeed,
  ): Promise<{ session: AgentSession; resumed: boolean }> {
    const { deps, live, factory, hydration } = this.host;
    const requestedId = options.sessionId;
    if (options.resume && key !== undefined) {
      const open = live.get(key);
      if (open) {
        live.assertVisible(open, caller);
        const current = { options: open.config.options, workspace: open.workspace, model: open.config.model.id };
        const { additions, conflicts } = resumeChanges(current, await this.sameWorkspace(options, current, caller));
        if (conflicts.length > 0) throw resumeConflictError(open.id, conflicts);
        const labels = open.config.labels as Record<string, unknown>;
        const relabels = Object.entries(labelOptions(options)).some(([name, value]) => labels[name] !== value);
        if (Object.keys(additions).length === 0 && !relabels) return { session: open, resumed: true };
        // Added options (or new labels) rebuild the session: it is saved and dropped from memory, then restored
        // with them below.
        const active = open.runs.current();
        if (active)
          throw new CodeError(
            'SESSION_BUSY',
            `session ${open.id} is busy with run ${active.id}; resume it with added options when it is idle`,
            { activeRunId: active.id, fields: Object.keys(additions) },
          );
        await this.host.passivation.passivateHeld(key, 0);
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
      const stored = snapshot.session;
      const before = { options: stored.options, workspace: stored.workspace, model: stored.model };
      const { additions, conflicts } = resumeChanges(before, await this.sameWorkspace(options, before, caller));
      if (conflicts.length > 0) throw resumeConflictError(stored.id, conflicts);
      const added = Object.keys(additions).length > 0;
      // What a resume adds is checked as at creation, with the resuming caller's scopes, then applied.
      if (added) await assertCallerGrants(additions, caller, deps.config);
      const addedMcp = additions.mcpServers?.filter(
        (server) => !(stored.options.mcpServers ?? []).some((old) => isDeepStrictEqual(old, server)),
      );
      assertStdioMcpAllowed(addedMcp, caller);
      const resumed = added ? withAddedOptions(snapshot, additions, caller) : snapshot;
      const session = await hydration.restore(
        resumed,
        caller,
        false,
        labelOptions(options),
        undefined,
        addedMcp?.length
          ? async (rebuilt) => {
              await assertMcpCwdsInTenantSpace(
                rebuilt,
                addedMcp,
                caller,
                deps,
                (i) => `mcpServers[${i}].transport.cwd`,
              );
              await assertMcpUrlsOutbound(
                rebuilt,
                addedMcp,
                caller,
                deps.config,
                (i) => `mcpServers[${i}].transport.url`,
              );
            }
          : undefined,
      );
      // Reopening a closed session (or one with added options) is stored at once: the store is what other nodes
      // (and restarts) go by.
      if (stored.closed || added)
        await session.persistence.save().catch((error: unknown) => deps.logger.persistenceFailed(session.id, error));
      return { session, resumed: true };
    }
    if (snapshot)
      throw new CodeError(
        'SESSION_EXISTS',
        `session ${requestedId} already exists in the store; pass resume: true to resume it`,
        { sessionId: requestedId },
      );
    const resolved = await factory.resolve(options, caller);
    const { hostEnv } = resolved;
    assertSeedPin(resolved.config.workspaceDir.pin, seed);
    const config = seed ? { ...resolved.config, forkedFrom: seed.origin } : resolved.config;
    const newKey = sessionKey(config.ownerTenantId, config.sessionId);
    // A generated id is new by construction; a requested one was checked above, under this key's lock.
    if (key === undefined && live.has(newKey))
      throw new CodeError('SESSION_EXISTS', `session ${config.sessionId} already exists`, {
        sessionId: config.sessionId,
      });
    await takeLease(deps.ownership, newKey);
    const session = await releasingLeaseOnFailure(deps.ownership, newKey, async () => factory.create(config, hostEnv));
    // A fork starts with its parent's transcript up to the fork point (before its first save).
    if (seed) session.transcript.messages = seed.messages;
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

/**
 * The snapshot a resume restores when it adds options: the stored options with the additions, and a permission
 * policy it adds bounded by the operator's unless the resuming caller has host_direct (as at creation).
 */
function withAddedOptions(
  snapshot: SessionSnapshotV1,
  additions: Partial<SessionOptions>,
  caller: Caller,
): SessionSnapshotV1 {
  const stored = snapshot.session;
  const policyBounded =
    additions.permissionPolicy !== undefined
      ? !hasScope(caller, 'host_direct')
      : (stored.policyBounded ?? stored.options.permissionPolicy !== undefined);
  return { ...snapshot, session: { ...stored, options: { ...stored.options, ...additions }, policyBounded } };
}

/** A copy fork's session must be pinned to the directory the server made, not one swapped in at its name since. */
function assertSeedPin(pin: WorkspacePin, seed: ForkSeed | undefined): void {
  const made = seed?.workspacePin;
  if (made === undefined || (pin.path === made.path && pin.dev === made.dev && pin.ino === made.ino)) return;
  throw new CodeError(
    'WORKSPACE_CHANGED',
    `workspace: ${made.path} is no longer the directory the fork's copy was written to (another directory is at its name now)`,
    { field: 'workspace' },
  );
}
