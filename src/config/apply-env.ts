import type { ConfigProblem } from './config-error.js';
import { setOwn } from './hcl-parser.js';
import { isPlainObject } from './is-plain-object.js';
import { normalizeConfigKeys } from './normalize-keys.js';
import type { Provenance } from './provenance.js';
import { applySandboxEnv } from './sandbox-env.js';

/** Reads an env variable, treating an empty value as unset (compose files often pass empty strings). */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Applies env overlays (env wins over the file) onto the normalised tree, recording provenance and problems. */
export function applyEnv(
  data: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  prov: Provenance,
  problems: ConfigProblem[],
): void {
  const set = (key: string, value: unknown, name: string): void => {
    setOwn(data, key, value);
    prov.fromEnv([key], name);
  };
  for (const [name, field] of [
    ['OPENAI_API_KEY', 'apiKey'],
    ['OPENAI_BASE_URL', 'baseUrl'],
  ] as const) {
    const value = envValue(env, name);
    if (value === undefined) continue;
    if (data.providers === undefined) set('providers', {}, name);
    const providers = data.providers;
    if (!isPlainObject(providers)) continue; // the schema reports the bad providers value
    if (!Object.hasOwn(providers, 'openai')) {
      setOwn(providers, 'openai', {});
      prov.fromEnv(['providers', 'openai'], name);
    }
    const openai = providers.openai;
    if (!isPlainObject(openai)) continue;
    setOwn(openai, field, value);
    prov.fromEnv(['providers', 'openai', field], name);
    if (field === 'baseUrl' && URL.canParse(value)) {
      // OPENAI_BASE_URL keeps the openai SDK's meaning: it includes `/v1`, and only `/chat/completions` follows.
      delete openai.chatCompletionsPath;
      setOwn(openai, 'chatCompletionsUrl', `${value.replace(/\/+$/, '')}/chat/completions`);
      prov.fromEnv(['providers', 'openai', 'chatCompletionsUrl'], name);
    }
  }
  const strings = [
    ['A3S_MODEL', 'defaultModel'],
    ['A3S_DATA_DIR', 'dataDir'],
    ['A3S_CHANGES_DIR', 'changesDir'],
    ['A3S_HOST', 'host'],
    ['A3S_LOG_LEVEL', 'logLevel'],
    ['A3S_STORAGE_BACKEND', 'storageBackend'],
    ['REDIS_URL', 'redisUrl'],
    ['A3S_REDIS_KEY_PREFIX', 'redisKeyPrefix'],
    ['A3S_NODE_ID', 'nodeId'],
    ['A3S_ADVERTISE_URL', 'advertiseUrl'],
  ] as const;
  for (const [name, field] of strings) {
    const value = envValue(env, name);
    if (value !== undefined) set(field, value, name);
  }
  const port = envValue(env, 'A3S_PORT');
  if (port !== undefined) {
    if (/^[0-9]{1,5}$/.test(port.trim()) && Number(port) <= 65535) set('port', Number(port), 'A3S_PORT');
    else
      problems.push({
        source: 'A3S_PORT',
        path: 'port',
        message: `must be an integer 0-65535, got ${JSON.stringify(port)}`,
      });
  }
  // Comma-separated lists; an empty item is dropped.
  const lists = [
    ['A3S_WORKSPACE_ROOTS', 'workspaceRoots'],
    ['A3S_ALLOWED_HOSTS', 'allowedHosts'],
    ['A3S_ALLOWED_ORIGINS', 'allowedOrigins'],
  ] as const;
  for (const [name, key] of lists) {
    const value = envValue(env, name);
    if (value !== undefined)
      set(
        key,
        value
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== ''),
        name,
      );
  }
  const clusterNodes = envValue(env, 'REDIS_CLUSTER_NODES');
  if (clusterNodes !== undefined) {
    if (data.redis === undefined) set('redis', {}, 'REDIS_CLUSTER_NODES');
    if (isPlainObject(data.redis)) {
      setOwn(
        data.redis,
        'cluster',
        clusterNodes
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== ''),
      );
      prov.fromEnv(['redis', 'cluster'], 'REDIS_CLUSTER_NODES');
    }
  }
  applyClusterEnv(data, env, prov);
  applySandboxEnv(env, { data, problems, fromEnv: (segments, name) => prov.fromEnv(segments, name) });
  const tokens = envValue(env, 'A3S_API_TOKENS');
  if (tokens !== undefined) applyEnvTokens(data, tokens, prov, problems);
}

/** `A3S_CLUSTER_SECRET`, `A3S_CLUSTER_SECRET_FILE`, `A3S_CLUSTER_SECRET_ID` and `A3S_CLUSTER_PEER_URLS` (comma-separated) into `cluster`. */
function applyClusterEnv(data: Record<string, unknown>, env: NodeJS.ProcessEnv, prov: Provenance): void {
  const fields = [
    ['A3S_CLUSTER_SECRET', 'secret'],
    ['A3S_CLUSTER_SECRET_FILE', 'secretFile'],
    ['A3S_CLUSTER_SECRET_ID', 'secretId'],
    ['A3S_CLUSTER_PEER_URLS', 'peerUrls'],
  ] as const;
  for (const [name, field] of fields) {
    const value = envValue(env, name);
    if (value === undefined) continue;
    if (data.cluster === undefined) setOwn(data, 'cluster', {});
    const cluster = data.cluster;
    if (!isPlainObject(cluster)) continue; // the schema reports the bad cluster value
    // The environment's secret replaces the file's choice of secret or secret file.
    if (field === 'secret') delete cluster.secretFile;
    if (field === 'secretFile') delete cluster.secret;
    setOwn(
      cluster,
      field,
      field === 'peerUrls'
        ? value
            .split(',')
            .map((item) => item.trim())
            .filter((item) => item !== '')
        : value,
    );
    prov.fromEnv(['cluster', field], name);
  }
}

function applyEnvTokens(
  data: Record<string, unknown>,
  text: string,
  prov: Provenance,
  problems: ConfigProblem[],
): void {
  const shape = 'a JSON array of {"token","principal","tenantId","scopes"} objects';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    problems.push({
      source: 'A3S_API_TOKENS',
      path: 'apiTokens',
      message: `not valid JSON (${(err as Error).message}); expected ${shape}`,
    });
    return;
  }
  if (!Array.isArray(parsed)) {
    problems.push({ source: 'A3S_API_TOKENS', path: 'apiTokens', message: `expected ${shape}` });
    return;
  }
  const normalized = normalizeConfigKeys({ apiTokens: parsed });
  for (const p of normalized.problems) problems.push({ source: 'A3S_API_TOKENS', path: p.path, message: p.message });
  setOwn(data, 'apiTokens', normalized.value.apiTokens);
  prov.fromEnv(['apiTokens'], 'A3S_API_TOKENS');
}
