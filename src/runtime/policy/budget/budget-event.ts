import type { BudgetEventPayload } from '../../../protocol/runtime-event.js';
import type { GovernanceBudgetDecision } from '../session-governance.js';

/** The `budget_threshold_hit` / `budget_exhausted` payload of a soft or deny decision (the seed's fields, then ours). */
export function budgetEventPayload(
  decision: Exclude<GovernanceBudgetDecision, { kind: 'allow' }>,
  tool?: { id: string; name: string },
): BudgetEventPayload {
  return {
    resource: decision.resource,
    kind: decision.kind === 'deny' ? 'hard' : 'soft',
    consumed: decision.used ?? 0,
    limit: decision.limit ?? null,
    message: decision.reason,
    scope: decision.scope ?? 'session',
    ...(tool ? { tool_id: tool.id, tool_name: tool.name } : {}),
  };
}
