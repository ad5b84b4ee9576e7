import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { formatZodIssues } from '../protocol/format-zod-issues.js';
import { ConfirmationPolicySchema, PermissionPolicySchema } from '../protocol/governance.js';
import { UsageError } from './usage-error.js';

/** A `--policy FILE`: the session's permissionPolicy and, optionally, its confirmationPolicy (the SessionOptions names). */
export const PolicyFileSchema = z
  .object({ permissionPolicy: PermissionPolicySchema, confirmationPolicy: ConfirmationPolicySchema.optional() })
  .strict();

/** The session options a policy file gives, as the file wrote them (the server applies the defaults). */
export type PolicyOptions = z.input<typeof PolicyFileSchema>;

/** Read and check a policy file; a missing file, bad JSON or a bad field is a UsageError naming the file and the field. */
export function readPolicyFile(path: string, cwd: string, command: string): PolicyOptions {
  const full = resolve(cwd, path);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(full, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new UsageError(`--policy ${path}: ${reason}`, command);
  }
  const parsed = PolicyFileSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`--policy ${path}: ${formatZodIssues(parsed.error)}`, command);
  return json as PolicyOptions;
}
