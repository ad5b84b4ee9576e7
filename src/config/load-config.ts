import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { zodFieldProblems } from '../protocol/format-zod-issues.js';
import { CodeConfigSchema, type CodeConfig } from './code-config.js';
import { defaultPolicyProblems } from './check-default-policy.js';
import { HclParseError } from './hcl-parse-error.js';
import { formatPath, parseHcl, parseJsonWithLines, setOwn, type HclValue } from './hcl-parser.js';
import { normalizeConfigKeys } from './normalize-keys.js';
import { applyEnv, envValue } from './apply-env.js';
import { ConfigError, type ConfigProblem } from './config-error.js';
import { isPlainObject } from './is-plain-object.js';
import { DEFAULTS_SOURCE, Provenance } from './provenance.js';

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

async function readConfigFile(file: string, viaEnv: boolean): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const origin = viaEnv ? ' (named by A3S_CONFIG)' : '';
    const message =
      code === 'ENOENT'
        ? `config file not found${origin}`
        : `cannot read config file${origin}: ${(err as Error).message}`;
    throw new ConfigError([{ source: file, message }]);
  }
}

function parseConfigText(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv,
): { value: HclValue; lines: Map<string, number> } {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const json = path.extname(file).toLowerCase() === '.json';
  try {
    if (!json) return parseHcl(source, { env });
    const parsed = parseJsonWithLines(source);
    // JSON.parse stays the authority on what JSON is; our parser only adds line numbers and duplicate-key checks.
    JSON.parse(source);
    return parsed;
  } catch (err) {
    if (err instanceof HclParseError)
      throw new ConfigError([{ source: file, line: err.line, column: err.column, message: err.reason }]);
    throw new ConfigError([{ source: file, message: `invalid JSON: ${(err as Error).message}` }]);
  }
}

/** Parses inline ACL text (A3S_CONFIG_TEXT); JSON is not accepted inline, as in the seed's Agent.create. */
function parseInlineText(text: string, env: NodeJS.ProcessEnv): { value: HclValue; lines: Map<string, number> } {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (source.trimStart().startsWith('{')) {
    throw new ConfigError([
      {
        source: CONFIG_TEXT_SOURCE,
        line: 1,
        message:
          'holds JSON; inline configuration is ACL text (write JSON to a .json file and name it with A3S_CONFIG)',
      },
    ]);
  }
  try {
    return parseHcl(source, { env });
  } catch (err) {
    if (err instanceof HclParseError)
      throw new ConfigError([{ source: CONFIG_TEXT_SOURCE, line: err.line, column: err.column, message: err.reason }]);
    throw err;
  }
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
    problems.push(
      prov.problem(
        ['projectDocMaxBytes'],
        'both project_doc_max_bytes and limits.agents_md_bytes are set; set one of them',
      ),
    );
    return;
  }
  setOwn(limits, 'agentsMdBytes', bytes);
}

/** If providers are configured, defaultModel must name one of them, and one of its model blocks when it declares any. */
function checkDefaultModel(data: Record<string, unknown>, prov: Provenance): ConfigProblem | undefined {
  const model =
    data.defaultModel === undefined ? CodeConfigSchema.shape.defaultModel.parse(undefined) : data.defaultModel;
  if (typeof model !== 'string' || !isPlainObject(data.providers)) return undefined;
  const names = Object.keys(data.providers);
  const slash = model.indexOf('/');
  if (names.length === 0 || slash <= 0) return undefined;
  const provider = model.slice(0, slash);
  if (!names.includes(provider))
    return prov.problem(
      ['defaultModel'],
      `provider "${provider}" of "${model}" is not configured (configured: ${names.join(', ')})`,
    );
  // A provider that declares model blocks serves those; one that declares none takes any model id.
  const models = (data.providers[provider] as Record<string, unknown> | undefined)?.models;
  if (!isPlainObject(models) || Object.keys(models).length === 0 || Object.hasOwn(models, model.slice(slash + 1)))
    return undefined;
  const declared = Object.entries(data.providers).flatMap(([name, settings]) =>
    isPlainObject(settings) && isPlainObject(settings.models)
      ? Object.keys(settings.models).map((id) => `${name}/${id}`)
      : [],
  );
  return prov.problem(
    ['defaultModel'],
    `"${model}" names no declared model block of provider "${provider}" (declared: ${declared.join(', ')})`,
  );
}

function resolvePaths(config: CodeConfig, cwd: string): CodeConfig {
  const dataDir = path.resolve(cwd, config.dataDir);
  return {
    ...config,
    dataDir,
    sessionsDir: path.resolve(cwd, config.sessionsDir ?? path.join(dataDir, 'sessions')),
    ...(config.changesDir !== undefined ? { changesDir: path.resolve(cwd, config.changesDir) } : {}),
    workspaceRoots: (config.workspaceRoots ?? [cwd]).map((root) => path.resolve(cwd, root)),
    sharedWorkspaceRoots: config.sharedWorkspaceRoots.map((root) => path.resolve(cwd, root)),
  };
}

/**
 * Loads the server configuration: a file (`configPath`, else `A3S_CONFIG`; `.json` is JSON, anything else
 * ACL/HCL with `env()`) or inline ACL text (`configText`, else `A3S_CONFIG_TEXT`; a path and text together
 * are an error), then env overlays that win over the file (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
 * `A3S_MODEL`, `A3S_DATA_DIR`, `A3S_CHANGES_DIR`, `A3S_HOST`, `A3S_PORT`, `A3S_API_TOKENS`, `A3S_WORKSPACE_ROOTS`, `A3S_ALLOWED_HOSTS`, `A3S_ALLOWED_ORIGINS`,
 * `A3S_LOG_LEVEL`, `A3S_STORAGE_BACKEND`, `REDIS_URL`, `REDIS_CLUSTER_NODES` (comma-separated), `A3S_REDIS_KEY_PREFIX`, `A3S_NODE_ID`, `A3S_ADVERTISE_URL`, `A3S_CLUSTER_SECRET`, `A3S_CLUSTER_SECRET_FILE`, `A3S_CLUSTER_SECRET_ID`, `A3S_CLUSTER_PEER_URLS`, `A3S_SANDBOX_<FIELD>` for each `sandbox` field (src/config/sandbox-env.ts); empty values count as unset), then CodeConfigSchema.
 * Relative `dataDir`, `sessionsDir`, `changesDir` and `workspaceRoots` resolve against `cwd`, also when they come from a
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
    throw new ConfigError([
      {
        source: textSource,
        message: `both ${textSource} (inline ACL text) and ${pathSource} (a config file) are set; set only one of them`,
      },
    ]);
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
  const problems: ConfigProblem[] = normalized.problems.map((p) => ({
    source: file ?? DEFAULTS_SOURCE,
    line: p.line,
    path: p.path,
    message: p.message,
  }));
  const data = normalized.value;
  applyEnv(data, env, prov, problems);
  applyLlmApiTimeout(data, prov);
  applyProjectDocMaxBytes(data, prov, problems);
  const result = CodeConfigSchema.safeParse(data);
  // The one wording of zod issues; the path in the config's own syntax, so it finds its file line.
  if (!result.success)
    for (const { segments, message } of zodFieldProblems(result.error)) problems.push(prov.problem(segments, message));
  const modelProblem = checkDefaultModel(data, prov);
  if (modelProblem !== undefined) problems.push(modelProblem);
  if (result.success) problems.push(...defaultPolicyProblems(result.data, prov));
  if (problems.length > 0 || !result.success) {
    // File problems first, in line order, then env and default problems; the sort is stable.
    const rank = (p: ConfigProblem): number =>
      p.source === file ? (p.line ?? Number.MAX_SAFE_INTEGER) : Number.POSITIVE_INFINITY;
    throw new ConfigError([...problems].sort((a, b) => (rank(a) === rank(b) ? 0 : rank(a) < rank(b) ? -1 : 1)));
  }
  return resolvePaths(result.data, cwd);
}
