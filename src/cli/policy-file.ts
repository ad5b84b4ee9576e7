import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { formatZodIssues, zodFieldProblems } from '../protocol/format-zod-issues.js';
import { ConfirmationPolicySchema, PermissionPolicySchema } from '../protocol/governance.js';
import { UsageError } from './usage-error.js';

/** A `--policy FILE`: the session's permissionPolicy and, optionally, its confirmationPolicy (the SessionOptions names). */
export const PolicyFileSchema = z
  .object({ permissionPolicy: PermissionPolicySchema, confirmationPolicy: ConfirmationPolicySchema.optional() })
  .strict();

/** The session options a policy file gives, as the file wrote them (the server applies the defaults). */
export type PolicyOptions = z.input<typeof PolicyFileSchema>;

/** Read and check a policy file; a missing file, bad JSON or a bad field is a UsageError naming the file, its line and the field. */
export function readPolicyFile(path: string, cwd: string, command: string): PolicyOptions {
  const full = resolve(cwd, path);
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new UsageError(`--policy ${path}: ${reason}`, command);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // Node 20 names the offset ("... in JSON at position 42") or none ("Unexpected end of JSON input"): say where.
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message)?.[1];
    const offset = position !== undefined ? Number(position) : /end of JSON/.test(message) ? text.length : undefined;
    const where = offset !== undefined ? `:${lineColumn(text, offset)}` : '';
    throw new UsageError(`--policy ${path}${where}: ${message.replace(/ \(line \d+ column \d+\)$/, '')}`, command);
  }
  const parsed = PolicyFileSchema.safeParse(json);
  if (!parsed.success) {
    const offset = offsetOfKey(text, zodFieldProblems(parsed.error)[0]?.segments ?? []);
    const where = offset !== undefined ? `:${lineColumn(text, offset)}` : '';
    throw new UsageError(`--policy ${path}${where}: ${formatZodIssues(parsed.error)}`, command);
  }
  return json as PolicyOptions;
}

/** "line:column" (1-based) of a character offset. */
function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
}

/**
 * The offset of the key a zod issue's path ends at (each key looked for as `"key":` after the one before it; array
 * indexes skipped), or undefined for the root or a key not found as written (e.g. with escapes).
 */
function offsetOfKey(text: string, path: readonly PropertyKey[]): number | undefined {
  let from = 0;
  let found: number | undefined;
  for (const key of path) {
    if (typeof key !== 'string') continue;
    const pattern = new RegExp(`${JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:`, 'g');
    pattern.lastIndex = from;
    const match = pattern.exec(text);
    if (!match) return found;
    found = match.index;
    from = match.index + match[0].length;
  }
  return found;
}
