import { budgetEventPayload } from '../../policy/budget/budget-event.js';
import { CONTINUE, stopWith, type StageVerdict, type ToolCallState } from '../tool-call-state.js';

/** Stage 5: the budget guard (soft -> event and go on; deny -> BUDGET_EXHAUSTED error result). */
export async function budget(state: ToolCallState): Promise<StageVerdict> {
  const guard = state.deps.governance.budget;
  if (!guard) return CONTINUE;
  const name = state.tool?.name ?? state.call.name;
  let decision;
  try {
    decision = await guard.beforeToolCall(name, state.ctx.signal);
  } catch (error) {
    // A guard that fails denies: budgets fail closed.
    decision = {
      kind: 'deny' as const,
      resource: 'tool_calls',
      reason: `budget guard failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (decision.kind === 'allow') return CONTINUE;
  const payload = budgetEventPayload(decision, { id: state.call.id, name });
  if (decision.kind === 'soft') {
    state.ctx.emit('budget_threshold_hit', payload);
    return CONTINUE;
  }
  state.ctx.emit('budget_exhausted', payload);
  return stopWith(`BUDGET_EXHAUSTED: ${decision.resource}: ${decision.reason}`, {
    budget_exhausted: { resource: decision.resource, reason: decision.reason },
  });
}
