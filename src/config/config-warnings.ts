import type { CodeConfig } from './code-config.js';
import { UNUSED_SEED_KEYS } from './seed-config-keys.js';

/** A configuration key the server accepted but does not act on yet, logged at warn when the server starts. */
export interface ConfigWarning {
  /** The key as the seed spells it, with its path (`task_scheduler`, `providers.openai.session_id_header`). */
  key: string;
  message: string;
}

const MODEL_KEYS_NOT_USED = [
  ['apiKey', 'api_key'],
  ['baseUrl', 'base_url'],
  ['headers', 'headers'],
  ['sessionIdHeader', 'session_id_header'],
] as const;

function isSet(value: unknown): boolean {
  return value !== undefined && !(Array.isArray(value) && value.length === 0);
}

/**
 * The seed keys a loaded configuration sets that this server accepts but does not use yet, in a stable
 * order (top level first, then providers and their models). Never fatal: a seed config loads unchanged.
 */
export function configWarnings(config: CodeConfig): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const record = config as unknown as Record<string, unknown>;
  for (const [field, key] of UNUSED_SEED_KEYS) {
    if (isSet(record[field]))
      warnings.push({
        key,
        message: `${key} is accepted for compatibility with A3S Code but not used by this server yet`,
      });
  }
  if (config.projectDocMaxBytes === 0) {
    warnings.push({
      key: 'project_doc_max_bytes',
      message: 'project_doc_max_bytes = 0 (no AGENTS.md) is not supported yet; limits.agents_md_bytes applies',
    });
  }
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.sessionIdHeader !== undefined) {
      const key = `providers.${name}.session_id_header`;
      warnings.push({ key, message: `${key} is accepted but not used yet; no session id header is sent` });
    }
    for (const [id, model] of Object.entries(provider.models)) {
      for (const [field, spelling] of MODEL_KEYS_NOT_USED) {
        if (model[field] === undefined) continue;
        const key = `providers.${name}.models.${id}.${spelling}`;
        warnings.push({ key, message: `${key} is accepted but not used yet; the provider's settings apply` });
      }
    }
  }
  return warnings;
}
