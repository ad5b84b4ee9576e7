import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCodeError } from '../../src/errors.js';
import type { HookRegistrationInput } from '../../src/protocol/hooks.js';
import type { GovernanceHooks } from '../../src/runtime/policy/session-governance.js';
import { makeEngine, toolPayload } from './engine-fixtures.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';

let host: WebhookServer;

beforeAll(async () => {
  host = await startWebhookServer({
    '/continue': { body: { action: 'continue' } },
    '/continue-2': { body: { action: 'continue' } },
    '/block': { body: { action: 'block', reason: 'rm is not allowed' } },
    '/skip': { body: { action: 'skip', reason: 'already done' } },
    '/retry': { body: { action: 'retry', reason: 'try later' } },
    '/rewrite': { body: { action: 'continue', modified: { command: 'rm -rf /tmp/scratch' } } },
    '/prompt': { body: { action: 'continue', modified: { prompt: 'rewritten prompt' } } },
    '/slow': { body: { action: 'continue' }, delayMs: 2000 },
    '/error': { status: 500, body: { error: 'boom' } },
    '/not-json': { body: 'this is not json' },
    '/wrong-shape': { body: { action: 'maybe' } },
    '/redirect': { status: 302, headers: { location: '/continue' }, body: '' },
  });
});

afterAll(async () => {
  await host.close();
});

function webhook(path: string, extra: Partial<HookRegistrationInput> = {}): HookRegistrationInput {
  return { event: 'pre_tool_use', endpoint: { type: 'webhook', url: host.url(path) }, ...extra };
}

describe('HookEngine gating with webhooks', () => {
  it('continues when no hook matches', async () => {
    const { engine } = makeEngine();
    await expect(
      engine.gate('pre_tool_use', toolPayload('bash', { command: 'ls' }), {
        toolName: 'bash',
        args: { command: 'ls' },
        sessionId: 's1',
      }),
    ).resolves.toEqual({ action: 'continue', executions: [] });
  });

  it('posts {...payload, kind, request_id, hook_id} with the declared headers', async () => {
    const { engine } = makeEngine();
    engine.register(
      webhook('/continue', {
        id: 'audit',
        endpoint: { type: 'webhook', url: host.url('/continue'), headers: { Authorization: 'Bearer s3cret' } },
      }),
    );
    const before = host.on('/continue').length;
    const outcome = await engine.gate('pre_tool_use', toolPayload('bash', { command: 'ls' }), {
      toolName: 'bash',
      args: { command: 'ls' },
      sessionId: 's1',
    });
    expect(outcome.action).toBe('continue');
    expect(outcome.executions).toEqual([expect.objectContaining({ hookId: 'audit', action: 'continue' })]);
    const request = host.on('/continue')[before];
    expect(request.body).toEqual({
      session_id: 's1',
      tool: 'bash',
      args: { command: 'ls' },
      hook_id: 'audit',
      kind: 'pre_tool_use',
      request_id: 'hreq-1',
    });
    expect(request.headers.authorization).toBe('Bearer s3cret');
    expect(request.headers['content-type']).toBe('application/json');
    // Header values are never echoed back.
    expect(engine.list()[0].endpoint).toEqual({
      type: 'webhook',
      url: host.url('/continue'),
      headerNames: ['Authorization'],
    });
  });

  it('blocks with the hook id and reason; later hooks do not run', async () => {
    const { engine } = makeEngine();
    engine.register(webhook('/block', { id: 'guard', priority: 10 }));
    engine.register(webhook('/continue-2', { id: 'later', priority: 20 }));
    const before = host.on('/continue-2').length;
    const outcome = await engine.gate('pre_tool_use', toolPayload('bash', { command: 'rm x' }), {
      toolName: 'bash',
      args: { command: 'rm x' },
      sessionId: 's1',
    });
    expect(outcome).toMatchObject({ action: 'block', reason: 'rm is not allowed', hookId: 'guard' });
    expect(outcome.failed).toBeUndefined();
    expect(host.on('/continue-2').length).toBe(before);
  });

  it.each([
    ['/skip', 'skip', 'already done'],
    ['/retry', 'retry', 'try later'],
  ])('%s answers %s and stops the chain', async (path, action, reason) => {
    const { engine } = makeEngine();
    engine.register(webhook(path, { id: 'h' }));
    const outcome = await engine.gate('pre_tool_use', toolPayload('bash', {}), {
      toolName: 'bash',
      args: {},
      sessionId: 's1',
    });
    expect(outcome).toMatchObject({ action, reason, hookId: 'h' });
  });

  it('runs hooks by priority, ties in registration order', async () => {
    const server = await startWebhookServer({
      '/a': { body: { action: 'continue' } },
      '/b': { body: { action: 'continue' } },
      '/c': { body: { action: 'continue' } },
    });
    try {
      const { engine } = makeEngine();
      engine.register({
        id: 'late',
        event: 'pre_tool_use',
        priority: 50,
        endpoint: { type: 'webhook', url: server.url('/a') },
      });
      engine.register({
        id: 'first-tie',
        event: 'pre_tool_use',
        priority: 10,
        endpoint: { type: 'webhook', url: server.url('/b') },
      });
      engine.register({
        id: 'second-tie',
        event: 'pre_tool_use',
        priority: 10,
        endpoint: { type: 'webhook', url: server.url('/c') },
      });
      engine.register({ id: 'default', event: 'pre_tool_use', endpoint: { type: 'webhook', url: server.url('/a') } });
      const outcome = await engine.gate('pre_tool_use', toolPayload('read', {}), {
        toolName: 'read',
        args: {},
        sessionId: 's1',
      });
      expect(outcome.executions.map((e) => e.hookId)).toEqual(['first-tie', 'second-tie', 'late', 'default']);
      expect(server.requests.map((r) => r.body.hook_id)).toEqual(['first-tie', 'second-tie', 'late', 'default']);
      expect(engine.list().map((h) => h.id)).toEqual(['first-tie', 'second-tie', 'late', 'default']);
    } finally {
      await server.close();
    }
  });

  it('carries modified args to later hooks, their matchers, and the caller', async () => {
    const { engine } = makeEngine();
    engine.register(webhook('/rewrite', { id: 'rewriter', priority: 1 }));
    // Matches only the rewritten command, not the original one.
    engine.register(webhook('/continue-2', { id: 'rm-watch', priority: 2, matcher: { commandPattern: 'rm -rf /*' } }));
    const before = host.on('/continue-2').length;
    const outcome = await engine.gate('pre_tool_use', toolPayload('bash', { command: 'ls' }), {
      toolName: 'bash',
      args: { command: 'ls' },
      sessionId: 's1',
    });
    expect(outcome).toMatchObject({ action: 'continue', modifiedArgs: { command: 'rm -rf /tmp/scratch' } });
    expect(outcome.executions.map((e) => e.hookId)).toEqual(['rewriter', 'rm-watch']);
    expect(host.on('/continue-2')[before].body.args).toEqual({ command: 'rm -rf /tmp/scratch' });
  });

  it('merges modified fields into the payload for pre_prompt', async () => {
    const { engine } = makeEngine();
    engine.register({ event: 'pre_prompt', endpoint: { type: 'webhook', url: host.url('/prompt') } });
    const outcome = await engine.gate('pre_prompt', { session_id: 's1', prompt: 'hello' }, { sessionId: 's1' });
    expect(outcome.action).toBe('continue');
    expect(outcome.modifiedArgs).toBeUndefined();
    expect(outcome.modifiedPayload).toEqual({ session_id: 's1', prompt: 'rewritten prompt' });
  });

  it.each([
    ['/slow', 'timeout', /no answer within 200 ms/],
    ['/error', 'http_status', /HTTP 500/],
    ['/not-json', 'bad_response', /not valid JSON/],
    ['/wrong-shape', 'invalid_response', /invalid answer: action/],
    ['/redirect', 'http_status', /HTTP 302/],
  ])('fails closed when %s (%s)', async (path, failure, message) => {
    const { engine, failures } = makeEngine();
    engine.register(webhook(path, { id: 'fragile', timeoutMs: 200 }));
    const started = Date.now();
    const outcome = await engine.gate('pre_tool_use', toolPayload('bash', {}), {
      toolName: 'bash',
      args: {},
      sessionId: 's1',
    });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(outcome).toMatchObject({ action: 'block', hookId: 'fragile', failed: true });
    expect(outcome.reason).toMatch(/hook fragile \(pre_tool_use\) failed/);
    expect(outcome.reason).toMatch(message);
    expect(failures).toEqual([expect.objectContaining({ hookId: 'fragile', event: 'pre_tool_use', failure })]);
  });

  it('fails closed when the webhook is unreachable', async () => {
    const server = await startWebhookServer({});
    const url = server.url('/gone');
    await server.close();
    const { engine } = makeEngine();
    engine.register({ id: 'gone', event: 'permission_request', endpoint: { type: 'webhook', url } });
    const outcome = await engine.gate('permission_request', toolPayload('write', {}), {
      toolName: 'write',
      args: {},
      sessionId: 's1',
    });
    expect(outcome).toMatchObject({ action: 'block', hookId: 'gone', failed: true });
    expect(outcome.reason).toMatch(/webhook request failed/);
  });

  it('blocks a gate in flight at once when the engine closes, and when the caller aborts', async () => {
    const { engine } = makeEngine();
    engine.register(webhook('/slow', { id: 'slow', timeoutMs: 30_000 }));
    const controller = new AbortController();
    const started = Date.now();
    const aborted = engine.gate(
      'pre_tool_use',
      toolPayload('bash', {}),
      { toolName: 'bash', args: {}, sessionId: 's1' },
      controller.signal,
    );
    controller.abort();
    await expect(aborted).resolves.toMatchObject({
      action: 'block',
      failed: true,
      reason: expect.stringMatching(/aborted/),
    });
    const closing = engine.gate('pre_tool_use', toolPayload('bash', {}), {
      toolName: 'bash',
      args: {},
      sessionId: 's1',
    });
    engine.close();
    await expect(closing).resolves.toMatchObject({
      action: 'block',
      failed: true,
      reason: expect.stringMatching(/closed/),
    });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('fits the invokers governance interface', () => {
    const asGovernance: GovernanceHooks = makeEngine().engine;
    expect(typeof asGovernance.gate).toBe('function');
  });

  it('refuses events of the wrong kind', async () => {
    const { engine } = makeEngine();
    // @ts-expect-error post_tool_use observes; it cannot gate.
    await expect(engine.gate('post_tool_use', {}, { sessionId: 's1' })).rejects.toThrow(/not a gating hook event/);
    // @ts-expect-error pre_tool_use gates; it cannot be observed.
    expect(() => engine.observe('pre_tool_use', {}, { sessionId: 's1' })).toThrow(/not an observing hook event/);
  });
});

describe('HookEngine registrations', () => {
  it('applies config hooks to every engine; they are listed, run first on ties, and cannot be removed', async () => {
    const configHooks = [
      { id: 'corp-audit', event: 'pre_tool_use', endpoint: { type: 'webhook', url: host.url('/continue') } },
    ];
    const a = makeEngine({ configHooks }).engine;
    const b = makeEngine({ configHooks }).engine;
    b.register(webhook('/continue-2', { id: 'own' }));
    expect(a.list().map((h) => [h.id, h.source])).toEqual([['corp-audit', 'config']]);
    expect(b.list().map((h) => [h.id, h.source])).toEqual([
      ['corp-audit', 'config'],
      ['own', 'session'],
    ]);
    for (const engine of [a, b]) {
      const outcome = await engine.gate('pre_tool_use', toolPayload('bash', {}, 'other-session'), {
        toolName: 'bash',
        args: {},
        sessionId: 'other-session',
      });
      expect(outcome.executions[0].hookId).toBe('corp-audit');
    }
    expect(b.remove('corp-audit')).toBe(false);
    expect(b.remove('own')).toBe(true);
    expect(b.remove('own')).toBe(false);
    expect(() => b.register(webhook('/continue', { id: 'corp-audit' }))).toThrow(
      /id: a hook "corp-audit" already exists/,
    );
  });

  it('rejects bad config hooks with SESSION_CONFIGURATION_ERROR naming the field', () => {
    const bad = [
      [{ event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: 'c1' } }, /hooks\.0\.endpoint/],
      [{ event: 'nope', endpoint: { type: 'webhook', url: 'http://127.0.0.1/' } }, /hooks\.0\.event/],
    ] as const;
    for (const [hook, message] of bad) {
      let caught: unknown;
      try {
        makeEngine({ configHooks: [hook] });
      } catch (error) {
        caught = error;
      }
      expect(isCodeError(caught) && caught.code).toBe('SESSION_CONFIGURATION_ERROR');
      expect((caught as Error).message).toMatch(message);
    }
    const dup = { id: 'x', event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'http://127.0.0.1/' } };
    expect(() => makeEngine({ configHooks: [dup, dup] })).toThrow(/hooks\.1\.id: duplicate hook id "x"/);
  });

  it('validates registrations and bounds their number', () => {
    const { engine } = makeEngine({ maxHooks: 2 });
    expect(() =>
      engine.register({ event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'ftp://example.com/' } }),
    ).toThrow(/endpoint\.url: url must be an absolute http/);
    const first = engine.register(webhook('/continue'));
    expect(first).toMatchObject({
      id: 'hook-1',
      event: 'pre_tool_use',
      priority: 100,
      timeoutMs: 30_000,
      asyncExecution: false,
      maxRetries: 0,
      source: 'session',
      matcher: null,
    });
    engine.register(webhook('/continue'));
    expect(() => engine.register(webhook('/continue'))).toThrow(/at most 2 hooks \(maxHooks\)/);
  });

  it('wants(event) is true only for events some hook listens to, and stays true once closed (gates still block)', async () => {
    const { engine } = makeEngine();
    expect(engine.wants('pre_tool_use')).toBe(false);
    engine.register(webhook('/continue'));
    expect(engine.wants('pre_tool_use')).toBe(true);
    expect(engine.wants('post_tool_use')).toBe(false);
    engine.close();
    expect(engine.wants('pre_tool_use')).toBe(true);
    const outcome = await engine.gate('pre_tool_use', toolPayload('read', {}), { toolName: 'read', sessionId: 's1' });
    expect(outcome.action).toBe('block');
  });
});
