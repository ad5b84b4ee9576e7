import type { CodeConfig } from './code-config.js';
import { UNUSED_SEED_KEYS } from './seed-config-keys.js';

/** A configuration key the server accepts but does not act on yet, or a setting that may not work, logged at warn when the server starts. */
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

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0']);

/** True when a provider's endpoint is on this host (a local OpenAI-compatible server may need no key). */
function isLocalEndpoint(url: string | undefined): boolean {
  if (url === undefined || !URL.canParse(url)) return false;
  const host = new URL(url).hostname;
  return LOCAL_HOSTS.has(host) || host.endsWith('.localhost');
}

/**
 * Providers with no API key (none in the config, none from OPENAI_API_KEY for `openai`, no Authorization
 * header): their requests go without credentials, which a hosted provider answers with 401 at the first run.
 * Not fatal, since a local OpenAI-compatible server needs no key; with no provider at all the default model
 * cannot run, which is named too.
 */
export function providerKeyWarnings(config: CodeConfig): ConfigWarning[] {
  const names = Object.keys(config.providers);
  if (names.length === 0) {
    return [
      {
        key: 'providers',
        message: `no provider is configured, so default_model "${config.defaultModel}" cannot run: set OPENAI_API_KEY (and OPENAI_BASE_URL) or a providers block`,
      },
    ];
  }
  const warnings: ConfigWarning[] = [];
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.apiKey !== undefined && provider.apiKey !== '') continue;
    if (Object.keys(provider.headers ?? {}).some((header) => header.toLowerCase() === 'authorization')) continue;
    const key = `providers.${name}.api_key`;
    const variable = name === 'openai' ? 'OPENAI_API_KEY' : `${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_API_KEY`;
    const how =
      name === 'openai'
        ? `set ${key} or the environment variable OPENAI_API_KEY`
        : `set ${key} (for example api_key = env("${variable}"))`;
    const local = isLocalEndpoint(provider.chatCompletionsUrl ?? provider.baseUrl);
    warnings.push({
      key,
      message: local
        ? `provider "${name}" has no API key (${how}); its endpoint is on this host, so this may be intended for a local server that needs none`
        : `provider "${name}" has no API key (${how}); its requests are sent without credentials and a hosted provider will answer 401`,
    });
  }
  return warnings;
}

/**
 * The seed keys a loaded configuration sets that this server accepts but does not use yet, and the providers
 * with no API key (providerKeyWarnings), in a stable order (top level first, then providers and their
 * models). Never fatal: a seed config loads unchanged.
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
  warnings.push(...providerKeyWarnings(config));
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
