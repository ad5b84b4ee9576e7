import { CodeError } from '../errors.js';
import { LoopCheckpointSchema, type LoopCheckpoint } from '../protocol/loop-checkpoint.js';
import { findForbiddenKey, formatFieldPath } from './find-forbidden-key.js';

/** The loop checkpoint schema version this server reads and writes. */
export const CHECKPOINT_SCHEMA_VERSION = 1;

// How many failing field paths an error message names; the rest are only counted.
const MAX_REPORTED_ISSUES = 5;

/**
 * Validate untrusted checkpoint data (parsed JSON or an in-memory value) and return a LoopCheckpoint,
 * throwing CodeError('SNAPSHOT_INVALID') that names `source` for another schema_version, malformed
 * fields or prototype-polluting keys.
 */
export function parseCheckpoint(raw: unknown, source: string): LoopCheckpoint {
  rejectUnsupportedVersion(raw, source);
  const forbidden = findForbiddenKey(raw);
  if (forbidden !== undefined) {
    throw new CodeError('SNAPSHOT_INVALID', `invalid checkpoint in ${source}: forbidden key "${forbidden.key}" at ${forbidden.path}`, {
      source,
      issues: [{ path: forbidden.path, message: `forbidden key "${forbidden.key}"` }],
    });
  }
  const result = LoopCheckpointSchema.safeParse(raw);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ path: formatFieldPath(issue.path), message: issue.message }));
  const named = issues
    .slice(0, MAX_REPORTED_ISSUES)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join('; ');
  const more = issues.length > MAX_REPORTED_ISSUES ? ` (and ${issues.length - MAX_REPORTED_ISSUES} more)` : '';
  throw new CodeError('SNAPSHOT_INVALID', `invalid checkpoint in ${source}: ${named}${more}`, {
    source,
    issues: issues.slice(0, MAX_REPORTED_ISSUES),
  });
}

function rejectUnsupportedVersion(raw: unknown, source: string): void {
  if (typeof raw !== 'object' || raw === null || !Object.hasOwn(raw, 'schema_version')) return;
  const version: unknown = (raw as { schema_version?: unknown }).schema_version;
  if (version === CHECKPOINT_SCHEMA_VERSION) return;
  const shown =
    typeof version === 'number' ? String(version) : typeof version === 'string' ? JSON.stringify(version) : version === null ? 'null' : `of type ${typeof version}`;
  throw new CodeError(
    'SNAPSHOT_INVALID',
    `unsupported checkpoint schema_version ${shown} in ${source}; this server reads version ${CHECKPOINT_SCHEMA_VERSION}`,
    { source, schemaVersion: typeof version === 'number' || typeof version === 'string' ? version : null },
  );
}
