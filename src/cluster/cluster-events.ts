import { CodeError } from '../errors.js';
import { ClusterEventSchema, type ClusterEvent } from '../protocol/cluster-event.js';

// How many failing fields an error message names; the rest are only counted.
const MAX_REPORTED_ISSUES = 5;

/**
 * Parse a host-injected cluster event, throwing VALIDATION_ERROR whose message names each failing field
 * (`payload.deadline_ms: ...`, `type: ...`) and whose details.issues list them.
 */
export function parseClusterEvent(raw: unknown, where = 'body'): ClusterEvent {
  const result = ClusterEventSchema.safeParse(raw);
  if (result.success) return result.data;
  const issues = result.error.issues.flatMap((issue) => {
    const base = [where, ...issue.path.map(String)];
    // Unknown keys are reported on their parent; name each one instead.
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ path: [...base, key].join('.'), message: 'unknown field' }));
    return [{ path: base.join('.'), message: issue.message }];
  });
  const named = issues
    .slice(0, MAX_REPORTED_ISSUES)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join('; ');
  const more = issues.length > MAX_REPORTED_ISSUES ? ` (and ${issues.length - MAX_REPORTED_ISSUES} more)` : '';
  throw new CodeError('VALIDATION_ERROR', `invalid cluster event: ${named}${more}`, { issues: issues.slice(0, MAX_REPORTED_ISSUES) });
}
