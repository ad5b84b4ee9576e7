import type { BudgetHost, BudgetOptions } from '../../protocol/budget.js';
import type { ConfigHookRegistration } from '../../protocol/hooks.js';
import type { TenantBudgetLedger } from './budget/tenant-budget-ledger.js';
import type { HookFailure } from './hooks/hook-outcome.js';
import type { WebSocketHostRegistry } from './host-bridge/websocket-host-registry.js';
import type { SecretRedactor } from './secret-redactor.js';

/** Governance services shared by every session of an agent (built once in the runtime context). */
export interface SharedGovernance {
  readonly redactor: SecretRedactor;
  readonly hostRegistry: WebSocketHostRegistry;
  readonly tenantLedger: TenantBudgetLedger;
  readonly configHooks: readonly ConfigHookRegistration[];
  readonly defaultBudget: BudgetOptions | undefined;
  readonly budgetHost: BudgetHost | undefined;
  onHookError?(sessionId: string, failure: HookFailure): void;
}
