import { afterEach, describe, expect, it } from 'vitest';
import { layerMcpStatus, layerMcpTools } from '../../src/runtime/mcp/layered-mcp-tools.js';
import { McpManager } from '../../src/runtime/mcp/mcp-manager.js';
import { echoServerConfig, mcpToolContext } from './mcp-test-helpers.js';

const managers: McpManager[] = [];
function manager(source: 'global' | 'inherited' | 'session'): McpManager {
  const created = new McpManager({ source });
  managers.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

async function secretVia(layers: McpManager[]): Promise<string> {
  const tool = layerMcpTools(layers).find((t) => t.name === 'mcp__echo__get_secret');
  if (!tool) throw new Error('get_secret is not visible');
  return (await tool.execute({}, mcpToolContext())).output;
}

describe('layered MCP tools', () => {
  it('lets a session-local server shadow a global one of the same name, and reveals it again on removal', async () => {
    const global = manager('global');
    await global.add(echoServerConfig('echo', 'global-secret'));
    await global.add(echoServerConfig('other', 'other-secret'));
    const sessionA = manager('session');
    const sessionB = manager('session');

    expect(await secretVia([global, sessionA])).toBe('global-secret');
    await sessionA.add(echoServerConfig('echo', 'local-secret'));
    const names = layerMcpTools([global, sessionA]).map((t) => t.name);
    expect(names.filter((n) => n === 'mcp__echo__get_secret')).toHaveLength(1);
    expect(names).toContain('mcp__other__echo');
    expect(await secretVia([global, sessionA])).toBe('local-secret');
    // The sibling session and the global layer are untouched.
    expect(await secretVia([global, sessionB])).toBe('global-secret');
    expect(global.status().map((s) => s.name)).toEqual(['echo', 'other']);
    expect(layerMcpStatus([global, sessionA]).map((s) => `${s.source}:${s.name}`)).toEqual([
      'global:echo',
      'global:other',
      'session:echo',
    ]);

    await sessionA.remove('echo');
    expect(await secretVia([global, sessionA])).toBe('global-secret');
  });

  it('orders global < inherited < session, tool by tool', async () => {
    const global = manager('global');
    const inherited = manager('inherited');
    const session = manager('session');
    await global.add(echoServerConfig('echo', 'g'));
    await inherited.add(echoServerConfig('echo', 'i'));
    expect(await secretVia([global, inherited, session])).toBe('i');
    await session.add(echoServerConfig('echo', 's'));
    expect(await secretVia([global, inherited, session])).toBe('s');
    await session.remove('echo');
    expect(await secretVia([global, inherited, session])).toBe('i');
    expect(layerMcpTools([global, inherited, session])).toHaveLength(6);
  });
});
