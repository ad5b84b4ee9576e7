import type { HostEnv } from '../ports/host-env.js';
import type { BudgetGuard } from '../policy/budget/budget-decision.js';
import { BuiltinBudgetGuard } from '../policy/budget/builtin-budget-guard.js';
import { SwitchableBudgetGuard } from '../policy/budget/switchable-budget-guard.js';
import type { BudgetHostEndpoint } from '../../protocol/budget.js';
import { HostBudgetGuard } from '../policy/budget/host-budget-guard.js';
import { QuestionBroker } from '../policy/question-broker.js';
import { ConfirmationBroker } from '../policy/confirmation-broker.js';
import { HookEngine } from '../policy/hooks/hook-engine.js';
import type { SessionGovernance } from '../policy/session-governance.js';
import type { SharedGovernance } from '../policy/shared-governance.js';
import { activeSkillRestriction } from '../skills/active-skill-restriction.js';
import { PASSTHROUGH_REDACTOR } from './passthrough-redactor.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';

/** A session's budget guard: its limits, and an external budget host that can be set or removed. */
export interface SessionBudgetGuard extends BudgetGuard {
  setHost(host: BudgetGuard | undefined): void;
}

/** A session's governance with the concrete hook engine and budget guard it was built from. */
export interface SessionGovernanceParts {
  readonly governance: SessionGovernance;
  readonly hooks: HookEngine;
  readonly budget: SessionBudgetGuard;
}

/**
 * Build one session's governance: its hook engine (agent-wide config hooks, then the session's own), its
 * budget guard (built-in limits, combined with the budget host when the session or the agent names one),
 * its confirmation broker, and the policies and redactor it runs with.
 */
export function buildSessionGovernance(
  config: ResolvedSessionConfig,
  hostEnv: HostEnv,
  shared: SharedGovernance,
  onQuestionsChanged?: () => void,
): SessionGovernanceParts {
  const sessionId = config.sessionId;
  const hooks = new HookEngine({
    registry: shared.hostRegistry,
    configHooks: [...shared.configHooks, ...(config.options.hooks ?? [])],
    // The operator's hooks may call private addresses; the session's own only when its creator may.
    configHookMayCallPrivate: (index) => index < shared.configHooks.length || config.outboundAllowPrivate,
    now: () => hostEnv.now(),
    newId: (prefix) => hostEnv.newId(prefix),
    workspace: config.workspace,
    onError: (failure) => shared.onHookError?.(sessionId, failure),
    // What a hook is sent goes through the server's redactor, whatever the session's securityProvider.
    redact: (text) => shared.redactor.redact(text).text,
  });
  const builtin = new BuiltinBudgetGuard({
    limits: config.options.budget ?? shared.defaultBudget,
    tenantId: config.ownerTenantId,
    tenantLedger: shared.tenantLedger,
    now: () => hostEnv.now(),
  });
  const host = config.options.budgetHost ?? shared.budgetHost;
  const hostMayCallPrivate = config.options.budgetHost === undefined || config.outboundAllowPrivate;
  const budget = new SwitchableBudgetGuard(
    builtin,
    host ? budgetHostGuard({ type: 'webhook', ...host }, config, hostEnv, shared, hostMayCallPrivate) : undefined,
  );
  const governance: SessionGovernance = {
    permission: config.permissionPolicy,
    ...(config.permissionFloor ? { permissionFloor: config.permissionFloor } : {}),
    ...(grantFloorOf(config) ? { grantFloor: grantFloorOf(config) } : {}),
    ...(config.permissionBounds.length > 0 ? { agentPermissions: config.permissionBounds } : {}),
    confirmation: config.confirmationPolicy,
    broker: new ConfirmationBroker(hostEnv),
    questions: new QuestionBroker(hostEnv, onQuestionsChanged),
    // securityProvider "none" (a host_direct caller's choice) turns secret redaction off for this session.
    redactor: config.securityProvider === 'none' ? PASSTHROUGH_REDACTOR : shared.redactor,
    hooks,
    budget,
    labels: config.labels,
    // enforceActiveSkillToolRestrictions: the session's own calls are bound to the active skills' allowed-tools.
    ...(config.options.enforceActiveSkillToolRestrictions === true
      ? { restrictTool: activeSkillRestriction(config.skills) }
      : {}),
  };
  return { governance, hooks, budget };
}

/** The operator's policy that bounds "allow always" grants of answerers without host_direct (SessionGovernance.grantFloor). */
function grantFloorOf(config: ResolvedSessionConfig): ResolvedSessionConfig['permissionPolicy'] | undefined {
  return (
    config.permissionFloor ?? (config.options.permissionPolicy === undefined ? config.permissionPolicy : undefined)
  );
}

/**
 * A guard asking an external budget host (a webhook, or a WebSocket host registered on an events socket);
 * a webhook may call private addresses only with `allowPrivateNetworks` (checked again at every call).
 */
export function budgetHostGuard(
  endpoint: BudgetHostEndpoint,
  config: ResolvedSessionConfig,
  hostEnv: HostEnv,
  shared: SharedGovernance,
  allowPrivateNetworks = false,
): BudgetGuard {
  return new HostBudgetGuard({
    endpoint:
      endpoint.type === 'webhook'
        ? {
            kind: 'webhook',
            url: endpoint.url,
            ...(endpoint.headers ? { headers: endpoint.headers } : {}),
            allowPrivateNetworks,
          }
        : { kind: 'websocket', connectionId: endpoint.connectionId },
    sessionId: config.sessionId,
    tenantId: config.ownerTenantId,
    registry: shared.hostRegistry,
    timeoutMs: endpoint.timeoutMs,
    now: () => hostEnv.now(),
    newId: (prefix) => hostEnv.newId(prefix),
  });
}
