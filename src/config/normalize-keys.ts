import { ApiTokenSchema } from './api-token.js';
import { CodeConfigSchema } from './code-config.js';
import { LimitsSchema } from './limits-config.js';
import { LoopDefaultsSchema } from './loop-config.js';
import { WebhooksConfigSchema } from './webhook-config.js';
import { ModelConfigSchema, ProviderConfigSchema } from './provider-config.js';
import { formatPath, setOwn, type PathSegment } from './hcl-parser.js';
import { SEED_ROOT_ALIASES } from './seed-config-keys.js';

/** A problem found while normalising keys, such as both spellings of one key in the same object. */
export interface KeyProblem {
  path: string;
  line?: number;
  message: string;
}

/** The config tree with CodeConfig's camelCase keys, its line map re-keyed to match, and any problems. */
export interface NormalizedConfig {
  value: Record<string, unknown>;
  lines: Map<string, number>;
  problems: KeyProblem[];
}

// How keys below a point in the tree are treated: known fields (snake_case accepted), a map keyed by
// user-chosen names (kept verbatim), a list, a leaf (kept verbatim), or free-form settings (all camelised).
type Shape =
  | { kind: 'object'; fields: ReadonlyMap<string, Shape> }
  | { kind: 'map'; value: Shape }
  | { kind: 'list'; item: Shape }
  | { kind: 'leaf' }
  | { kind: 'free' };

const LEAF: Shape = { kind: 'leaf' };
const FREE: Shape = { kind: 'free' };

function fieldsOf(shape: Record<string, unknown>, overrides: Record<string, Shape> = {}): ReadonlyMap<string, Shape> {
  const fields = new Map<string, Shape>();
  for (const key of Object.keys(shape))
    fields.set(key, Object.hasOwn(overrides, key) ? (overrides[key] as Shape) : LEAF);
  return fields;
}

function objectShape(shape: Record<string, unknown>, overrides: Record<string, Shape> = {}): Shape {
  return { kind: 'object', fields: fieldsOf(shape, overrides) };
}

// Header names are user-chosen and kept verbatim.
const HEADERS: Shape = { kind: 'map', value: LEAF };
const MODEL = objectShape(ModelConfigSchema.shape, { limit: FREE, cost: FREE, modalities: FREE, headers: HEADERS });
const PROVIDER = objectShape(ProviderConfigSchema.shape, { models: { kind: 'map', value: MODEL }, headers: HEADERS });
const API_TOKEN = objectShape(ApiTokenSchema.shape);
const API_TOKENS: Shape = { kind: 'list', item: API_TOKEN };
const LOOP_FIELDS = new Set(Object.keys(LoopDefaultsSchema.shape));
const ROOT_FIELDS = fieldsOf(CodeConfigSchema.shape, {
  providers: { kind: 'map', value: PROVIDER },
  apiTokens: API_TOKENS,
  loop: objectShape(LoopDefaultsSchema.shape),
  limits: objectShape(LimitsSchema.shape),
  queue: FREE,
  defaultPermissionPolicy: FREE,
  defaultConfirmationPolicy: FREE,
  acpConfirmationPolicy: FREE,
  defaultBudget: FREE,
  hooks: { kind: 'list', item: FREE },
  commands: {
    kind: 'list',
    item: objectShape(
      { name: 0, description: 0, kind: 0, template: 0, url: 0, headers: 0, connectionId: 0, timeoutMs: 0, override: 0 },
      { headers: HEADERS },
    ),
  },
  tenantBudgets: { kind: 'map', value: FREE },
  tenantQuotas: { kind: 'map', value: FREE },
  defaultTenantQuota: FREE,
  retention: FREE,
  mcpServers: { kind: 'list', item: FREE },
  mcp: { kind: 'map', value: FREE },
  mcpIdleDisconnect: FREE,
  cluster: FREE,
  redis: FREE,
  budgetHost: FREE,
  outbound: FREE,
  // Tenant ids are user-chosen and kept verbatim.
  webhooks: objectShape(WebhooksConfigSchema.shape, { secrets: { kind: 'map', value: LEAF } }),
  web: FREE,
  sandbox: FREE,
  delegation: FREE,
  memory: FREE,
  taskScheduler: FREE,
  search: FREE,
  documentParser: FREE,
  autoDelegation: FREE,
  os: FREE,
  telemetry: FREE,
});

const SNAKE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

/** Converts a snake_case key to camelCase (`api_key` -> `apiKey`); other keys are returned unchanged. */
export function snakeToCamel(key: string): string {
  return SNAKE.test(key) ? key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()) : key;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface Ctx {
  rawLines: ReadonlyMap<string, number>;
  lines: Map<string, number>;
  problems: KeyProblem[];
}

function lineOf(ctx: Ctx, path: PathSegment[]): number | undefined {
  return ctx.rawLines.get(formatPath(path));
}

function at(line: number | undefined): string {
  return line === undefined ? '' : ` (line ${line})`;
}

/** Records `rawKey` as the source of `key`; a second source of the same key is a spelling conflict. */
function claim(
  ctx: Ctx,
  origin: Map<string, string>,
  key: string,
  rawKey: string,
  raw: PathSegment[],
  out: PathSegment[],
): boolean {
  const prev = origin.get(key);
  if (prev === undefined) {
    origin.set(key, rawKey);
    return true;
  }
  const first = lineOf(ctx, [...raw, prev]);
  const second = lineOf(ctx, [...raw, rawKey]);
  ctx.problems.push({
    path: formatPath([...out, key]),
    line: second ?? first,
    message: `both "${prev}"${at(first)} and "${rawKey}"${at(second)} are set; use one spelling`,
  });
  return false;
}

function walk(ctx: Ctx, value: unknown, shape: Shape, raw: PathSegment[], out: PathSegment[]): unknown {
  const line = lineOf(ctx, raw);
  if (line !== undefined) ctx.lines.set(formatPath(out), line);
  if (Array.isArray(value)) {
    const item = shape.kind === 'list' ? shape.item : shape.kind === 'free' ? FREE : LEAF;
    return value.map((v: unknown, i) => walk(ctx, v, item, [...raw, i], [...out, i]));
  }
  if (!isPlainObject(value)) return value;
  const result: Record<string, unknown> = {};
  if (shape.kind === 'object' || shape.kind === 'free') {
    const fields = shape.kind === 'object' ? shape.fields : null;
    const origin = new Map<string, string>();
    for (const [rawKey, v] of Object.entries(value)) {
      const camel = snakeToCamel(rawKey);
      // Unknown keys keep the user's spelling so the schema's error names the key as written.
      const key = fields === null || fields.has(camel) ? camel : rawKey;
      if (!claim(ctx, origin, key, rawKey, raw, out)) continue;
      const child = fields === null ? FREE : (fields.get(key) ?? LEAF);
      setOwn(result, key, walk(ctx, v, child, [...raw, rawKey], [...out, key]));
    }
    return result;
  }
  const child = shape.kind === 'map' ? shape.value : LEAF;
  for (const [key, v] of Object.entries(value)) setOwn(result, key, walk(ctx, v, child, [...raw, key], [...out, key]));
  return result;
}

/** Walks an api token list, accepting a single block (object) as a list of one. */
function walkTokens(ctx: Ctx, value: unknown, rawKey: string): unknown {
  if (!isPlainObject(value)) return walk(ctx, value, API_TOKENS, [rawKey], ['apiTokens']);
  const line = lineOf(ctx, [rawKey]);
  if (line !== undefined) ctx.lines.set('apiTokens', line);
  return [walk(ctx, value, API_TOKEN, [rawKey], ['apiTokens', 0])];
}

/** The CodeConfig field a top-level key names: its camelCase form, a seed alias, or the key as written. */
function rootKey(camel: string, rawKey: string, value: unknown): string {
  const field = Object.hasOwn(SEED_ROOT_ALIASES, camel) ? (SEED_ROOT_ALIASES[camel] as string) : camel;
  // The seed writes MCP servers as labelled blocks (`mcp_servers "name" {}`): those are our `mcp` map.
  if (field === 'mcpServers' && isPlainObject(value)) return 'mcp';
  return ROOT_FIELDS.has(field) ? field : rawKey;
}

/**
 * Converts a parsed config tree (HCL, JSON or env) to CodeConfig's camelCase keys, accepting both spellings,
 * keeping user-named map keys (providers, models) verbatim, moving top-level loop settings such as
 * `max_tool_rounds` into `loop`, and mapping `api_token` blocks onto `apiTokens`.
 */
export function normalizeConfigKeys(raw: unknown, rawLines: ReadonlyMap<string, number> = new Map()): NormalizedConfig {
  const ctx: Ctx = { rawLines, lines: new Map(), problems: [] };
  if (!isPlainObject(raw)) {
    ctx.problems.push({
      path: '',
      message: `the configuration must be an object, got ${Array.isArray(raw) ? 'an array' : raw === null ? 'null' : typeof raw}`,
    });
    return { value: {}, lines: ctx.lines, problems: ctx.problems };
  }
  const result: Record<string, unknown> = {};
  const origin = new Map<string, string>();
  const loopKeys: [string, string, unknown][] = [];
  for (const [rawKey, v] of Object.entries(raw)) {
    const camel = snakeToCamel(rawKey);
    if (!ROOT_FIELDS.has(camel) && LOOP_FIELDS.has(camel)) {
      loopKeys.push([rawKey, camel, v]);
      continue;
    }
    const key = rootKey(camel, rawKey, v);
    if (!claim(ctx, origin, key, rawKey, [], [])) continue;
    if (key === 'apiTokens') setOwn(result, key, walkTokens(ctx, v, rawKey));
    else setOwn(result, key, walk(ctx, v, ROOT_FIELDS.get(key) ?? LEAF, [rawKey], [key]));
  }
  // Loop settings may sit at top level (seed style) or in a `loop {}` block, but not both.
  for (const [rawKey, camel, v] of loopKeys) {
    if (result.loop === undefined) setOwn(result, 'loop', {});
    const loop = result.loop;
    const line = lineOf(ctx, [rawKey]);
    if (!isPlainObject(loop)) {
      ctx.problems.push({ path: 'loop', line, message: `"${rawKey}" is set at top level but loop is not a block` });
      continue;
    }
    if (Object.hasOwn(loop, camel)) {
      const first = ctx.lines.get(formatPath(['loop', camel]));
      ctx.problems.push({
        path: `loop.${camel}`,
        line,
        message: `"${rawKey}"${at(line)} is already set${at(first)}; set it once, at top level or in the loop block`,
      });
      continue;
    }
    setOwn(loop, camel, walk(ctx, v, LEAF, [rawKey], ['loop', camel]));
  }
  return { value: result, lines: ctx.lines, problems: ctx.problems };
}
