import type { McpServer } from '@agentclientprotocol/sdk';
import type { McpServerConfigInput } from '../../protocol/mcp.js';

/**
 * The editor's MCP servers (session/new `mcpServers`) as our McpServerConfig entries, validated later by
 * SessionOptions like any other: stdio servers keep command, args and env (they need host_direct), http and
 * sse servers keep url and headers.
 */
export function acpMcpServers(servers: readonly McpServer[]): McpServerConfigInput[] {
  return servers.map((server) => {
    if ('type' in server && (server.type === 'http' || server.type === 'sse')) {
      const headers = Object.fromEntries(server.headers.map((h) => [h.name, h.value]));
      return {
        name: server.name,
        transport: { type: server.type, url: server.url, ...(server.headers.length > 0 ? { headers } : {}) },
      };
    }
    const stdio = server as Extract<McpServer, { command: string }>;
    const env = Object.fromEntries(stdio.env.map((e) => [e.name, e.value]));
    return {
      name: stdio.name,
      transport: { type: 'stdio', command: stdio.command, ...(stdio.args.length > 0 ? { args: stdio.args } : {}) },
      ...(stdio.env.length > 0 ? { env } : {}),
    };
  });
}
