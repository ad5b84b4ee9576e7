import { strongestDecision, type BudgetDecision, type BudgetGuard } from './budget-decision.js';

/**
 * One guard from several: asked in order, a deny wins at once (later guards are not asked), then soft,
 * else allow. When a tool call is denied, guards that had admitted (and counted) it give the count back.
 * Usage and clocks go to every guard.
 */
export function combineGuards(...guards: BudgetGuard[]): BudgetGuard {
  return {
    async beforeLlmCall(estimatedTokens, signal) {
      const decisions: BudgetDecision[] = [];
      for (const guard of guards) {
        const decision = await guard.beforeLlmCall(estimatedTokens, signal);
        if (decision.kind === 'deny') return decision;
        decisions.push(decision);
      }
      return strongestDecision(decisions);
    },
    recordUsage(totalTokens) {
      for (const guard of guards) guard.recordUsage(totalTokens);
    },
    async beforeToolCall(toolName, signal) {
      const admitted: BudgetGuard[] = [];
      const decisions: BudgetDecision[] = [];
      try {
        for (const guard of guards) {
          const decision = await guard.beforeToolCall(toolName, signal);
          if (decision.kind === 'deny') {
            for (const earlier of admitted) earlier.releaseToolCall?.();
            return decision;
          }
          admitted.push(guard);
          decisions.push(decision);
        }
      } catch (error) {
        for (const earlier of admitted) earlier.releaseToolCall?.();
        throw error;
      }
      return strongestDecision(decisions);
    },
    releaseToolCall() {
      for (const guard of guards) guard.releaseToolCall?.();
    },
    startClock() {
      for (const guard of guards) guard.startClock?.();
    },
    stopClock() {
      for (const guard of guards) guard.stopClock?.();
    },
  };
}
