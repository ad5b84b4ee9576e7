import { WebhookBodySchema } from '../protocol/webhooks.js';
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { ERROR_CATALOGUE, RUN_ERROR_CATALOGUE } from '../errors.js';
import { ErrorBodySchema } from '../protocol/http.js';
import { toolListEntry } from '../runtime/tools/tool-registry.js';
import { defaultDocRegistries, type DocRegistries } from './doc-registries.js';
import { operationIdOf, operationTagOf } from './openapi-operation-names.js';
import { admitsWork, isSessionScoped, type OpenApiOperation, type OpenApiRegistry } from './openapi-registry.js';

/** A JSON value as it appears in the generated document. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object in the generated document. */
type JsonObject = { [key: string]: Json };
type Io = 'input' | 'output';

/** Title, version and optional description of the generated document. */
export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

const METHOD_ORDER = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];
const COMPONENT_PREFIX = '#/components/schemas/';
const DEFS_PREFIX = '#/$defs/';

/** Canonical JSON text with sorted keys, used only to compare two schemas for equality. */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key] as Json)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function isObject(value: Json | undefined): value is JsonObject {
  return value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value);
}

/** Rewrite every `#/$defs/<id>` reference in a schema tree with `rename`. */
function rewriteRefs(value: Json, rename: (id: string) => string): Json {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, rename));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof item === 'string' && item.startsWith(DEFS_PREFIX)
        ? rename(item.slice(DEFS_PREFIX.length))
        : rewriteRefs(item, rename);
  }
  return out;
}

/**
 * Converts zod schemas to JSON Schema 2020-12 (the dialect of OpenAPI 3.1) and gathers every schema that
 * carries `.meta({id})` into shared components. zod extracts those into `$defs` per conversion; the
 * collector hoists them and points the references at `#/components/schemas/`. A schema whose input and
 * output forms differ (object defaults, stripped unknown keys) keeps its id for the input form and gets
 * `<id>Output` for the output form, so request and response shapes both stay exact.
 */
class SchemaCollector {
  private readonly defs: Record<Io, Map<string, Json>> = { input: new Map(), output: new Map() };
  private readonly pending: { io: Io; schema: Json; target: JsonObject; key: string }[] = [];

  /** Convert a schema now; its references are resolved by `finish`, written into `target[key]`. */
  convert(schema: z.ZodType, io: Io, target: JsonObject, key: string): void {
    this.pending.push({ io, schema: this.toJson(schema, io), target, key });
  }

  /** Convert a schema and return its (still unresolved) JSON form, for callers that take it apart. */
  toJson(schema: z.ZodType, io: Io): Json {
    const converted = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as JsonObject;
    const { $schema: _dialect, $defs, ...rest } = converted;
    if (isObject($defs)) {
      for (const [id, def] of Object.entries($defs)) {
        // zod names unregistered shared schemas __schemaN, which would collide across conversions.
        if (id.startsWith('__schema'))
          throw new Error('OpenAPI: a recursive schema without .meta({ id }) was found; give it an id');
        // OpenAPI component names allow only these characters; it also keeps JSON-pointer escaping out of refs.
        if (!/^[A-Za-z0-9._-]+$/.test(id)) throw new Error(`OpenAPI: schema id "${id}" is not a valid component name`);
        const seen = this.defs[io].get(id);
        if (seen !== undefined && canonical(seen) !== canonical(def))
          throw new Error(`OpenAPI: two different schemas share the id "${id}"`);
        this.defs[io].set(id, def);
      }
    }
    return rest;
  }

  /** Record an already converted fragment (for example one parameter's schema) for reference resolution. */
  place(io: Io, schema: Json, target: JsonObject, key: string): void {
    this.pending.push({ io, schema, target, key });
  }

  /** Resolve every reference and return the components, sorted by name. */
  finish(): JsonObject {
    const outputName = new Map<string, string>();
    for (const [id, def] of this.defs.output) {
      const input = this.defs.input.get(id);
      outputName.set(id, input !== undefined && canonical(input) !== canonical(def) ? `${id}Output` : id);
    }
    const rename: Record<Io, (id: string) => string> = {
      input: (id) => `${COMPONENT_PREFIX}${id}`,
      output: (id) => `${COMPONENT_PREFIX}${outputName.get(id) ?? id}`,
    };
    for (const item of this.pending) item.target[item.key] = rewriteRefs(item.schema, rename[item.io]);
    const components: JsonObject = {};
    for (const [id, def] of this.defs.input) components[id] = rewriteRefs(def, rename.input);
    for (const [id, def] of this.defs.output) components[outputName.get(id) ?? id] = rewriteRefs(def, rename.output);
    const sorted: JsonObject = {};
    for (const name of Object.keys(components).sort()) sorted[name] = components[name] as Json;
    return sorted;
  }
}

/** `/v1/sessions/:id` -> `/v1/sessions/{id}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Path or query parameters from a zod object schema. */
function parameters(collector: SchemaCollector, schema: z.ZodType, where: 'path' | 'query'): JsonObject[] {
  const json = collector.toJson(schema, 'input');
  if (!isObject(json) || !isObject(json.properties))
    throw new Error(`OpenAPI: ${where} parameters must be a plain zod object schema`);
  const required = Array.isArray(json.required) ? json.required : [];
  return Object.entries(json.properties).map(([name, property]) => {
    const parameter: JsonObject = { name, in: where, required: where === 'path' || required.includes(name) };
    if (isObject(property) && typeof property.description === 'string') parameter.description = property.description;
    collector.place('input', property, parameter, 'schema');
    return parameter;
  });
}

/**
 * The error responses addRoute and the error handler can always produce, beyond what a route lists, derived
 * from the route's shape: the transport's (400 malformed, 408 timeout, 414 long parameter, 429 connection cap,
 * 431 header size, 500), input validation (400), body size (413), auth (401, 403), the session lookup of
 * session-scoped routes (404, 410 SESSION_CLOSED, 421 SESSION_OWNED_ELSEWHERE) and draining (503
 * SHUTTING_DOWN) on routes that start sessions or runs.
 */
function impliedResponses(operation: OpenApiOperation): Record<number, z.ZodType | null> {
  // Every request, a WebSocket handshake included, can be malformed HTTP (400 BAD_REQUEST), time out (408),
  // exceed the per-address connection cap (429), carry too many header bytes (431) or meet a fault of ours (500);
  // a path parameter can be too long for the router (414).
  const transport: Record<number, z.ZodType | null> = {
    400: ErrorBodySchema,
    408: ErrorBodySchema,
    429: ErrorBodySchema,
    431: ErrorBodySchema,
    500: ErrorBodySchema,
  };
  if (operation.url.includes(':')) transport[414] = ErrorBodySchema;
  // A WebSocket upgrade reports auth and validation failures as close codes, not HTTP statuses.
  if (101 in operation.responses) return transport;
  const implied: Record<number, z.ZodType | null> = { ...transport };
  if (operation.params || operation.query || operation.body) implied[400] = ErrorBodySchema;
  if (operation.body) implied[413] = ErrorBodySchema;
  if (operation.scope !== null) {
    implied[401] = ErrorBodySchema;
    implied[403] = ErrorBodySchema;
  }
  if (isSessionScoped(operation)) {
    implied[404] = ErrorBodySchema;
    implied[410] = ErrorBodySchema;
    implied[421] = ErrorBodySchema;
  }
  if (admitsWork(operation)) implied[503] = ErrorBodySchema;
  return implied;
}

function buildOperation(collector: SchemaCollector, operation: OpenApiOperation, tag: string): JsonObject {
  const out: JsonObject = {
    operationId: operationIdOf(operation.method, operation.url),
    tags: [tag],
    summary: operation.summary,
  };
  if (operation.description) out.description = operation.description;
  const params: JsonObject[] = [];
  if (operation.params) params.push(...parameters(collector, operation.params, 'path'));
  if (operation.query) params.push(...parameters(collector, operation.query, 'query'));
  // Every session-scoped route resolves :id in the caller's tenant; an admin names another with ?tenantId=.
  if (isSessionScoped(operation) && !params.some((p) => p.in === 'query' && p.name === 'tenantId')) {
    params.push({
      name: 'tenantId',
      in: 'query',
      required: false,
      description: "admin only: the tenant whose session :id names (default: the caller's own tenant)",
      schema: { type: 'string', minLength: 1, maxLength: 200 },
    });
  }
  for (const name of Object.keys(operation.headers ?? {}).sort()) {
    params.push({
      name,
      in: 'header',
      required: false,
      description: operation.headers?.[name] ?? '',
      schema: { type: 'string' },
    });
  }
  if (params.length > 0) out.parameters = params;
  if (operation.body) {
    const content: JsonObject = {};
    // addRoute parses a missing body as {}, so the body is required only when {} is not valid.
    out.requestBody = { required: !operation.body.safeParse({}).success, content: { 'application/json': content } };
    collector.convert(operation.body, 'input', content, 'schema');
  }
  const responses: JsonObject = {};
  const all = { ...impliedResponses(operation), ...operation.responses };
  for (const status of Object.keys(all)
    .map(Number)
    .sort((a, b) => a - b)) {
    const schema = all[status];
    const response: JsonObject = { description: STATUS_CODES[status] ?? `HTTP ${status}` };
    if (schema) {
      const media: JsonObject = {};
      response.content = { [status < 300 && operation.produces ? operation.produces : 'application/json']: media };
      collector.convert(schema, 'output', media, 'schema');
    }
    responses[String(status)] = response;
  }
  out.responses = responses;
  if (operation.scope !== null) {
    out.security = [{ bearerAuth: [] }];
    out['x-required-scope'] = operation.scope;
  } else {
    out.security = [];
  }
  return out;
}

/**
 * Build the OpenAPI 3.1 document for every operation in the registry, in a stable order, with the event types
 * and built-in tools of `docs` (the server's own by default).
 */
export function buildOpenApiDocument(
  registry: OpenApiRegistry,
  info: OpenApiInfo,
  docs: DocRegistries = defaultDocRegistries(),
): Record<string, unknown> {
  const collector = new SchemaCollector();
  const byPath = new Map<string, Map<string, OpenApiOperation>>();
  for (const operation of registry.operations) {
    const path = openApiPath(operation.url);
    const method = operation.method.toLowerCase();
    const methods = byPath.get(path) ?? new Map<string, OpenApiOperation>();
    if (methods.has(method)) throw new Error(`OpenAPI: ${operation.method} ${operation.url} is registered twice`);
    methods.set(method, operation);
    byPath.set(path, methods);
  }
  const paths: JsonObject = {};
  const operationIds = new Map<string, string>();
  for (const operation of registry.operations) {
    const id = operationIdOf(operation.method, operation.url);
    const earlier = operationIds.get(id);
    if (earlier !== undefined)
      throw new Error(`OpenAPI: operationId ${id} of ${operation.method} ${operation.url} is ${earlier}'s too`);
    operationIds.set(id, `${operation.method} ${operation.url}`);
  }
  // A session's sub-resource is a tag of its own when two operations or more share it; else it is `sessions`.
  const candidates = registry.operations.map((operation) => operationTagOf(operation.url));
  const shared = (tag: string) => candidates.filter((c) => c === tag).length > 1;
  const tagOf = (operation: OpenApiOperation) => {
    const tag = operationTagOf(operation.url);
    return shared(tag) || !operation.url.startsWith('/v1/sessions/') ? tag : 'sessions';
  };
  for (const path of [...byPath.keys()].sort()) {
    const methods = byPath.get(path) ?? new Map<string, OpenApiOperation>();
    const item: JsonObject = {};
    const order = (method: string) =>
      METHOD_ORDER.includes(method) ? METHOD_ORDER.indexOf(method) : METHOD_ORDER.length;
    for (const method of [...methods.keys()].sort((a, b) => order(a) - order(b) || a.localeCompare(b))) {
      const operation = methods.get(method) as OpenApiOperation;
      item[method] = buildOperation(collector, operation, tagOf(operation));
    }
    paths[path] = item;
  }
  // The event registry: every EventEnvelopeV1 type with its payload schema, the seed's catalog first.
  const events: JsonObject[] = docs.events.map(({ type, catalog, payload }) => {
    const entry: JsonObject = { type, catalog };
    collector.convert(payload, 'output', entry, 'payload');
    return entry;
  });
  // The built-in tools as GET /v1/sessions/:id/tools lists them (the model sees the same name, text and schema).
  const tools: JsonObject[] = docs.tools.map((tool) => {
    const { name, description, parameters, readOnly } = toolListEntry(tool);
    return { name, readOnly, description, parameters: parameters as JsonObject };
  });
  // What the server POSTs to a run's webhook (docs/webhooks.md): OpenAPI 3.1's `webhooks`.
  const webhookContent: JsonObject = {};
  collector.convert(WebhookBodySchema, 'output', webhookContent, 'schema');
  const webhooks: JsonObject = {
    run: {
      post: {
        operationId: 'runWebhook',
        summary:
          'A run webhook delivery: the run record (and AgentResult) on run_completed, run_failed, run_cancelled, confirmation_required',
        description:
          'Signed `A3S-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the tenant\'s secret (one `v1` per secret while rotating); `A3S-Delivery-Id` is the same on every attempt; any 2xx delivers. By default attempts go at 0 s, 10 s, 1 min, 5 min, 30 min and 2 h, each within 10 s (config webhooks).',
        parameters: ['A3S-Signature', 'A3S-Delivery-Id', 'A3S-Event'].map((name) => ({
          name,
          in: 'header',
          required: true,
          schema: { type: 'string' },
        })),
        requestBody: { required: true, content: { 'application/json': webhookContent } },
        responses: { '200': { description: 'Delivered (any 2xx)' } },
      },
    },
  };
  const schemas = collector.finish();
  const infoObject: JsonObject = { title: info.title, version: info.version };
  if (info.description) infoObject.description = info.description;
  return {
    openapi: '3.1.0',
    info: infoObject,
    // The embedded default listens on loopback; a deployment behind a balancer names its own URL.
    servers: [
      {
        url: 'http://127.0.0.1:{port}',
        description: 'A local server (A3S_PORT, default 8080)',
        variables: { port: { default: '8080' } },
      },
    ],
    paths,
    webhooks,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token from the server configuration or A3S_API_TOKENS; it maps to a principal, a tenant and scopes.',
        },
      },
    },
    'x-event-types': events,
    'x-builtin-tools': tools,
    'x-error-codes': Object.entries(ERROR_CATALOGUE).map(([code, entry]) => ({
      code,
      status: entry.status,
      description: entry.description,
    })),
    // Codes a run fails with (RunError.code, `error` events): no HTTP status of their own.
    'x-run-error-codes': Object.entries(RUN_ERROR_CATALOGUE).map(([code, description]) => ({ code, description })),
  };
}
