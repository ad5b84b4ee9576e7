import { existsSync, readFileSync } from 'node:fs';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildApp } from '../src/app.js';
import { CodeConfigSchema } from '../src/config/code-config.js';
import { createRuntimeContext } from '../src/context.js';
import { ERROR_CATALOGUE, RUN_ERROR_CATALOGUE } from '../src/errors.js';
import { EVENT_TYPES, SEED_EVENT_TYPES } from '../src/protocol/event-catalog.js';
import { RunRecordSchema } from '../src/protocol/run-record.js';
import { openApiYamlPath, renderOpenApiYaml } from '../src/server/render-openapi.js';

interface Operation {
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  security?: Record<string, string[]>[];
  'x-required-scope'?: string;
  responses?: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
  'x-error-codes': { code: string; status: number; description: string }[];
  'x-run-error-codes': { code: string; description: string }[];
  'x-event-types': {
    type: string;
    catalog: 'seed' | 'extension';
    payload: { type?: string; properties?: Record<string, unknown>; required?: string[] };
  }[];
}

/** Every "METHOD /url" the Fastify app serves, read from printRoutes' tree (HEAD is implied by GET). */
function routesFromTree(tree: string): Set<string> {
  const routes = new Set<string>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([^)]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim())) {
      if (method && method !== 'HEAD') routes.add(`${method} ${stack.join('')}`);
    }
  }
  return routes;
}

/** Every $ref string in a JSON tree. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refs(item, out);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') out.push(item);
      else refs(item, out);
    }
  }
  return out;
}

describe('openapi.yaml', () => {
  let rendered: string;
  let doc: Document;

  beforeAll(async () => {
    rendered = await renderOpenApiYaml();
    doc = parse(rendered) as Document;
  });

  it('is up to date with the zod schemas the routes register', () => {
    const path = openApiYamlPath();
    expect(existsSync(path), 'openapi.yaml is missing: run `npm run openapi`').toBe(true);
    const committed = readFileSync(path, 'utf8');
    expect(committed === rendered, 'openapi.yaml is stale: run `npm run openapi` and commit the result').toBe(true);
  });

  it('renders the same text twice', async () => {
    expect(await renderOpenApiYaml()).toBe(rendered);
  });

  it('documents every route the app serves, and nothing else', async () => {
    const ctx = await createRuntimeContext(
      CodeConfigSchema.parse({ storageBackend: 'memory', logLevel: 'silent', workspaceRoots: [process.cwd()] }),
      { logger: pino({ level: 'silent' }) },
    );
    const { app } = await buildApp(ctx);
    try {
      await app.ready();
      const served = routesFromTree(app.printRoutes({ commonPrefix: false }));
      const documented = new Set<string>();
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of Object.keys(item))
          documented.add(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`);
      }
      expect(served.size).toBeGreaterThan(5);
      expect([...documented].sort()).toEqual([...served].sort());
    } finally {
      await app.close();
      await ctx.agent.close();
    }
  });

  it('references SessionOptions from the body of POST /v1/sessions', () => {
    const body = doc.paths['/v1/sessions']?.post?.requestBody;
    expect(body?.content['application/json']?.schema.$ref).toBe('#/components/schemas/SessionOptions');
    expect(doc.components.schemas.SessionOptions).toBeDefined();
  });

  it('marks the host-direct tool route with the host_direct scope and bearer auth', () => {
    const operation = doc.paths['/v1/sessions/{id}/tools/{name}']?.post;
    expect(operation?.['x-required-scope']).toBe('host_direct');
    expect(operation?.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toBeDefined();
  });

  it('lists every event type with its payload schema, the seed catalog first', () => {
    const events = doc['x-event-types'];
    expect(events.map((e) => e.type)).toEqual([...EVENT_TYPES]);
    expect(events.filter((e) => e.catalog === 'seed').map((e) => e.type)).toEqual([...SEED_EVENT_TYPES]);
    const toolEnd = events.find((e) => e.type === 'tool_end')?.payload;
    expect(toolEnd?.required).toEqual(expect.arrayContaining(['id', 'name', 'output', 'exit_code']));
    expect(Object.keys(toolEnd?.properties ?? {})).toEqual(expect.arrayContaining(['metadata', 'error_kind']));
  });

  it('leaves the health routes unauthenticated', () => {
    expect(doc.paths['/healthz']?.get?.security).toEqual([]);
    expect(doc.paths['/healthz']?.get?.['x-required-scope']).toBeUndefined();
  });

  it('resolves every $ref to a component schema', () => {
    const missing = refs(doc).filter(
      (ref) =>
        !(
          ref.startsWith('#/components/schemas/') && ref.slice('#/components/schemas/'.length) in doc.components.schemas
        ),
    );
    expect(missing).toEqual([]);
  });

  it('documents the error statuses each route can answer, derived from its shape', () => {
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {});
    // Session-scoped: the session lookup answers 404, 410 SESSION_CLOSED and 421 SESSION_OWNED_ELSEWHERE.
    expect(statuses('/v1/sessions/{id}/history', 'get')).toEqual(
      expect.arrayContaining(['401', '403', '404', '410', '421']),
    );
    expect(statuses('/v1/sessions/{id}/history', 'get')).not.toContain('413');
    // A body may be too large; routes that start runs or sessions answer 503 while draining.
    expect(statuses('/v1/sessions/{id}/runs', 'post')).toEqual(expect.arrayContaining(['410', '413', '421', '503']));
    expect(statuses('/v1/sessions/{id}/runs/{runId}/resume', 'post')).toEqual(
      expect.arrayContaining(['410', '413', '421', '503']),
    );
    expect(statuses('/v1/sessions', 'post')).toEqual(expect.arrayContaining(['401', '403', '413', '503']));
    expect(statuses('/v1/sessions', 'get')).not.toContain('421');
    // Every route, a WebSocket handshake included, can meet the transport's answers: malformed HTTP (400),
    // a timeout (408), the per-address connection cap (429), too many header bytes (431), a fault of ours (500);
    // a route with a path parameter also 414 (a parameter over 512 characters).
    expect(statuses('/healthz', 'get')).toEqual(['200', '400', '408', '429', '431', '500']);
    expect(statuses('/v1/sessions/{id}/history', 'get')).toEqual(
      expect.arrayContaining(['400', '408', '414', '429', '431', '500']),
    );
    const errorRef = (path: string, status: string) =>
      doc.paths[path]?.get?.responses?.[status]?.content?.['application/json']?.schema.$ref;
    expect(errorRef('/v1/sessions/{id}/history', '410')).toBe('#/components/schemas/ErrorBody');
    expect(errorRef('/v1/sessions/{id}/history', '421')).toBe('#/components/schemas/ErrorBody');
    expect(errorRef('/v1/sessions/{id}/events', '426')).toBe('#/components/schemas/ErrorBody');
    // The WebSocket route reports failures as close codes; a plain GET answers 426 UPGRADE_REQUIRED, a bad Host or
    // Origin 403, and the handshake meets the transport's answers like any request. As SSE (Accept: text/event-stream)
    // it answers 200 with the stream, or before it 400, 401, 403, 404 and 410.
    expect(statuses('/v1/sessions/{id}/events', 'get')).toEqual([
      '101',
      '200',
      '400',
      '401',
      '403',
      '404',
      '408',
      '410',
      '414',
      '426',
      '429',
      '431',
      '500',
    ]);
  });

  it('lists the whole error catalogue, run error codes included, and RunError.code is that closed set', () => {
    expect(doc['x-error-codes'].map((entry) => entry.code)).toEqual(Object.keys(ERROR_CATALOGUE));
    expect(doc['x-run-error-codes'].map((entry) => entry.code)).toEqual(Object.keys(RUN_ERROR_CATALOGUE));
    const runError = doc.components.schemas.RunError as { properties: { code: { enum: string[] } } };
    expect(runError.properties.code.enum).toEqual(Object.keys(RUN_ERROR_CATALOGUE));
    // A code stored by an earlier version (an errno code, say) reads as INTERNAL_ERROR: the snapshot stays loadable.
    expect(RunRecordSchema.shape.error.parse({ code: 'ECONNRESET', message: 'x' })).toEqual({
      code: 'INTERNAL_ERROR',
      message: 'x',
    });
  });
});
