import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeError } from '../../src/errors.js';
import { HookInfoSchema } from '../../src/protocol/hooks.js';
import { registerHookRoutes } from '../../src/routes/hooks.js';
import type { Caller } from '../../src/runtime/ports/caller.js';
import type { HookEngine } from '../../src/runtime/policy/hooks/hook-engine.js';
import { WebSocketHostRegistry } from '../../src/runtime/policy/host-bridge/websocket-host-registry.js';
import { Authenticator } from '../../src/server/authenticator.js';
import { installErrorHandler } from '../../src/server/error-handler.js';
import { OpenApiRegistry } from '../../src/server/openapi-registry.js';
import type { ServerContext } from '../../src/server/server-context.js';
import { makeEngine } from './engine-fixtures.js';

// The hook routes on a bare Fastify app over real HTTP, with the real authenticator and error handler.
// Sessions are stood in for by a map of engines per tenant; app.ts wiring is tested elsewhere.
const ACME = 'acme-token-0123456789';
const GLOBEX = 'globex-token-0123456789';

let app: FastifyInstance;
let base: string;
const registry = new WebSocketHostRegistry();
const engines = new Map<string, { tenantId: string; engine: HookEngine }>();

function getHooks(sessionId: string, caller: Caller): HookEngine {
  const entry = engines.get(sessionId);
  if (!entry || entry.tenantId !== caller.tenantId)
    throw new CodeError('SESSION_NOT_FOUND', `session ${sessionId} not found`);
  return entry.engine;
}

async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  const authenticator = new Authenticator([
    { token: ACME, principal: 'ci', tenantId: 'acme', scopes: ['sessions'] },
    { token: GLOBEX, principal: 'other', tenantId: 'globex', scopes: ['sessions'] },
  ]);
  // A stand-in context: sessions here are always live, so hydration (agent.ensureLocal) has nothing to do.
  const ctx = {
    authenticator,
    openapi: new OpenApiRegistry(),
    agent: { ensureLocal: async () => undefined },
    config: { outbound: { allowPrivateNetworks: false } },
  } as unknown as ServerContext;
  engines.set('s1', {
    tenantId: 'acme',
    engine: makeEngine({
      registry,
      configHooks: [
        { id: 'corp', event: 'session_start', endpoint: { type: 'webhook', url: 'https://audit.example.com/' } },
      ],
    }).engine,
  });
  registry.attach('conn-acme', () => undefined, { tenantId: 'acme' });
  registry.attach('conn-globex', () => undefined, { tenantId: 'globex' });
  app = Fastify();
  installErrorHandler(app);
  registerHookRoutes(app, ctx, getHooks);
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app.close();
});

describe('hook routes', () => {
  it('registers (201), lists in run order and removes hooks', async () => {
    const created = await call('POST', '/v1/sessions/s1/hooks', ACME, {
      id: 'guard',
      event: 'pre_tool_use',
      priority: 5,
      matcher: { tool: 'bash' },
      endpoint: { type: 'webhook', url: 'https://hooks.example.com/x', headers: { Authorization: 'Bearer secret' } },
    });
    expect(created.status).toBe(201);
    const hook = HookInfoSchema.parse(created.json.hook);
    expect(hook).toMatchObject({
      id: 'guard',
      source: 'session',
      endpoint: { type: 'webhook', headerNames: ['Authorization'] },
    });
    expect(JSON.stringify(created.json)).not.toContain('secret');
    const ws = await call('POST', '/v1/sessions/s1/hooks', ACME, {
      event: 'permission_request',
      endpoint: { type: 'websocket', connectionId: 'conn-acme' },
    });
    expect(ws.status).toBe(201);
    const listed = await call('GET', '/v1/sessions/s1/hooks', ACME);
    expect((listed.json.hooks as Array<{ id: string }>).map((h) => h.id)).toEqual([
      'guard',
      'corp',
      (ws.json.hook as { id: string }).id,
    ]);
    expect(await call('DELETE', '/v1/sessions/s1/hooks/guard', ACME)).toEqual({
      status: 200,
      json: { removed: true, hookId: 'guard' },
    });
  });

  it('answers 400 naming the field', async () => {
    const bad = await call('POST', '/v1/sessions/s1/hooks', ACME, {
      event: 'pre_tool_use',
      timeoutMs: 999_999,
      endpoint: { type: 'webhook', url: 'https://x.example/' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/^body\.timeoutMs: /),
    });
    const noConnection = await call('POST', '/v1/sessions/s1/hooks', ACME, {
      event: 'pre_tool_use',
      endpoint: { type: 'websocket' },
    });
    expect(noConnection.status).toBe(400);
    expect(noConnection.json.error).toMatchObject({
      message: expect.stringMatching(/^endpoint\.connectionId: required/),
    });
    const foreign = await call('POST', '/v1/sessions/s1/hooks', ACME, {
      event: 'pre_tool_use',
      endpoint: { type: 'websocket', connectionId: 'conn-globex' },
    });
    expect(foreign.status).toBe(400);
  });

  it('answers 404 for unknown hooks, config hooks and other tenants', async () => {
    expect((await call('DELETE', '/v1/sessions/s1/hooks/nope', ACME)).json.error).toMatchObject({ code: 'NOT_FOUND' });
    expect((await call('DELETE', '/v1/sessions/s1/hooks/corp', ACME)).status).toBe(404);
    expect((await call('GET', '/v1/sessions/s1/hooks', GLOBEX)).status).toBe(404);
    expect(
      (
        await call('POST', '/v1/sessions/s1/hooks', GLOBEX, {
          event: 'pre_tool_use',
          endpoint: { type: 'webhook', url: 'https://x.example/' },
        })
      ).status,
    ).toBe(404);
  });
});
