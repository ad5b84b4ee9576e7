import { CodeError } from '../../../errors.js';
import { BudgetOptionsSchema, type BudgetOptions, type BudgetOptionsInput } from '../../../protocol/budget.js';
import { formatZodIssues, zodFieldIssues } from '../../../protocol/format-zod-issues.js';

/** Parse budget limits; throws SESSION_CONFIGURATION_ERROR naming the field (prefixed by `where`, e.g. `budget`). */
export function parseBudgetOptions(input: BudgetOptionsInput | undefined, where = 'budget'): BudgetOptions | undefined {
  if (input === undefined) return undefined;
  const result = BudgetOptionsSchema.safeParse(input);
  if (result.success) return result.data;
  throw new CodeError('SESSION_CONFIGURATION_ERROR', formatZodIssues(result.error, { where }), {
    issues: zodFieldIssues(result.error, where, 10),
  });
}
