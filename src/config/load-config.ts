import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { zodFieldProblems } from '../protocol/format-zod-issues.js';
import { CodeConfigSchema, type CodeConfig } from './code-config.js';
import { HclParseError } from './hcl-parse-error.js';
import { formatPath, parseHcl, parseJsonWithLines, setOwn, type HclValue } from './hcl-parser.js';
import { normalizeConfigKeys } from './normalize-keys.js';
import { applySandboxEnv } from './sandbox-env.js';

/** Where loadConfig reads from: the process environment, the directory relative paths resolve against, and an optional file or inline ACL text. */
export interface LoadConfigOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  configPath?: string;
  /** ACL text given inline (wins over A3S_CONFIG_TEXT); a path as well is an error. */
  configText?: string;
}

/** The source name problems in inline ACL text are reported under. */
export const CONFIG_TEXT_SOURCE = 'A3S_CONFIG_TEXT';

/** One configuration problem: its source (a file or an env variable), the line when known, the field path and what is wrong. */
export interface ConfigProblem {
  source: string;
  line?: number;
  column?: number;
  path?: string;
  message: string;
}

/** Formats one problem as `<source>:<line>: <field.path>: <message>` (line and path only when known). */
export function formatConfigProblem(problem: ConfigProblem): string {
  const line = problem.line === undefined ? '' : `:${problem.line}${problem.column === undefined ? '' : `:${problem.column}`}`;
  const field = problem.path === undefined || problem.path === '' ? '' : `${problem.path}: `;
  return `${problem.source}${line}: ${field}${problem.message}`;
}

/** Formats a list of problems as the multi-line message of a ConfigError. */
export function formatConfigError(problems: readonly ConfigProblem[]): string {
  const head = `invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):`;
  return [head, ...problems.map((p) => `  ${formatConfigProblem(p)}`)].join('\n');
}

/** Every problem found while loading the configuration, listed in one message. */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(formatConfigError(problems));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

const DEFAULTS_SOURCE = '(defaults)';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads an env variable, treating an empty value as unset (compose files often pass empty strings). */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

async function readConfigFile(file: string, viaEnv: boolean): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const origin = viaEnv ? ' (named by A3S_CONFIG)' : '';
    const message = code === 'ENOENT' ? `config file not found${origin}` : `cannot read config file${origin}: ${(err as Error).message}`;
    throw new ConfigError([{ source: file, message }]);
  }
}

function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv): { value: HclValue; lines: Map<string, number> } {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const json = path.extname(file).toLowerCase() === '.json';
  try {
    if (!json) return parseHcl(source, { env });
    const parsed = parseJsonWithLines(source);
    // JSON.parse stays the authority on what JSON is; our parser only adds line numbers and duplicate-key checks.
    JSON.parse(source);
    return parsed;
  } catch (err) {
    if (err instanceof HclParseError) throw new ConfigError([{ source: file, line: err.line, column: err.column, message: err.reason }]);
    throw new ConfigError([{ source: file, message: `invalid JSON: ${(err as Error).message}` }]);
  }
}

/** Parses inline ACL text (A3S_CONFIG_TEXT); JSON is not accepted inline, as in the seed's Agent.create. */
function parseInlineText(text: string, env: NodeJS.ProcessEnv): { value: HclValue; lines: Map<string, number> } {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (source.trimStart().startsWith('{')) {
    throw new ConfigError([{ source: CONFIG_TEXT_SOURCE, line: 1, message: 'holds JSON; inline configuration is ACL text (write JSON to a .json file and name it with A3S_CONFIG)' }]);
  }
  try {
    return parseHcl(source, { env });
  } catch (err) {
    if (err instanceof HclParseError) throw new ConfigError([{ source: CONFIG_TEXT_SOURCE, line: err.line, column: err.column, message: err.reason }]);
    throw err;
  }
}

/** Tracks where each value came from so a problem can name its file line or env variable. */
class Provenance {
  readonly envSources = new Map<string, string>();

  constructor(
    readonly file: string | undefined,
    readonly lines: Map<string, number>,
  ) {}

  /** Marks `segments` (and everything below) as coming from env variable `name`. */
  fromEnv(segments: readonly (string | number)[], name: string): void {
    const prefix = formatPath(segments);
    for (const key of [...this.lines.keys(), ...this.envSources.keys()]) {
      if (key === prefix || key.startsWith(`${prefix}.`) || key.startsWith(`${prefix}[`)) {
        this.lines.delete(key);
        this.envSources.delete(key);
      }
    }
    this.envSources.set(prefix, name);
  }

  /** The source and line of the closest recorded ancestor of a field path. */
  locate(segments: readonly PropertyKey[]): { source: string; line?: number } {
    for (let n = segments.length; n > 0; n--) {
      const key = formatPath(segments.slice(0, n));
      const envName = this.envSources.get(key);
      if (envName !== undefined) return { source: envName };
      const line = this.lines.get(key);
      if (line !== undefined && this.file !== undefined) return { source: this.file, line };
    }
    return { source: this.file ?? DEFAULTS_SOURCE };
  }

  problem(segments: readonly PropertyKey[], message: string): ConfigProblem {
    return { ...this.locate(segments), path: formatPath(segments), message };
  }
}

/** Applies env overlays (env wins over the file) onto the normalised tree, recording provenance and problems. */
function applyEnv(data: Record<string, unknown>, env: NodeJS.ProcessEnv, prov: Provenance, problems: ConfigProblem[]): void {
  const set = (key: string, value: unknown, name: string): void => {
    setOwn(data, key, value);
    prov.fromEnv([key], name);
  };
  for (const [name, field] of [['OPENAI_API_KEY', 'apiKey'], ['OPENAI_BASE_URL', 'baseUrl']] as const) {
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
  const strings = [['A3S_MODEL', 'defaultModel'], ['A3S_DATA_DIR', 'dataDir'], ['A3S_HOST', 'host'], ['A3S_LOG_LEVEL', 'logLevel'], ['A3S_STORAGE_BACKEND', 'storageBackend'], ['REDIS_URL', 'redisUrl'], ['A3S_REDIS_KEY_PREFIX', 'redisKeyPrefix'], ['A3S_NODE_ID', 'nodeId'], ['A3S_ADVERTISE_URL', 'advertiseUrl']] as const;
  for (const [name, field] of strings) {
    const value = envValue(env, name);
    if (value !== undefined) set(field, value, name);
  }
  const port = envValue(env, 'A3S_PORT');
  if (port !== undefined) {
    if (/^[0-9]{1,5}$/.test(port.trim()) && Number(port) <= 65535) set('port', Number(port), 'A3S_PORT');
    else problems.push({ source: 'A3S_PORT', path: 'port', message: `must be an integer 0-65535, got ${JSON.stringify(port)}` });
  }
  // Comma-separated lists; an empty item is dropped.
  const lists = [['A3S_WORKSPACE_ROOTS', 'workspaceRoots'], ['A3S_ALLOWED_HOSTS', 'allowedHosts'], ['A3S_ALLOWED_ORIGINS', 'allowedOrigins']] as const;
  for (const [name, key] of lists) {
    const value = envValue(env, name);
    if (value !== undefined) set(key, value.split(',').map((item) => item.trim()).filter((item) => item !== ''), name);
  }
  const clusterNodes = envValue(env, 'REDIS_CLUSTER_NODES');
  if (clusterNodes !== undefined) {
    if (data.redis === undefined) set('redis', {}, 'REDIS_CLUSTER_NODES');
    if (isPlainObject(data.redis)) {
      setOwn(data.redis, 'cluster', clusterNodes.split(',').map((item) => item.trim()).filter((item) => item !== ''));
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
  const fields = [['A3S_CLUSTER_SECRET', 'secret'], ['A3S_CLUSTER_SECRET_FILE', 'secretFile'], ['A3S_CLUSTER_SECRET_ID', 'secretId'], ['A3S_CLUSTER_PEER_URLS', 'peerUrls']] as const;
  for (const [name, field] of fields) {
    const value = envValue(env, name);
    if (value === undefined) continue;
    if (data.cluster === undefined) setOwn(data, 'cluster', {});
    const cluster = data.cluster;
    if (!isPlainObject(cluster)) continue; // the schema reports the bad cluster value
    // The environment's secret replaces the file's choice of secret or secret file.
    if (field === 'secret') delete cluster.secretFile;
    if (field === 'secretFile') delete cluster.secret;
    setOwn(cluster, field, field === 'peerUrls' ? value.split(',').map((item) => item.trim()).filter((item) => item !== '') : value);
    prov.fromEnv(['cluster', field], name);
  }
}

function applyEnvTokens(data: Record<string, unknown>, text: string, prov: Provenance, problems: ConfigProblem[]): void {
  const shape = 'a JSON array of {"token","principal","tenantId","scopes"} objects';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    problems.push({ source: 'A3S_API_TOKENS', path: 'apiTokens', message: `not valid JSON (${(err as Error).message}); expected ${shape}` });
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

/** The seed's `llm_api_timeout_ms` is the timeout of every provider that sets none. */
function applyLlmApiTimeout(data: Record<string, unknown>, prov: Provenance): void {
  const timeout = data.llmApiTimeoutMs;
  if (typeof timeout !== 'number' || !isPlainObject(data.providers)) return;
  const line = prov.lines.get('llmApiTimeoutMs');
  for (const [name, provider] of Object.entries(data.providers)) {
    if (!isPlainObject(provider) || Object.hasOwn(provider, 'timeoutMs')) continue;
    setOwn(provider, 'timeoutMs', timeout);
    if (line !== undefined) prov.lines.set(formatPath(['providers', name, 'timeoutMs']), line);
  }
}

/** The seed's `project_doc_max_bytes` (when not 0) is our `limits.agentsMdBytes`; setting both is a conflict. */
function applyProjectDocMaxBytes(data: Record<string, unknown>, prov: Provenance, problems: ConfigProblem[]): void {
  const bytes = data.projectDocMaxBytes;
  if (typeof bytes !== 'number' || bytes === 0) return;
  if (data.limits === undefined) setOwn(data, 'limits', {});
  const limits = data.limits;
  if (!isPlainObject(limits)) return;
  if (Object.hasOwn(limits, 'agentsMdBytes')) {
    problems.push(prov.problem(['projectDocMaxBytes'], 'both project_doc_max_bytes and limits.agents_md_bytes are set; set one of them'));
    return;
  }
  setOwn(limits, 'agentsMdBytes', bytes);
}

/** If providers are configured, defaultModel must name one of them. */
function checkDefaultModel(data: Record<string, unknown>, prov: Provenance): ConfigProblem | undefined {
  const model = data.defaultModel === undefined ? CodeConfigSchema.shape.defaultModel.parse(undefined) : data.defaultModel;
  if (typeof model !== 'string' || !isPlainObject(data.providers)) return undefined;
  const names = Object.keys(data.providers);
  const slash = model.indexOf('/');
  if (names.length === 0 || slash <= 0) return undefined;
  const provider = model.slice(0, slash);
  if (names.includes(provider)) return undefined;
  return prov.problem(['defaultModel'], `provider "${provider}" of "${model}" is not configured (configured: ${names.join(', ')})`);
}

function resolvePaths(config: CodeConfig, cwd: string): CodeConfig {
  const dataDir = path.resolve(cwd, config.dataDir);
  return {
    ...config,
    dataDir,
    sessionsDir: path.resolve(cwd, config.sessionsDir ?? path.join(dataDir, 'sessions')),
    workspaceRoots: (config.workspaceRoots ?? [cwd]).map((root) => path.resolve(cwd, root)),
    sharedWorkspaceRoots: config.sharedWorkspaceRoots.map((root) => path.resolve(cwd, root)),
  };
}

/**
 * Loads the server configuration: a file (`configPath`, else `A3S_CONFIG`; `.json` is JSON, anything else
 * ACL/HCL with `env()`) or inline ACL text (`configText`, else `A3S_CONFIG_TEXT`; a path and text together
 * are an error), then env overlays that win over the file (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
 * `A3S_MODEL`, `A3S_DATA_DIR`, `A3S_HOST`, `A3S_PORT`, `A3S_API_TOKENS`, `A3S_WORKSPACE_ROOTS`, `A3S_ALLOWED_HOSTS`, `A3S_ALLOWED_ORIGINS`,
 * `A3S_LOG_LEVEL`, `A3S_STORAGE_BACKEND`, `REDIS_URL`, `REDIS_CLUSTER_NODES` (comma-separated), `A3S_REDIS_KEY_PREFIX`, `A3S_NODE_ID`, `A3S_ADVERTISE_URL`, `A3S_CLUSTER_SECRET`, `A3S_CLUSTER_SECRET_FILE`, `A3S_CLUSTER_SECRET_ID`, `A3S_CLUSTER_PEER_URLS`, `A3S_SANDBOX_<FIELD>` for each `sandbox` field (src/config/sandbox-env.ts); empty values count as unset), then CodeConfigSchema.
 * Relative `dataDir`, `sessionsDir` and `workspaceRoots` resolve against `cwd`, also when they come from a
 * file (not against the file's directory); `workspaceRoots` defaults to `[cwd]` and `sessionsDir` to
 * `<dataDir>/sessions`. Throws one ConfigError listing every problem (a syntax error stops at once).
 */
export async function loadConfig(options: LoadConfigOptions): Promise<CodeConfig> {
  const { env, cwd } = options;
  const configPath = options.configPath ?? envValue(env, 'A3S_CONFIG');
  const configText = options.configText ?? envValue(env, CONFIG_TEXT_SOURCE);
  if (configPath !== undefined && configText !== undefined) {
    const pathSource = options.configPath === undefined ? 'A3S_CONFIG' : '--config';
    const textSource = options.configText === undefined ? CONFIG_TEXT_SOURCE : 'configText';
    throw new ConfigError([{ source: textSource, message: `both ${textSource} (inline ACL text) and ${pathSource} (a config file) are set; set only one of them` }]);
  }
  let raw: HclValue = {};
  let rawLines = new Map<string, number>();
  let file: string | undefined;
  if (configPath !== undefined) {
    file = path.resolve(cwd, configPath);
    const text = await readConfigFile(file, options.configPath === undefined);
    ({ value: raw, lines: rawLines } = parseConfigText(text, file, env));
  } else if (configText !== undefined) {
    file = CONFIG_TEXT_SOURCE;
    ({ value: raw, lines: rawLines } = parseInlineText(configText, env));
  }
  const normalized = normalizeConfigKeys(raw, rawLines);
  const prov = new Provenance(file, normalized.lines);
  const problems: ConfigProblem[] = normalized.problems.map((p) => ({ source: file ?? DEFAULTS_SOURCE, line: p.line, path: p.path, message: p.message }));
  const data = normalized.value;
  applyEnv(data, env, prov, problems);
  applyLlmApiTimeout(data, prov);
  applyProjectDocMaxBytes(data, prov, problems);
  const result = CodeConfigSchema.safeParse(data);
  // The one wording of zod issues; the path in the config's own syntax, so it finds its file line.
  if (!result.success) for (const { segments, message } of zodFieldProblems(result.error)) problems.push(prov.problem(segments, message));
  const modelProblem = checkDefaultModel(data, prov);
  if (modelProblem !== undefined) problems.push(modelProblem);
  if (problems.length > 0 || !result.success) {
    // File problems first, in line order, then env and default problems; the sort is stable.
    const rank = (p: ConfigProblem): number => (p.source === file ? (p.line ?? Number.MAX_SAFE_INTEGER) : Number.POSITIVE_INFINITY);
    throw new ConfigError([...problems].sort((a, b) => (rank(a) === rank(b) ? 0 : rank(a) < rank(b) ? -1 : 1)));
  }
  return resolvePaths(result.data, cwd);
}
