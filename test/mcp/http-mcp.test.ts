import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpManager } from '../../src/runtime/mcp/mcp-manager.js';
import { mcpToolContext, waitFor } from './mcp-test-helpers.js';
import { startHttpMcpServer, startSseMcpServer, type TestHttpMcpServer } from './http-mcp-server.js';

let server: TestHttpMcpServer;
let manager: McpManager;
beforeEach(async () => {
  server = await startHttpMcpServer('http-secret');
  manager = new McpManager({ source: 'session' });
});
afterEach(async () => {
  await manager.close();
  await server.close();
});

async function call(name: string, args: Record<string, unknown> = {}) {
  const tool = manager.tools().find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.execute(tool.parameters.parse(args), mcpToolContext());
}

describe('Streamable HTTP MCP server', () => {
  it.each(['http', 'streamable-http'] as const)('adds (%s), lists, calls and removes', async (type) => {
    await expect(
      manager.add({ name: 'remote', transport: { type, url: server.url, headers: { 'x-a3s-test': 'yes' } } }),
    ).resolves.toEqual({ toolCount: 2 });
    expect(server.lastHeaders()['x-a3s-test']).toBe('yes');
    expect(manager.tools().map((t) => t.name)).toEqual(['mcp__remote__echo', 'mcp__remote__get_secret']);
    expect(manager.tools()[0]?.jsonSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    });

    await expect(call('mcp__remote__echo', { message: 'over http' })).resolves.toMatchObject({
      output: 'over http',
      exitCode: 0,
    });
    await expect(call('mcp__remote__get_secret')).resolves.toMatchObject({ output: 'http-secret', exitCode: 0 });
    expect(manager.status()).toEqual([
      {
        name: 'remote',
        transport: type,
        connected: true,
        toolCount: 2,
        error: null,
        source: 'session',
        lastActivityMs: expect.any(Number),
      },
    ]);
    expect(server.openSessions()).toBe(1);

    await expect(manager.remove('remote')).resolves.toBe(true);
    // Disconnecting ends the protocol session with a DELETE.
    expect(await waitFor(() => server.openSessions() === 0, 2_000)).toBe(true);
    expect(manager.tools()).toEqual([]);
  });

  it('reconnects after an idle disconnect with a fresh protocol session', async () => {
    await manager.add({ name: 'remote', transport: { type: 'http', url: server.url } });
    await expect(manager.disconnectIdle(0, Date.now() + 1)).resolves.toEqual(['remote']);
    expect(manager.status()[0]?.connected).toBe(false);
    await expect(call('mcp__remote__echo', { message: 'again' })).resolves.toMatchObject({
      output: 'again',
      exitCode: 0,
    });
    expect(manager.status()[0]?.connected).toBe(true);
  });

  it('rejects a server that is not listening, naming it and its URL without the query', async () => {
    const port = Number(new URL(server.url).port);
    await server.close();
    const failure = manager.add({
      name: 'down',
      transport: { type: 'http', url: `http://127.0.0.1:${port}/mcp?token=hidden` },
    });
    await expect(failure).rejects.toThrow(
      new RegExp(`^MCP server "down" could not connect: http://127.0.0.1:${port}/mcp: fetch failed \\(.*ECONNREFUSED`),
    );
    await expect(failure).rejects.not.toThrow(/hidden/);
    expect(manager.status()).toEqual([]);
    server = await startHttpMcpServer('unused', port);
  });

  it('turns a call to a server that went away into a clear tool error, and reconnects when it is back', async () => {
    await manager.add({ name: 'remote', transport: { type: 'http', url: server.url } });
    const port = Number(new URL(server.url).port);
    await server.close();
    const result = await call('mcp__remote__echo', { message: 'lost' });
    expect(result).toMatchObject({ exitCode: 1, metadata: { reason: 'connection_lost' } });
    expect(result.output).toMatch(/^MCP server "remote": tool echo failed: fetch failed \(\w/);
    expect(manager.status()[0]).toMatchObject({
      connected: false,
      error: expect.stringMatching(/^disconnected: fetch failed/),
    });

    // The restarted server knows nothing of the old protocol session; the next call opens a new one.
    server = await startHttpMcpServer('restarted', port);
    await expect(call('mcp__remote__get_secret')).resolves.toMatchObject({ output: 'restarted', exitCode: 0 });
    expect(manager.status()[0]).toMatchObject({ connected: true, error: null });
  });
});

describe('HTTP+SSE MCP server', () => {
  it('adds, lists, calls and removes', async () => {
    const sse = await startSseMcpServer('sse-secret');
    const m = new McpManager({ source: 'session' });
    try {
      await expect(
        m.add({ name: 'legacy', transport: { type: 'sse', url: sse.url, headers: { 'x-a3s-test': 'sse' } } }),
      ).resolves.toEqual({ toolCount: 2 });
      expect(sse.lastHeaders()['x-a3s-test']).toBe('sse');
      const tool = m.tools().find((t) => t.name === 'mcp__legacy__get_secret');
      await expect(tool?.execute({}, mcpToolContext())).resolves.toMatchObject({ output: 'sse-secret', exitCode: 0 });
      expect(m.status()[0]).toMatchObject({ transport: 'sse', connected: true });
      await expect(m.remove('legacy')).resolves.toBe(true);
      expect(await waitFor(() => sse.openSessions() === 0, 2_000)).toBe(true);
    } finally {
      await m.close();
      await sse.close();
    }
  });
});
