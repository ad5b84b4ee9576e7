import { CodeError } from '../../errors.js';
import type { BudgetHostEndpoint } from '../../protocol/budget.js';
import type { SharedGovernance } from '../policy/shared-governance.js';
import type { HostEnv } from '../ports/host-env.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import { budgetHostGuard, buildSessionGovernance, type SessionGovernanceParts } from './session-governance-factory.js';

/**
 * A session's governance parts, built on first use (a child's are its parent's), and what the session
 * does with them: its budget host, its session_start notice, and which parts it owns (settles on close).
 */
export class SessionGovernanceAccess {
  private built: SessionGovernanceParts | undefined;

  constructor(
    private readonly config: ResolvedSessionConfig,
    private readonly hostEnv: HostEnv,
    private readonly shared: SharedGovernance,
    /** A child session's parent's parts: the child shares them and never settles or closes them. */
    private readonly inherited: SessionGovernanceParts | undefined,
    /** "Allow always" grants of a restored session (from its snapshot), held again once the broker is built. */
    private readonly restoredGrants: readonly string[] = [],
  ) {}

  /** The session's governance parts, built on first use. */
  parts(): SessionGovernanceParts {
    if (!this.built) {
      this.built = this.inherited ?? buildSessionGovernance(this.config, this.hostEnv, this.shared);
      if (!this.inherited) this.built.governance.broker.restoreGrants(this.restoredGrants);
    }
    return this.built;
  }

  /** The "allow always" grants the session's snapshot keeps: the broker's, or the restored ones while it is not built (a child's are its parent's). */
  grantKeys(): readonly string[] {
    if (this.inherited) return [];
    return this.built ? this.built.governance.broker.grantKeys() : this.restoredGrants;
  }

  /** The parts if they were built, else undefined (an idle session never builds them). */
  get current(): SessionGovernanceParts | undefined {
    return this.built;
  }

  /** The parts the session itself owns and settles on close: undefined for a child (its parent's) or when never built. */
  get owned(): SessionGovernanceParts | undefined {
    return this.inherited ? undefined : this.built;
  }

  /**
   * Set (or with undefined remove) the external budget host the session's guard consults. A WebSocket host
   * must be a connection of the session's tenant; a webhook may call private addresses only with `allowPrivateNetworks`.
   */
  setBudgetHost(endpoint: BudgetHostEndpoint | undefined, allowPrivateNetworks: boolean): void {
    if (endpoint?.type === 'websocket') {
      const binding = this.shared.hostRegistry.bindingOf(endpoint.connectionId);
      if (!binding || binding.tenantId !== this.config.ownerTenantId) {
        throw new CodeError('VALIDATION_ERROR', 'body.connectionId: no host connection of this tenant has this id; send {"type":"host_register"} on an events WebSocket first', { field: 'connectionId' });
      }
    }
    this.parts().budget.setHost(endpoint ? budgetHostGuard(endpoint, this.config, this.hostEnv, this.shared, allowPrivateNetworks) : undefined);
  }

  /** Tell session_start hooks; only sessions with hooks build their engine for it (idle sessions stay small). */
  notifyStart(): void {
    const { config } = this;
    if (this.shared.configHooks.length === 0 && !config.options.hooks?.length) return;
    this.parts().hooks.observe('session_start', { session_id: config.sessionId, workspace: config.workspace, model: config.model.id, labels: config.labels }, { sessionId: config.sessionId });
  }
}
