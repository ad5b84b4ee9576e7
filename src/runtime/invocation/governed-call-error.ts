/** A provider call refused by governance (budget deny, blocking hook); the run fails with this code. */
export class GovernedCallError extends Error {
  constructor(
    readonly code: 'BUDGET_EXHAUSTED' | 'BLOCKED_BY_HOOK',
    message: string,
  ) {
    super(message);
    this.name = 'GovernedCallError';
  }
}
