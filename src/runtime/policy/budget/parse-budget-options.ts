import { CodeError } from '../../../errors.js';
import { BudgetOptionsSchema, type BudgetOptions, type BudgetOptionsInput } from '../../../protocol/budget.js';

/** Parse budget limits; throws SESSION_CONFIGURATION_ERROR naming the field (prefixed by `where`, e.g. `budget`). */
export function parseBudgetOptions(input: BudgetOptionsInput | undefined, where = 'budget'): BudgetOptions | undefined {
  if (input === undefined) return undefined;
  const result = BudgetOptionsSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = [where, ...(issue?.path.map(String) ?? [])].join('.');
  throw new CodeError('SESSION_CONFIGURATION_ERROR', `${path}: ${issue?.message ?? 'invalid'}`, { issues: [{ path, message: issue?.message ?? 'invalid' }] });
}
