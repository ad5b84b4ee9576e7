import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { A3sClient, BudgetExhaustedError, CommandFailedError } from '../../src/client/index.js';
import { useTestServers } from '../support/run-helpers.js';

describe('callbacks: the client as the session WebSocket host (hooks, commands, budget guard)', () => {
  const start = useTestServers();

  it('a JS hook blocks a tool call, a JS command answers /name, and both fail closed once the host socket is gone', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root);
    const asked: Record<string, unknown>[] = [];
    const hook = await session.registerHook(
      'no-writes',
      'pre_tool_use',
      { tool: 'write' },
      { priority: 1, timeoutMs: 2000 },
      (payload) => {
        asked.push(payload);
        return { action: 'block', reason: 'read-only today' };
      },
    );
    expect(hook).toMatchObject({
      id: 'no-writes',
      event: 'pre_tool_use',
      endpoint: { type: 'websocket', connected: true },
    });
    expect(await session.hookCount()).toBe(1);

    const blocked = await session.tool('write', { file_path: 'b.txt', content: 'b' });
    expect(blocked.exitCode).toBe(1);
    expect(blocked.output).toContain('read-only today');
    expect(asked[0]).toMatchObject({ tool: 'write', hook_id: 'no-writes', args: { file_path: 'b.txt' } });
    // Not matching the matcher: never asked.
    expect(await session.readFile('a.txt')).toContain('alpha');
    expect(asked).toHaveLength(1);

    // A model-chosen call is blocked the same way; the model sees the reason.
    t.fake.script(
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { file_path: 'c.txt', content: 'c' } }] },
      { text: 'gave up' },
    );
    const stream = await session.stream('write c.txt');
    const events = await stream.collect();
    expect(events.find((e) => e.type === 'hook_blocked')).toMatchObject({ toolId: 'w1', toolName: 'write' });
    expect(JSON.stringify(t.fake.requests[1].body.messages)).toContain('read-only today');

    await session.registerCommand(
      'docs_status',
      'Return docs command status',
      (args, ctx) =>
        `status args=${args}; session=${ctx.sessionId}; workspace=${ctx.workspace}; cost=${ctx.totalCost.toFixed(2)}`,
    );
    expect((await session.listCommands()).find((c) => c.name === 'docs_status')).toMatchObject({
      kind: 'websocket',
      source: 'session',
    });
    const answered = await session.send('/docs_status check');
    // The seed's ctx.totalCost is a number (0 here: the test model's block has no cost prices).
    expect(answered.text).toBe(`status args=check; session=${session.sessionId}; workspace=${t.root}; cost=0.00`);
    await session.registerCommand('hello', 'A template', { kind: 'template', template: 'hello {{args}}' });
    expect((await session.send('/hello world')).text).toBe('hello world');

    // The host goes away: the gating hook blocks and the websocket command fails (fail closed).
    session.disconnectHost();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const afterHost = await session.tool('write', { file_path: 'd.txt', content: 'd' });
    expect(afterHost.exitCode).toBe(1);
    expect(asked).toHaveLength(2);
    const failed = await session.send('/docs_status again').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(CommandFailedError);
    expect(await session.unregisterHook('no-writes')).toBe(true);
    expect(await session.unregisterHook('no-writes')).toBe(false);
    expect(await session.unregisterCommand('docs_status')).toBe(true);
    expect(await session.unregisterCommand('docs_status')).toBe(false);
    expect((await session.tool('write', { file_path: 'd.txt', content: 'd' })).exitCode).toBe(0);
    t.fake.assertDone();
  });

  it('a budget guard that denies fails the run before any provider call; one that allows records usage after each turn', async () => {
    const t = await start();
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root);
    await session.setBudgetGuard({
      checkBeforeLlm: () => ({ decision: 'deny', resource: 'llm_tokens', reason: 'cap reached' }),
    });
    const denied = await session.send('hi').catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(BudgetExhaustedError);
    expect((denied as BudgetExhaustedError).message).toContain('cap reached');
    expect(t.fake.requests).toHaveLength(0);

    const checks: { estimatedTokens: number }[] = [];
    const recorded: number[] = [];
    await session.setBudgetGuard({
      checkBeforeLlm: (ctx) => {
        checks.push(ctx);
        return null;
      },
      recordAfterLlm: (ctx) => recorded.push(ctx.usage.totalTokens),
    });
    t.fake.script({ text: 'fine', usage: { prompt_tokens: 3, completion_tokens: 4 } });
    expect((await session.send('hi again')).text).toBe('fine');
    expect(checks).toHaveLength(1);
    expect(checks[0].estimatedTokens).toBeGreaterThan(0);
    for (let i = 0; i < 100 && recorded.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(recorded).toEqual([7]);

    // A guard that throws denies (fail closed); removing the guard lets runs through again.
    await session.setBudgetGuard({
      checkBeforeLlm: () => {
        throw new Error('guard bug');
      },
    });
    expect(await session.send('third').catch((error: unknown) => error)).toBeInstanceOf(BudgetExhaustedError);
    await session.setBudgetGuard(null);
    t.fake.script({ text: 'free again' });
    expect((await session.send('fourth')).text).toBe('free again');
    t.fake.assertDone();
  });
});
