import type { z } from 'zod';
import { CodeError } from '../errors.js';
import { formatZodIssues, zodFieldIssues } from '../protocol/format-zod-issues.js';
import { findForbiddenKey } from './find-forbidden-key.js';

// How many failing field paths an error message names; the rest are only counted.
const MAX_REPORTED_ISSUES = 5;

/** What parseStoredDocument checks a document against and how its errors name it. */
export interface StoredDocumentKind<T> {
  /** The document's name in errors: "snapshot", "checkpoint". */
  name: string;
  /** The only schema_version this server reads. */
  version: number;
  /** The zod schema of the current version. */
  schema: z.ZodType<T>;
}

/**
 * Validate an untrusted stored document (parsed JSON or an in-memory value), throwing
 * CodeError('SNAPSHOT_INVALID') that names `source` for another schema_version, prototype-polluting
 * keys or malformed fields, in that order.
 */
export function parseStoredDocument<T>(kind: StoredDocumentKind<T>, raw: unknown, source: string): T {
  rejectUnsupportedVersion(kind, raw, source);
  const forbidden = findForbiddenKey(raw);
  if (forbidden !== undefined) {
    throw new CodeError(
      'SNAPSHOT_INVALID',
      `invalid ${kind.name} in ${source}: forbidden key "${forbidden.key}" at ${forbidden.path}`,
      {
        source,
        issues: [{ path: forbidden.path, message: `forbidden key "${forbidden.key}"` }],
      },
    );
  }
  const result = kind.schema.safeParse(raw);
  if (result.success) return result.data;
  throw new CodeError(
    'SNAPSHOT_INVALID',
    `invalid ${kind.name} in ${source}: ${formatZodIssues(result.error, { max: MAX_REPORTED_ISSUES })}`,
    {
      source,
      issues: zodFieldIssues(result.error, undefined, MAX_REPORTED_ISSUES),
    },
  );
}

function rejectUnsupportedVersion(kind: StoredDocumentKind<unknown>, raw: unknown, source: string): void {
  if (typeof raw !== 'object' || raw === null || !Object.hasOwn(raw, 'schema_version')) return;
  const version: unknown = (raw as { schema_version?: unknown }).schema_version;
  if (version === kind.version) return;
  throw new CodeError(
    'SNAPSHOT_INVALID',
    `unsupported ${kind.name} schema_version ${describeVersion(version)} in ${source}; this server reads version ${kind.version}`,
    { source, schemaVersion: typeof version === 'number' || typeof version === 'string' ? version : null },
  );
}

function describeVersion(version: unknown): string {
  if (typeof version === 'number') return String(version);
  if (typeof version === 'string') return JSON.stringify(version);
  if (version === null) return 'null';
  return `of type ${typeof version}`;
}
