import { CodeError } from '../errors.js';
import { SessionSnapshotV1Schema, type SessionSnapshotV1 } from '../protocol/session-snapshot.js';

/** The snapshot schema version this server reads and writes. */
export const SNAPSHOT_SCHEMA_VERSION = 1;

// Own keys that could rewrite a prototype when a later merge or zod record copies them.
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

// How many failing field paths an error message names; the rest are only counted.
const MAX_REPORTED_ISSUES = 5;

/**
 * Validate untrusted snapshot data (parsed JSON or an in-memory value) and return a SessionSnapshotV1,
 * throwing CodeError('SNAPSHOT_INVALID') that names `source` for a future version, malformed fields or
 * prototype-polluting keys.
 */
export function parseSnapshot(raw: unknown, source: string): SessionSnapshotV1 {
  rejectUnsupportedVersion(raw, source);
  rejectForbiddenKeys(raw, source);
  const result = SessionSnapshotV1Schema.safeParse(raw);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
  const named = issues
    .slice(0, MAX_REPORTED_ISSUES)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join('; ');
  const more = issues.length > MAX_REPORTED_ISSUES ? ` (and ${issues.length - MAX_REPORTED_ISSUES} more)` : '';
  throw new CodeError('SNAPSHOT_INVALID', `invalid snapshot in ${source}: ${named}${more}`, {
    source,
    issues: issues.slice(0, MAX_REPORTED_ISSUES),
  });
}

function rejectUnsupportedVersion(raw: unknown, source: string): void {
  if (!isRecord(raw) || !Object.hasOwn(raw, 'schema_version')) return;
  const version: unknown = raw.schema_version;
  if (version === SNAPSHOT_SCHEMA_VERSION) return;
  const shown = describeVersion(version);
  throw new CodeError(
    'SNAPSHOT_INVALID',
    `unsupported snapshot schema_version ${shown} in ${source}; this server reads version ${SNAPSHOT_SCHEMA_VERSION}`,
    { source, schemaVersion: typeof version === 'number' || typeof version === 'string' ? version : null },
  );
}

// Iterative walk so a deeply nested document cannot overflow the stack; `seen` tolerates cycles in
// in-memory values (JSON never has them).
function rejectForbiddenKeys(raw: unknown, source: string): void {
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: raw, path: [] }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: PropertyKey[] };
    if (!isRecord(value) || seen.has(value)) continue;
    seen.add(value);
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key !== 'string') continue;
      const childPath = [...path, Array.isArray(value) ? Number(key) : key];
      if (FORBIDDEN_KEYS.has(key) && !Array.isArray(value)) {
        throw new CodeError('SNAPSHOT_INVALID', `invalid snapshot in ${source}: forbidden key "${key}" at ${formatPath(childPath)}`, {
          source,
          issues: [{ path: formatPath(childPath), message: `forbidden key "${key}"` }],
        });
      }
      if (Array.isArray(value) && key === 'length') continue;
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      // Accessors are never produced by JSON; reading them could run code, so only plain data is walked.
      if (descriptor !== undefined && 'value' in descriptor) stack.push({ value: descriptor.value, path: childPath });
    }
  }
}

function describeVersion(version: unknown): string {
  if (typeof version === 'number') return String(version);
  if (typeof version === 'string') return JSON.stringify(version);
  if (version === null) return 'null';
  return `of type ${typeof version}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}
