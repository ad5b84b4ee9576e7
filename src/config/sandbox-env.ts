import type { CodeConfig } from './code-config.js';
import { setOwn } from './hcl-parser.js';

/** How an env variable's text becomes a `sandbox` value: as is (the schema checks it), an integer, or a comma-separated list. */
type EnvKind = 'string' | 'integer' | 'list';

/**
 * One env variable per `sandbox` field, `A3S_SANDBOX_<FIELD>` in upper snake case. Keyed by every field of the block,
 * so a new sandbox key cannot be added without its variable.
 */
const SANDBOX_ENV_FIELDS: { readonly [K in keyof CodeConfig['sandbox']]-?: EnvKind } = {
  mode: 'string',
  hostDirect: 'string',
  network: 'string',
  pidsMax: 'integer',
  memoryMb: 'integer',
  cpuSeconds: 'integer',
  addressSpaceMb: 'integer',
  readOnlyPaths: 'list',
  runAs: 'string',
  cgroups: 'string',
};

/** The variable of a sandbox field: `readOnlyPaths` is `A3S_SANDBOX_READ_ONLY_PATHS`. */
export function sandboxEnvName(field: string): string {
  return `A3S_SANDBOX_${field.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}`;
}

/** Every sandbox variable with its field and kind (for docs and tests). */
export const SANDBOX_ENV: readonly { readonly name: string; readonly field: string; readonly kind: EnvKind }[] =
  Object.entries(SANDBOX_ENV_FIELDS).map(([field, kind]) => ({ name: sandboxEnvName(field), field, kind }));

/** What the loader lends: the tree being built, provenance for a field set from env, and the problem list. */
export interface SandboxEnvTarget {
  readonly data: Record<string, unknown>;
  /** Record that `segments` now come from env variable `name` (problems then name it). */
  fromEnv(segments: readonly (string | number)[], name: string): void;
  readonly problems: { source: string; path?: string; message: string }[];
}

/**
 * Apply the `A3S_SANDBOX_*` variables onto the `sandbox` block: each set (non-empty) variable replaces its one field,
 * the file's other sandbox fields stay (as the `A3S_CLUSTER_*` variables do for `cluster`). Integers are checked
 * here; enums, ranges and paths by the schema, whose problems then name the variable.
 */
export function applySandboxEnv(env: NodeJS.ProcessEnv, target: SandboxEnvTarget): void {
  for (const { name, field, kind } of SANDBOX_ENV) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    let value: unknown = text;
    if (kind === 'integer') {
      if (!/^[0-9]{1,15}$/.test(text.trim())) {
        target.problems.push({
          source: name,
          path: `sandbox.${field}`,
          message: `must be a whole number, got ${JSON.stringify(text)}`,
        });
        continue;
      }
      value = Number(text.trim());
    } else if (kind === 'list') {
      value = text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    } else {
      value = text.trim();
    }
    if (target.data.sandbox === undefined) setOwn(target.data, 'sandbox', {});
    const sandbox = target.data.sandbox;
    if (typeof sandbox !== 'object' || sandbox === null || Array.isArray(sandbox)) continue; // the schema reports the bad sandbox value
    setOwn(sandbox as Record<string, unknown>, field, value);
    target.fromEnv(['sandbox', field], name);
  }
}
