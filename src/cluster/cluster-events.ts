import { CodeError } from '../errors.js';
import { formatZodIssues, zodFieldIssues } from '../protocol/format-zod-issues.js';
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
  throw new CodeError('VALIDATION_ERROR', `invalid cluster event: ${formatZodIssues(result.error, { where, max: MAX_REPORTED_ISSUES })}`, { issues: zodFieldIssues(result.error, where, MAX_REPORTED_ISSUES) });
}
